-- Edit approvals as a side-by-side diff (reika.diffview) against the real
-- reika-lsp and the fake engine (fixtures/diff-script.json): the edit's
-- approval opens the current and proposed text in a diff tab, answered
-- with a key on Neovim 0.9+; before 0.9 the answer is due at once, so the
-- list prompt asks while the diff tab shows.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

local reika = require('reika')
local client = require('reika.client')
local approval = require('reika.approval')
local async = vim.fn.has('nvim-0.9') == 1

local url, notes
local real_inputlist = approval.inputlist
local real_diff_answer = approval.diff_answer
local real_select = vim.ui.select

t.before_each(function()
  notes = H.capture_notify()
  url = H.fake_engine(t, 'diff-script.json')
end)

t.after_each(function()
  approval.inputlist = real_inputlist
  approval.diff_answer = real_diff_answer
  vim.ui.select = real_select
  H.stop_servers(t)
  vim.cmd('silent! tabonly')
  vim.cmd('silent! %bwipeout!')
end)

local function start(extra)
  local state = H.tmpdir()
  local root = H.workspace({ ['a.txt'] = { 'one', 'two', 'three' } })
  H.setup_real(state, url, extra)
  return root, H.open(t, root, 'a.txt', 60000)
end

-- shown is what the diff tab shows: each window's lines and 'diff'.
local function shown()
  local tab = vim.api.nvim_get_current_tabpage()
  local out = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local b = vim.api.nvim_win_get_buf(w)
    out[#out + 1] = {
      name = vim.api.nvim_buf_get_name(b):match('/(%a+)/a%.txt$'),
      lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
      diff = vim.wo[w].diff,
    }
  end
  return out
end

local want = {
  { name = 'current', lines = { 'one', 'two', 'three' }, diff = true },
  { name = 'proposed', lines = { 'one', 'TWO', 'and a half', 'three' }, diff = true },
}

-- answer runs a turn whose edit needs approval and answers it with key
-- (0.9+) or the list prompt's action (before). Returns the ask's result
-- and what the diff tab showed.
local function answer(key, action)
  local seen
  if not async then
    approval.inputlist = function(items)
      seen = shown()
      for _, it in ipairs(items) do
        if it.title == action then
          return it
        end
      end
    end
  end
  local done
  reika.ask({
    prompt = 'edit a.txt',
    on_done = function(r)
      done = r
    end,
  })
  if async then
    t.wait('the diff tab', function()
      return #vim.api.nvim_list_tabpages() == 2 and #shown() == 2
    end, 60000)
    seen = shown()
    vim.api.nvim_feedkeys(key, 'mx', false)
  end
  t.wait('the turn to end', function()
    return done ~= nil
  end, 60000)
  return done, seen
end

t.it('shows the edit as a diff and allows it with a', function()
  local root = start()
  local done, seen = answer('a', 'Allow')
  t.eq(want, seen)
  t.eq('done', done.status)
  t.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab closed')
  t.wait('the edit', function()
    return vim.deep_equal({ 'one', 'TWO', 'and a half', 'three' }, vim.fn.readfile(root .. '/a.txt'))
  end)
end)

t.it('denies the edit with d', function()
  local root = start()
  local done, seen = answer('d', 'Deny')
  t.eq(want, seen)
  t.eq('done', done.status)
  t.eq({ 'one', 'two', 'three' }, vim.fn.readfile(root .. '/a.txt'))
  t.truthy(H.has_line(H.transcript(root), 'denied by the user'), vim.inspect(H.transcript(root)))
end)

t.it('denies the edit with q', function()
  local root = start()
  local done, seen = answer('q', 'Deny')
  t.eq(want, seen)
  t.eq('done', done.status)
  t.eq({ 'one', 'two', 'three' }, vim.fn.readfile(root .. '/a.txt'))
  t.truthy(H.has_line(H.transcript(root), 'denied by the user'), vim.inspect(H.transcript(root)))
end)

-- edited is the edit of the fixture applied to a.txt.
local edited = { 'one', 'TWO', 'and a half', 'three' }

t.it('allows this and the later edits of the session with s', function()
  local root = start()
  local buf = vim.fn.bufnr(root .. '/a.txt')
  local done = answer('s', 'Allow for this session')
  t.eq('done', done.status)
  t.wait('the edit', function()
    return vim.deep_equal(edited, vim.fn.readfile(root .. '/a.txt'))
  end)
  -- The same edit again, in the next turn: the server does not ask.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'one', 'two', 'three' })
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  local asked = 0
  approval.diff_answer = function(...)
    asked = asked + 1
    return real_diff_answer(...)
  end
  local again = H.ask(t, 'edit a.txt again', 60000)
  t.eq('done', again.result.status, vim.inspect(again))
  t.eq(0, asked, 'no approval asked')
  t.eq(edited, vim.fn.readfile(root .. '/a.txt'), vim.inspect(H.transcript(root)))
