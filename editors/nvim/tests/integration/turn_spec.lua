-- Issue 8's scenario end to end: the real reika-lsp ($REIKA_LSP_BIN) against
-- the standalone fake engine ($REIKA_TEST_FAKEENGINE, window 16000, replies
-- from fixtures/engine-script.json): a turn that reads two files until the
-- window sheds, Compact context through the code action, save, cancel and a
-- new session. What is checked here beyond tests/scenario.lua is what the
-- real server sends (lsp/lsptest/scenario shows the same from the server's
-- side).
local S = require('scenario')
local H = require('helpers')
local compat = require('reika.compat')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

-- filler makes n numbered lines of prose-like text.
local function filler(name, n)
  local lines = {}
  for i = 1, n do
    lines[i] =
      string.format('%s line %d: the quick brown fox jumps over the lazy dog again.', name, i)
  end
  return lines
end

-- The window is 16000 tokens with the default 2048 reserved: the shed
-- point is 12556 (docs/design.md §3.2), printed as 13k.
local chip_pattern = '^ctx [%d.]+k?/16k %(%d+%% of 13k%)$'

-- watch_progress records the plugin's progress text at every $/progress.
local function watch_progress()
  local seen = {}
  local ev = compat.progress_event()
  vim.api.nvim_create_autocmd(ev.event, {
    pattern = ev.pattern,
    callback = function()
      -- The plugin's own autocmd (set up earlier) has run.
      local p = require('reika').progress()
      if p ~= '' and seen[#seen] ~= p then
        seen[#seen + 1] = p
      end
    end,
  })
  return seen
end

t.it('asks, fills the window, compacts, saves, cancels, starts anew', function()
  local url = H.fake_engine(t, 'engine-script.json')
  local state = H.tmpdir()
  local progress = watch_progress()
  local run = S.run(t, {
    cmd = { os.getenv('REIKA_LSP_BIN') },
    cmd_env = {
      XDG_STATE_HOME = state .. '/state',
      XDG_CONFIG_HOME = state .. '/config',
      REIKA_DEBUG = '1',
    },
    settings = { baseUrl = url },
    files = {
      ['main.txt'] = { 'A small project for the test.' },
      -- By the engine's count: the first read (about 23 KB) takes the
      -- window past 80% of the shed point, the second (7 KB) past the shed
      -- point but not the usable window, and the first is shed.
      ['notes/one.txt'] = filler('one', 375),
      ['notes/two.txt'] = filler('two', 110),
    },
    file = 'main.txt',
    prompt = 'Read notes/one.txt and notes/two.txt and tell me what they hold.',
    timeout = 120000,
  })
  local root, history, notes = run.root, run.history, run.notes
  local reika = require('reika')

  -- Every chip the server sent is the window's, or what it sends before
  -- the engine has answered: the placeholder while the agent starts, then
  -- the fixed prefix's size with no window; while the turn ran the
  -- statusline showed it after the busy sign.
  local discovered, spun = nil, false
  local frames = reika.options().spinner
  for _, h in ipairs(history) do
    local starting = h.status.text == 'ctx –'
      or (h.status.windowSource == 'none' and h.status.text:match('^ctx [%d.]+k?$') ~= nil)
    if not starting then
      t.matches(chip_pattern, h.status.text, 'the chip')
    end
    if h.busy then
      local sign, rest = h.text:match('^(%S+) (.*)$')
      t.truthy(vim.tbl_contains(frames, sign), 'a spinner frame before the chip: ' .. h.text)
      t.eq(h.status.text, rest, 'the chip after the busy sign')
      spun = true
    else
      t.eq(h.status.text, h.text, 'no busy sign when idle')
    end
    if h.status.windowSource == 'endpoint' and not discovered then
      discovered = h.status
    end
  end
  t.truthy(spun, 'the busy sign showed')
  t.truthy(discovered, 'a status with the window from the endpoint: ' .. vim.inspect(history))
  t.eq(16000, discovered.window, 'the window')
  t.eq(12556, discovered.shedPoint, 'the shed point')
  t.eq('fake-coder', discovered.model, 'the model')

  -- The transcript: both reads, the shed, the answer.
  local lines = H.transcript(root)
  for _, pattern in ipairs({
    '^%-> read path=notes/one%.txt$',
    '^<%- read: notes/one%.txt lines 1%-375 of 375 ',
    '^%-> read path=notes/two%.txt$',
    '^<%- read: notes/two%.txt lines 1%-110 of 110 ',
    '^Shed 1 old result',
    '^Both files hold numbered filler lines%.',
  }) do
    t.truthy(H.has_line(lines, pattern), pattern .. ' in ' .. vim.inspect(lines))
  end

  -- Progress: a report per round, on the ask's token, without the chip
  -- the server ends it with (the statusline shows that); none once it
  -- ended.
  t.truthy(
    H.has_line(progress, '^Reika: round %d+ · read notes/two%.txt$'),
    'a round report in ' .. vim.inspect(progress)
  )
  t.falsy(H.has_line(progress, 'ctx '), 'no chip in ' .. vim.inspect(progress))
  t.eq('', reika.progress(), 'no progress after the turn')

  -- Compact folded: the window shrank back below the warning. (The
  -- server sends the status before it answers reika.compact.)
  local before = history[run.compact_at].status
  local now = history[#history].status
  t.truthy(#history > run.compact_at, 'a status after the fold')
  t.truthy(now.size < before.size, string.format('the size fell: %d -> %d', before.size, now.size))
  t.eq('ok', now.level, 'the level after the fold')

  -- Save keeps the whole conversation, the shed read included.
  local saved
  reika.save({
    path = root .. '/conversation.md',
    on_done = function(result, err)
      saved = { result = result, err = err }
    end,
  })
  t.wait('reika.save', function()
    return saved ~= nil
  end, 20000)
  t.eq(nil, saved.err, 'reika.save answered')
  t.eq(root .. '/conversation.md', saved.result.path)
  local md = table.concat(vim.fn.readfile(saved.result.path), '\n')
  t.truthy(md:find('## Turn 1', 1, true), 'a turn heading in the saved conversation')
  for _, l in ipairs({ 'one line 90:', 'two line 90:' }) do
    t.truthy(md:find(l, 1, true), l .. ' in the saved conversation')
  end
  t.truthy(H.find(notes, '^reika: saved the conversation to '), 'save said where')

  -- Cancel: the engine holds its answer to a [hold] prompt until the
  -- server goes away from it.
  local session = reika.status().session
  local asked
  reika.ask({
    prompt = '[hold] wait for me',
    on_done = function(result, err)
      asked = { result = result, err = err }
    end,
  })
  local n = #history
  t.wait('the held turn to start', function()
    for i = n + 1, #history do
      if history[i].busy then
        return true
      end
    end
    return false
  end, 20000)
  vim.cmd('ReikaCancel')
  t.wait('the held ask to answer', function()
    return asked ~= nil
  end, 20000)
  t.eq(nil, asked.err, 'the ask answered, not failed')
  t.eq('cancelled', asked.result.status, 'the ask result')
  t.truthy(H.find(notes, '^reika: turn cancelled$'), 'the user was told')
  t.wait('the status to say idle', function()
    return history[#history].busy == false
  end, 20000)

  -- A new session.
  local fresh
  reika.new_session({
    on_done = function(result, err)
      fresh = { result = result, err = err }
    end,
  })
  t.wait('reika.newSession', function()
    return fresh ~= nil
  end, 20000)
  t.eq(nil, fresh.err)
  t.truthy(type(fresh.result.session) == 'string' and fresh.result.session ~= '', 'a session id')
  t.neq(session, fresh.result.session, 'a new session id')

  local errors = vim.tbl_filter(function(x)
    return x.level == vim.log.levels.ERROR
  end, notes)
  t.eq({}, errors, 'no errors shown')
end)
