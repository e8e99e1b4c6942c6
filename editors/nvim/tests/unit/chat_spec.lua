-- The transcript reads as a document: Markdown highlighting, one fold per
-- tool call, headed notes and folds, a code block yanked with one key.
local tb = require('reika.transcript_buffer')
local chat = require('reika.chat')

local function ev(kind, text, extra)
  return vim.tbl_extend(
    'force',
    { session = 's1', turn = 1, round = 1, kind = kind, text = text, delta = false },
    extra or {}
  )
end

-- conversation fills a view: a prompt, two tool calls with results, an
-- answer with a code block, a note and a fold.
local function conversation(v)
  v:apply(ev('user', 'fix it'))
  v:apply(ev('tool_call', 'read', { tool = 'read', args = { path = 'a.go' } }))
  v:apply(ev('tool_result', 'a.go lines 1-3\nline one\nline two', { tool = 'read' }))
  v:apply(ev('tool_call', 'grep', { round = 2, tool = 'grep', args = { pattern = 'x' } }))
  v:apply(ev('tool_result', 'no match', { round = 2, tool = 'grep' }))
  v:apply(ev('assistant', 'Here:\n\n```go\nfunc a() {}\nfunc b() {}\n```\n\nDone.', { round = 3 }))
  v:apply(ev('note', 'Established: a.go holds a.', { round = 4 }))
  v:apply(ev('fold', 'Folded 3 rounds into a 1.3k-token recap', { round = 4, tokens = 1300 }))
end

local function find(lines, s)
  for i, l in ipairs(lines) do
    if l == s then
      return i
    end
  end
end

t.describe('chat', function()
  t.it('gives a tool call and its result one fold', function()
    local k = { 'user', 'tool_call', 'tool_result', 'tool_result', 'tool_call', 'assistant' }
    local got = {}
    for i = 1, #k do
      got[i] = chat.fold_level(k, i)
    end
    t.eq({ '0', '>1', '1', '1', '>1', '0' }, got)
  end)

  t.it('folds each tool call closed in the transcript window', function()
    vim.cmd('silent! only')
    local v = tb.new('/w/chat1', {})
    conversation(v)
    local w = v:open('botright vsplit', false)
    t.eq('expr', vim.wo[w].foldmethod)
    local lines = vim.api.nvim_buf_get_lines(v.bufnr, 0, -1, false)
    local call1 = find(lines, '-> read path=a.go')
    local call2 = find(lines, '-> grep pattern=x')
    t.truthy(call1 and call2, vim.inspect(lines))
    t.eq(call1, vim.fn.foldclosed(call1 + 1), 'the result is in the call\'s fold')
    t.eq(call1 + 3, vim.fn.foldclosedend(call1), 'the fold ends with the result')
    t.eq(call2, vim.fn.foldclosed(call2), 'the second call has its own fold')
    t.eq(-1, vim.fn.foldclosed(find(lines, 'Done.')), 'the answer is not folded')
    t.eq(-1, vim.fn.foldclosed(1))
  end)

  t.it('heads notes and folds', function()
    local v = tb.new('/w/chat2', {})
    conversation(v)
    local lines = vim.api.nvim_buf_get_lines(v:buffer(), 0, -1, false)
    local note = find(lines, '### Note')
    t.truthy(note, vim.inspect(lines))
    t.eq('', lines[note - 1], 'a blank line before the heading')
    t.eq('Established: a.go holds a.', lines[note + 1])
    local fold = find(lines, '### Fold')
    t.eq('Folded 3 rounds into a 1.3k-token recap', lines[fold + 1])
  end)

  t.it('highlights Markdown with treesitter where Neovim has the parser, else syntax', function()
    local v = tb.new('/w/chat3', {})
    local b = v:buffer()
    if chat.has_treesitter() then
      t.eq('treesitter', v.highlighting)
      t.truthy(vim.treesitter.highlighter.active[b], 'the highlighter runs')
    else
      t.eq('syntax', v.highlighting)
      t.eq('markdown', vim.bo[b].syntax)
    end
    if vim.fn.has('nvim-0.10') == 1 then
      t.eq('treesitter', v.highlighting, 'Neovim 0.10 ships the markdown parser')
    end
  end)

  t.it('yanks the code block at the cursor with one key', function()
    vim.cmd('silent! only')
    local v = tb.new('/w/chat4', {})
    conversation(v)
    local w = v:open('botright vsplit', false)
    vim.wo[w].foldenable = false
    local lines = vim.api.nvim_buf_get_lines(v.bufnr, 0, -1, false)
    vim.api.nvim_win_set_cursor(w, { find(lines, 'Here:'), 0 })
    vim.fn.setreg('"', 'before')
    vim.cmd('normal gy')
    t.eq({ 'func a() {}', 'func b() {}' }, vim.fn.getreg('"', 1, true))
    t.eq('V', vim.fn.getregtype('"'))
    vim.api.nvim_win_set_cursor(w, { find(lines, 'func b() {}'), 0 })
    vim.cmd('normal "agy')
    t.eq('func a() {}\nfunc b() {}\n', vim.fn.getreg('a'))
  end)

  t.it('follows the stream past a closed tool-call fold at the end', function()
    vim.cmd('silent! only')
    local v = tb.new('/w/chat5', { follow = true })
    local w = v:open('botright vsplit', true)
    v:apply(ev('user', 'go'))
    v:apply(ev('tool_call', 'read', { tool = 'read', args = { path = 'a.go' } }))
    v:apply(ev('tool_result', 'a.go\nx\ny', { tool = 'read' }))
    -- The cursor on the closed fold at the end (as k or a click leaves it).
    local call = vim.api.nvim_buf_line_count(v.bufnr) - 3
    t.eq('-> read path=a.go', vim.api.nvim_buf_get_lines(v.bufnr, call - 1, call, false)[1])
    vim.api.nvim_win_set_cursor(w, { call, 0 })
    t.eq(call, vim.api.nvim_win_call(w, function()
      return vim.fn.foldclosed(call)
    end), 'the call is folded')
    v:apply(ev('assistant', 'The answer', { round = 2, delta = true }))
    v:apply(ev('assistant', ' streams.', { round = 2, delta = true }))
    local count = vim.api.nvim_buf_line_count(v.bufnr)
    t.eq('The answer streams.', vim.api.nvim_buf_get_lines(v.bufnr, count - 1, count, false)[1])
    t.eq(count, vim.api.nvim_win_get_cursor(w)[1], 'the window follows')
  end)

  t.it('finds code blocks, a streaming one too', function()
    local l = { 'a', '```', 'x', '```', 'b', '~~~lua', 'y', 'z' }
    t.eq({ { 3, 3 }, { 7, 8 } }, chat.code_blocks(l))
    t.eq({ 3, 3 }, chat.block_at(chat.code_blocks(l), 1))
    t.eq({ 7, 8 }, chat.block_at(chat.code_blocks(l), 5))
  end)
end)
