-- workspace/applyEdit from the server, against the LSP double (its
-- [applyedit] prompt sends the edit): Neovim's handler applies it, then the
-- plugin saves each document that had no unsaved changes before the edit
-- and tells the user once about those that had.
local H = require('helpers')

local double = os.getenv('REIKA_TEST_DOUBLE')
local reika = require('reika')
local levels = vim.log.levels

local notes

t.before_each(function()
  notes = H.capture_notify()
end)

-- fresh opens a new workspace holding files; returns root.
local function fresh(files)
  reika.setup({ cmd = { double } })
  files = vim.tbl_extend('force', { ['main.txt'] = { 'main' } }, files or {})
  local root = H.workspace(files)
  H.open(t, root, 'main.txt')
  return root
end

-- open opens a file of root in a buffer (attached to the server).
local function open(root, name)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. name))
  return vim.api.nvim_get_current_buf()
end

-- replace is a TextEdit replacing the first line of a file.
local function replace(line, text)
  return {
    range = {
      start = { line = 0, character = 0 },
      ['end'] = { line = 0, character = #line },
    },
    newText = text,
  }
end

local function uri(root, name)
  return vim.uri_from_fname(root .. '/' .. name)
end

-- apply has the double send edit with workspace/applyEdit during a turn
-- and returns the answer Neovim gave, as the double recorded it.
local function apply(root, edit)
  local done
  reika.ask({
    prompt = '[applyedit]' .. vim.json.encode(edit),
    on_done = function(r, e)
      done = { result = r, err = e }
    end,
  })
  t.wait('the turn to end', function()
    return done ~= nil
  end)
  t.eq(nil, done.err)
  local line = H.has_line(H.transcript(root), '^%[info%] applyEdit: ')
  t.truthy(line, 'the double recorded the answer')
  -- The transcript keeps every turn's line: take the last.
  local last
  for _, l in ipairs(H.transcript(root)) do
    if l:find('^%[info%] applyEdit: ') then
      last = l
    end
  end
  return vim.json.decode(last:match('^%[info%] applyEdit: (.*)$'))
end

local function disk(root, name)
  return vim.fn.readfile(root .. '/' .. name)
end

local function unsaved_notes()
  return vim.tbl_filter(function(n)
    return n.msg:find('unsaved changes', 1, true) ~= nil
  end, notes)
end

t.it('saves an edited buffer that had no unsaved changes', function()
  local root = fresh({ ['a.txt'] = { 'alpha', 'two' } })
  local buf = open(root, 'a.txt')
  local answer = apply(root, { changes = { [uri(root, 'a.txt')] = { replace('alpha', 'ALPHA') } } })
  t.eq(true, answer.applied)
  t.eq({ 'ALPHA', 'two' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  t.eq({ 'ALPHA', 'two' }, disk(root, 'a.txt'), 'the file on disk')
  t.eq(false, vim.bo[buf].modified, 'the buffer is saved')
  t.eq({}, unsaved_notes())
end)

t.it('saves a versioned edit (documentChanges) the same way', function()
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  local buf = open(root, 'a.txt')
  local answer = apply(root, {
    documentChanges = {
      {
        textDocument = { uri = uri(root, 'a.txt'), version = vim.NIL },
        edits = { replace('alpha', 'A') },
      },
    },
  })
  t.eq(true, answer.applied)
  t.eq({ 'A' }, disk(root, 'a.txt'))
  t.eq(false, vim.bo[buf].modified)
end)

t.it('saves a file the edit loaded', function()
  local root = fresh({ ['closed.txt'] = { 'closed' } })
  t.eq(-1, vim.fn.bufnr(root .. '/closed.txt'), 'no buffer before')
  local answer = apply(root, {
    changes = { [uri(root, 'closed.txt')] = { replace('closed', 'edited') } },
  })
  t.eq(true, answer.applied)
  t.eq({ 'edited' }, disk(root, 'closed.txt'))
  local buf = vim.fn.bufnr(root .. '/closed.txt')
  t.truthy(buf > 0, 'the edit loaded a buffer')
  t.eq(false, vim.bo[buf].modified, 'and saved it')
end)

t.it('leaves a buffer with unsaved changes unsaved and says so once', function()
  local root = fresh({ ['b.txt'] = { 'beta', 'gamma' } })
  local buf = open(root, 'b.txt')
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'mine' })
  local answer = apply(root, { changes = { [uri(root, 'b.txt')] = { replace('beta', 'BETA') } } })
  t.eq(true, answer.applied)
  t.eq({ 'BETA', 'gamma', 'mine' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  t.eq(true, vim.bo[buf].modified, 'still unsaved')
  t.eq({ 'beta', 'gamma' }, disk(root, 'b.txt'), 'the user’s change was not written')
  local told = unsaved_notes()
  t.eq(1, #told, vim.inspect(notes))
  t.eq(levels.WARN, told[1].level)
  t.matches(
    '^reika: the agent edited .*b%.txt, which has unsaved changes: '
      .. 'save it so commands see the edit$',
    told[1].msg
  )

  -- Another edit while it stays unsaved: not told again.
  apply(root, { changes = { [uri(root, 'b.txt')] = { replace('BETA', 'Beta') } } })
  t.eq('Beta', vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
  t.eq(1, #unsaved_notes(), 'told once')

  -- Written, changed again and edited: told again.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'more' })
  apply(root, { changes = { [uri(root, 'b.txt')] = { replace('Beta', 'b') } } })
  t.eq(2, #unsaved_notes(), 'told again after a save: ' .. vim.inspect(notes))
  t.eq({ 'Beta', 'gamma', 'mine' }, disk(root, 'b.txt'))
end)

t.it('saves the clean documents of an edit and names the others in one message', function()
  local root = fresh({ ['a.txt'] = { 'a' }, ['b.txt'] = { 'b' }, ['c.txt'] = { 'c' } })
  local a = open(root, 'a.txt')
  local b = open(root, 'b.txt')
  local c = open(root, 'c.txt')
  vim.api.nvim_buf_set_lines(b, -1, -1, false, { 'mine' })
  vim.api.nvim_buf_set_lines(c, -1, -1, false, { 'mine' })
  apply(root, {
    changes = {
      [uri(root, 'a.txt')] = { replace('a', 'A') },
      [uri(root, 'b.txt')] = { replace('b', 'B') },
      [uri(root, 'c.txt')] = { replace('c', 'C') },
    },
  })
  t.eq({ 'A' }, disk(root, 'a.txt'))
  t.eq(false, vim.bo[a].modified)
  t.eq({ 'b' }, disk(root, 'b.txt'))
  t.eq({ 'c' }, disk(root, 'c.txt'))
  local told = unsaved_notes()
  t.eq(1, #told, vim.inspect(notes))
  t.matches('edited .*b%.txt and .*c%.txt, which have unsaved changes: save them', told[1].msg)
end)

t.it('saves nothing when the edit was not applied', function()
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  open(root, 'a.txt')
  local answer = apply(root, {
    documentChanges = {
      {
        textDocument = { uri = uri(root, 'a.txt'), version = vim.NIL },
        edits = { replace('alpha', 'A') },
      },
      { kind = 'no-such-operation', uri = uri(root, 'x.txt') },
    },
  })
  t.eq(false, answer.applied, vim.inspect(answer))
  t.eq({ 'alpha' }, disk(root, 'a.txt'), 'not saved')
end)

t.it('says when saving fails', function()
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  local buf = open(root, 'a.txt')
  vim.bo[buf].readonly = true
  local answer = apply(root, { changes = { [uri(root, 'a.txt')] = { replace('alpha', 'A') } } })
  t.eq(true, answer.applied)
  t.eq({ 'alpha' }, disk(root, 'a.txt'))
  local n = H.find(
    notes,
    '^reika: the agent edited .*a%.txt, but saving it failed %(.*%): commands do not see the edit$'
  )
  t.truthy(n, vim.inspect(notes))
  t.eq(levels.WARN, n.level)
end)
