-- workspace/applyEdit from the server, against reika-lsp's server over a
-- scripted agent (its [edit] prompt reads a file through the server, as the
-- agent's edit tool does, and writes it back through the editor): Neovim's
-- handler applies the edit, then the plugin saves each document that had
-- no unsaved changes before the edit and tells the user once about those
-- that had.
local H = require('helpers')

local server = H.need(t, 'REIKA_TEST_SCRIPTED')
if not server then
  return
end
local reika = require('reika')
local levels = vim.log.levels

local notes
local make_caps = vim.lsp.protocol.make_client_capabilities

t.before_each(function()
  notes = H.capture_notify()
end)

t.after_each(function()
  vim.lsp.protocol.make_client_capabilities = make_caps
end)

-- fresh opens a new workspace holding files; returns root.
local function fresh(files)
  reika.setup({ cmd = { server } })
  files = vim.tbl_extend('force', { ['main.txt'] = { 'main' } }, files or {})
  local root = H.workspace(files)
  H.agent_ready(t, H.open(t, root, 'main.txt'))
  return root
end

-- open opens a file of root in a buffer (attached to the server).
local function open(root, name)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. name))
  return vim.api.nvim_get_current_buf()
end

-- edit has the agent replace, in each file named, the first old with new
-- during a turn ({ { 'a.txt', 'old', 'new' }, ... }), and returns what it
-- said of each: 'applied', or 'not applied: ' and the server's error.
local function edit(root, edits)
  local list = {}
  for i, e in ipairs(edits) do
    list[i] = { path = e[1], old = e[2], new = e[3] }
  end
  local before = #H.transcript(root)
  local done
  reika.ask({
    prompt = '[edit]' .. vim.json.encode(list),
    on_done = function(r, e)
      done = { result = r, err = e }
    end,
  })
  t.wait('the turn to end', function()
    return done ~= nil
  end)
  t.eq(nil, done.err)
  local said = {}
  for i, l in ipairs(H.transcript(root)) do
    local what = i > before and l:match('^%[info%] edit [^:]+: (.*)$')
    if what then
      said[#said + 1] = what
    end
  end
  t.eq(#edits, #said, 'what the agent said of each edit: ' .. vim.inspect(H.transcript(root)))
  return said
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
  t.eq({ 'applied' }, edit(root, { { 'a.txt', 'alpha', 'ALPHA' } }))
  t.eq({ 'ALPHA', 'two' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  t.eq({ 'ALPHA', 'two' }, disk(root, 'a.txt'), 'the file on disk')
  t.eq(false, vim.bo[buf].modified, 'the buffer is saved')
  t.eq({}, unsaved_notes())
end)

t.it('saves a versioned edit (documentChanges) the same way', function()
  -- Neovim does not advertise documentChanges; with a configuration that
  -- does, the server sends the buffer's version with the edit.
  vim.lsp.protocol.make_client_capabilities = function()
    local caps = make_caps()
    caps.workspace.workspaceEdit.documentChanges = true
    return caps
  end
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  local buf = open(root, 'a.txt')
  local handler, sent = vim.lsp.handlers['workspace/applyEdit'], nil
  vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx, config)
    sent = params.edit
    return handler(err, params, ctx, config)
  end
  local said = edit(root, { { 'a.txt', 'alpha', 'A' } })
  vim.lsp.handlers['workspace/applyEdit'] = handler
  t.eq({ 'applied' }, said)
  local change = sent and sent.documentChanges and sent.documentChanges[1]
  t.eq('number', type(change and change.textDocument.version), vim.inspect(sent))
  t.eq({ 'A' }, disk(root, 'a.txt'))
  t.eq(false, vim.bo[buf].modified)
end)

t.it('saves a file the edit loaded', function()
  local root = fresh({ ['closed.txt'] = { 'closed' } })
  t.eq(-1, vim.fn.bufnr(root .. '/closed.txt'), 'no buffer before')
  t.eq({ 'applied' }, edit(root, { { 'closed.txt', 'closed', 'edited' } }))
  t.eq({ 'edited' }, disk(root, 'closed.txt'))
  local buf = vim.fn.bufnr(root .. '/closed.txt')
  t.truthy(buf > 0, 'the edit loaded a buffer')
  t.eq(false, vim.bo[buf].modified, 'and saved it')
end)

t.it('leaves a buffer with unsaved changes unsaved and says so once', function()
  local root = fresh({ ['b.txt'] = { 'beta', 'gamma' } })
  local buf = open(root, 'b.txt')
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'mine' })
  t.eq({ 'applied' }, edit(root, { { 'b.txt', 'beta', 'BETA' } }))
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
  edit(root, { { 'b.txt', 'BETA', 'Beta' } })
  t.eq('Beta', vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
  t.eq(1, #unsaved_notes(), 'told once')

  -- Written, changed again and edited: told again.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'more' })
  edit(root, { { 'b.txt', 'Beta', 'b' } })
  t.eq(2, #unsaved_notes(), 'told again after a save: ' .. vim.inspect(notes))
  t.eq({ 'Beta', 'gamma', 'mine' }, disk(root, 'b.txt'))
end)

t.it('saves the clean documents the agent edits and names each of the others', function()
  -- The server edits one file per workspace/applyEdit; one edit naming
  -- several documents is unit/edits_spec.lua's.
  local root = fresh({ ['a.txt'] = { 'a' }, ['b.txt'] = { 'b' }, ['c.txt'] = { 'c' } })
  local a = open(root, 'a.txt')
  local b = open(root, 'b.txt')
  local c = open(root, 'c.txt')
  vim.api.nvim_buf_set_lines(b, -1, -1, false, { 'mine' })
  vim.api.nvim_buf_set_lines(c, -1, -1, false, { 'mine' })
  t.eq(
    { 'applied', 'applied', 'applied' },
    edit(root, { { 'a.txt', 'a', 'A' }, { 'b.txt', 'b', 'B' }, { 'c.txt', 'c', 'C' } })
  )
  t.eq({ 'A' }, disk(root, 'a.txt'))
  t.eq(false, vim.bo[a].modified)
  t.eq({ 'b' }, disk(root, 'b.txt'))
  t.eq({ 'c' }, disk(root, 'c.txt'))
  local told = unsaved_notes()
  t.eq(2, #told, vim.inspect(notes))
  t.matches('edited .*b%.txt, which has unsaved changes', told[1].msg)
  t.matches('edited .*c%.txt, which has unsaved changes', told[2].msg)
end)

t.it('saves nothing when the edit was not applied', function()
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  local buf = open(root, 'a.txt')
  vim.bo[buf].modifiable = false
  local said = edit(root, { { 'a.txt', 'alpha', 'A' } })
  t.matches('^not applied: .*the editor refused the edit', said[1])
  t.eq({ 'alpha' }, disk(root, 'a.txt'), 'not saved')
  t.eq({ 'alpha' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end)

t.it('says when saving fails', function()
  local root = fresh({ ['a.txt'] = { 'alpha' } })
  local buf = open(root, 'a.txt')
  vim.bo[buf].readonly = true
  t.eq({ 'applied' }, edit(root, { { 'a.txt', 'alpha', 'A' } }))
  t.eq({ 'alpha' }, disk(root, 'a.txt'))
  local n = H.find(
    notes,
    '^reika: the agent edited .*a%.txt, but saving it failed %(.*%): commands do not see the edit$'
  )
  t.truthy(n, vim.inspect(notes))
  t.eq(levels.WARN, n.level)
end)
