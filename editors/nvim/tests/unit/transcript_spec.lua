local transcript = require('reika.transcript')

-- apply_all feeds events and checks every edit against a plain list of
-- lines, as a buffer would receive them.
local function apply_all(tr, events, mirror)
  for _, ev in ipairs(events) do
    for _, e in ipairs(tr:apply(ev)) do
      local new = {}
      for i = 1, e.first do
        new[#new + 1] = mirror[i]
      end
      vim.list_extend(new, e.lines)
      for i = e.last + 1, #mirror do
        new[#new + 1] = mirror[i]
      end
      for i = #mirror, 1, -1 do
        mirror[i] = nil
      end
      vim.list_extend(mirror, new)
    end
  end
  t.eq(tr:get_lines(), mirror, 'edits rebuild the model')
  t.eq(#mirror, #tr:get_kinds(), 'one kind per line')
  return mirror
end

local function ev(kind, text, extra)
  return vim.tbl_extend(
    'force',
    { session = 's1', turn = 1, round = 1, kind = kind, text = text, delta = false },
    extra or {}
  )
end

t.describe('transcript.format_event', function()
  t.it('renders a user prompt under a turn header', function()
    t.eq(
      { '', '--- turn 2 ---', '> fix the bug', '> in a.go' },
      transcript.format_event(ev('user', 'fix the bug\nin a.go', { turn = 2 }))
    )
  end)
  t.it('renders tool calls with their arguments', function()
    t.eq(
      { '-> read path=src/a.go start_line=10' },
      transcript.format_event(
        ev('tool_call', '', { tool = 'read', args = { path = 'src/a.go', start_line = 10 } })
      )
    )
    t.eq(
      { '-> bash command="go test ./..."' },
      transcript.format_event(
        ev('tool_call', '', { tool = 'bash', args = { command = 'go test ./...' } })
      )
    )
    t.eq(
      { [[-> write content="line one\nsaid \"hi\" \\ done\n" path=a.txt]] },
      transcript.format_event(ev('tool_call', '', {
        tool = 'write',
        args = { path = 'a.txt', content = 'line one\nsaid "hi" \\ done\n' },
      }))
    )
    t.eq(
      { '-> grep {"pattern":"x"}' },
      transcript.format_event(ev('tool_call', '{"pattern":"x"}', { tool = 'grep' }))
    )
  end)
  t.it('shortens long argument values', function()
    local line = transcript.format_event(
      ev('tool_call', '', { tool = 'write', args = { content = string.rep('x', 200) } })
    )[1]
    t.truthy(vim.fn.strchars(line) < 80, 'short line: ' .. line)
    t.matches('…', line)
  end)
  t.it('renders a tool result as a head line and a few lines', function()
    local text = 'a.go lines 1-5 of 5\n1\tpackage a\n2\n3\tfunc A() {}\n4\t}\n5'
    t.eq(
      {
        '<- read: a.go lines 1-5 of 5 (1.2k tokens)',
        '   1\tpackage a',
        '   2',
        '   3\tfunc A() {}',
        '   … 2 more lines',
      },
      transcript.format_event(
        ev('tool_result', text, { tool = 'read', tokens = 1234 }),
        { result_lines = 3 }
      )
    )
    t.eq(
      { '<- read: a.go lines 1-5 of 5', '   … 5 more lines' },
      transcript.format_event(ev('tool_result', text, { tool = 'read' }), { result_lines = 0 })
    )
  end)
  t.it('heads notes, sheds and folds, and tags info and errors', function()
    t.eq(
      { '', '### Note', 'Established: x', 'and y' },
      transcript.format_event(ev('note', 'Established: x\nand y'))
    )
    t.eq(
      { '', '### Shed', '3 results (4.1k tokens)' },
      transcript.format_event(ev('shed', '3 results', { tokens = 4100 }))
    )
    t.eq(
      { '', '### Fold', 'Folded 12 rounds into a 1.3k-token recap' },
      transcript.format_event(
        ev('fold', 'Folded 12 rounds into a 1.3k-token recap', { tokens = 1300 })
      )
    )
    t.eq(
      { '', '### Fold', 'recap (1.3k tokens)' },
      transcript.format_event(ev('fold', 'recap', { tokens = 1300 }))
    )
    t.eq(
      { '[error] engine unreachable' },
      transcript.format_event(ev('error', 'engine unreachable'))
    )
    t.eq({ '[info] Turn cancelled' }, transcript.format_event(ev('info', 'Turn cancelled')))
  end)
  t.it('quotes reasoning', function()
    t.eq({ '| first', '| second' }, transcript.format_event(ev('reasoning', 'first\nsecond')))
  end)
end)

t.describe('transcript.apply', function()
  t.it('starts with a session header and adds events in order', function()
    local tr = transcript.new()
    local lines = apply_all(tr, {
      ev('user', 'hello'),
      ev('assistant', 'Hi.'),
    }, {})
    t.eq({ '=== session s1 ===', '', '--- turn 1 ---', '> hello', 'Hi.' }, lines)
    t.eq({ 'session', 'user', 'user', 'user', 'assistant' }, tr:get_kinds())
  end)

  t.it('grows a streamed message and replaces it with the final one', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, { ev('user', 'q') }, {})
    apply_all(tr, { ev('assistant', 'Let me ', { delta = true }) }, mirror)
    t.eq('Let me ', mirror[#mirror])
    apply_all(tr, { ev('assistant', 'read\nthe ', { delta = true }) }, mirror)
    t.eq({ 'Let me read', 'the ' }, { mirror[#mirror - 1], mirror[#mirror] })
    apply_all(tr, { ev('assistant', 'Let me read the file.') }, mirror)
    t.eq('Let me read the file.', mirror[#mirror])
    t.eq('> q', mirror[#mirror - 1], 'the streamed lines are gone')
    -- A later delta of the same round starts a new block (the old one is closed).
    apply_all(tr, {
      ev('tool_call', '', { tool = 'read', args = { path = 'a' } }),
      ev('assistant', 'More', { round = 2, delta = true }),
    }, mirror)
    t.eq(
      { 'Let me read the file.', '-> read path=a', 'More' },
      { mirror[#mirror - 2], mirror[#mirror - 1], mirror[#mirror] }
    )
  end)

  t.it('updates a stream that is not the last block and moves the blocks after it', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, {
      ev('reasoning', 'thinking', { delta = true }),
      ev('assistant', 'Answer', { delta = true }),
      ev('reasoning', ' harder\nstill', { delta = true }),
    }, {})
    t.eq({ '=== session s1 ===', '| thinking harder', '| still', 'Answer' }, mirror)
    apply_all(
      tr,
      { ev('assistant', ' done', { delta = true }), ev('reasoning', 'thought') },
      mirror
    )
    t.eq({ '=== session s1 ===', '| thought', 'Answer done' }, mirror)
    apply_all(tr, { ev('assistant', 'Answer: done.') }, mirror)
    t.eq({ '=== session s1 ===', '| thought', 'Answer: done.' }, mirror)
  end)

  t.it('streams across chunk boundaries and touches only the last lines', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, { ev('assistant', 'one\n', { delta = true }) }, {})
    t.eq({ '=== session s1 ===', 'one', '' }, mirror, 'a new line is started')
    apply_all(tr, {
      ev('assistant', 'two', { delta = true }),
      ev('assistant', '\n', { delta = true }),
      ev('assistant', '\r\nthree', { delta = true }),
    }, mirror)
    t.eq({ '=== session s1 ===', 'one', 'two', '', 'three' }, mirror)
    local edits = tr:apply(ev('assistant', ' and more', { delta = true }))
    t.eq(1, #edits)
    t.eq({ first = 4, last = 5, lines = { 'three and more' }, kinds = { 'assistant' } }, edits[1])
    apply_all(tr, { ev('assistant', 'one\ntwo\n\nthree and more\n') }, mirror)
    t.eq(
      { '=== session s1 ===', 'one', 'two', '', 'three and more' },
      mirror,
      'the final text, trailing newline dropped'
    )
  end)

  t.it('adds a final message without deltas, and skips an empty one', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, { ev('assistant', ''), ev('assistant', 'x', { round = 2 }) }, {})
    t.eq({ '=== session s1 ===', 'x' }, mirror)
  end)

  t.it('marks a new session', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, { ev('user', 'a'), ev('user', 'b', { session = 's2' }) }, {})
    t.contains(mirror, '=== session s2 ===')
    t.eq(
      { '', '=== session s2 ===' },
      { mirror[#mirror - 4], mirror[#mirror - 3] },
      'a blank line before the new session'
    )
  end)

  t.it('keeps the fold line of a compaction', function()
    local tr = transcript.new()
    local mirror = apply_all(tr, {
      ev('user', 'q'),
      ev('note', 'Established: the parser is in p.go', { round = 0 }),
      ev('fold', 'Folded 3 rounds into a 1.3k-token recap', { round = 0, tokens = 1300 }),
    }, {})
    t.eq(
      { '### Note', 'Established: the parser is in p.go' },
      { mirror[#mirror - 4], mirror[#mirror - 3] }
    )
    t.eq({ '### Fold', 'Folded 3 rounds into a 1.3k-token recap' }, { mirror[#mirror - 1], mirror[#mirror] })
  end)

  t.it('ignores events without a kind', function()
    local tr = transcript.new()
    t.eq({}, tr:apply({ text = 'x' }))
    t.eq({}, tr:apply('x'))
    t.eq({}, tr:get_lines())
  end)
end)