end)

-- diff_buffers are the diff tab's scratch buffers still there.
local function diff_buffers()
  return vim.tbl_filter(function(b)
    return vim.api.nvim_buf_get_name(b):match('^reika://diff/') ~= nil
  end, vim.api.nvim_list_bufs())
end

t.it('closes the diff tab when the turn is cancelled while it asks', function()
  local root = start()
  local done, late
  if not async then
    -- The list prompt asks while the tab shows; the key pressed after
    -- the cancel (Allow) answers a request that is gone.
    approval.inputlist = function(items)
      require('reika').cancel()
      t.wait('the diff tab to close', function()
        return #vim.api.nvim_list_tabpages() == 1
      end, 60000)
      late = items[1]
      return late
    end
  end
  reika.ask({
    prompt = 'edit a.txt',
    on_done = function(r, err)
      done = r or { err = err }
    end,
  })
  if async then
    t.wait('the diff tab', function()
      return #vim.api.nvim_list_tabpages() == 2
    end, 60000)
    require('reika').cancel()
    t.wait('the diff tab to close', function()
      return #vim.api.nvim_list_tabpages() == 1
    end, 60000)
  else
    t.wait('the list prompt', function()
      return late ~= nil
    end, 60000)
  end
  t.eq({}, diff_buffers())
  t.wait('the turn to end', function()
    return done ~= nil
  end, 60000)
  t.eq('cancelled', done.status, vim.inspect(done))
  -- The server gave the approval up with $/cancelRequest, before the
  -- ask's answer.
  t.eq(1, H.count(notes, 'approval withdrawn'), vim.inspect(notes))
  local line = '^reika: approval withdrawn %(cancelled by reika%-lsp%): edit a%.txt %(1 hunk%)$'
  t.truthy(H.find(notes, line), vim.inspect(notes))
  t.eq({ 'one', 'two', 'three' }, vim.fn.readfile(root .. '/a.txt'))
end)

-- Killed, the server says nothing: the plugin sees it exit.
t.it('closes the diff tab when reika-lsp dies while it asks', function()
  local _, c = start()
  local pid = H.server_pid(t, c)
  local killed = false
  local function kill()
    t.eq(0, (vim.loop.kill(pid, 9)), 'kill ' .. pid)
    t.wait('the diff tab to close', function()
      return #vim.api.nvim_list_tabpages() == 1
    end, 60000)
    killed = true
  end
  if not async then
    approval.inputlist = function(items)
      kill()
      return items[1]
    end
  end
  reika.ask({ prompt = 'edit a.txt' })
  if async then
    t.wait('the diff tab', function()
      return #vim.api.nvim_list_tabpages() == 2
    end, 60000)
    kill()
  end
  t.wait('the kill', function()
    return killed
  end, 60000)
  t.eq({}, diff_buffers())
  t.eq(1, H.count(notes, 'approval withdrawn'), vim.inspect(notes))
  local line = '^reika: approval withdrawn %(reika%-lsp stopped%): edit a%.txt'
  t.truthy(H.find(notes, line), vim.inspect(notes))
  t.eq(0, H.count(notes, 'approval:'), 'no error answering')
end)

t.it('withdraws a list prompt whose picker has not answered when the turn is cancelled', function()
  if not async then
    t.skip('Neovim before 0.9 needs the answer at once: the built-in prompt blocks until then')
  end
  local root = start({ diff_approvals = false })
  local later -- the picker's callback, kept as a picker plugin keeps it
  vim.ui.select = function(items, _, on_choice)
    later = function()
      on_choice(items[1]) -- Allow, picked after the withdrawal
    end
  end
  local done
  reika.ask({
    prompt = 'edit a.txt',
    on_done = function(r, err)
      done = r or { err = err }
    end,
  })
  t.wait('the list prompt', function()
    return later ~= nil
  end, 60000)
  require('reika').cancel()
  t.wait('the turn to end', function()
    return done ~= nil
  end, 60000)
  t.eq('cancelled', done.status, vim.inspect(done))
  t.wait('the withdrawal said', function()
    return H.find(notes, '^reika: approval withdrawn %(') ~= nil
  end, 30000)
  t.truthy(H.find(notes, '^reika: approval withdrawn %(cancelled by reika%-lsp%): edit a%.txt'), vim.inspect(notes))
  later()
  vim.wait(200)
  t.eq(1, H.count(notes, 'approval withdrawn'), vim.inspect(notes))
  t.eq({ 'one', 'two', 'three' }, vim.fn.readfile(root .. '/a.txt'))
end)
