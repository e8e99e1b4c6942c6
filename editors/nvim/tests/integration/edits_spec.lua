-- The server's edit policy end to end: the real reika-lsp against the fake
-- engine (fixtures/edit-script.json). Files open in Neovim are edited with
-- workspace/applyEdit ("Reika: write PATH") and the plugin saves them when
-- they had no unsaved changes, so the command the agent runs next sees the
-- edit; a buffer with unsaved changes keeps them and the user is told once;
-- a file that is not open is written to disk by the server.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

t.it('saves the open files the agent edits and leaves unsaved work alone', function()
  local url = H.fake_engine(t, 'edit-script.json')
  local notes = H.capture_notify()
  local state = H.tmpdir()
  local root = H.workspace({
    ['saved.txt'] = { 'alpha one' },
    ['dirty.txt'] = { 'beta two', 'gamma three' },
    ['closed.txt'] = { 'old' },
  })
  local reika = require('reika')
  reika.setup({
    cmd = { os.getenv('REIKA_LSP_BIN') },
    cmd_env = { XDG_STATE_HOME = state .. '/state', XDG_CONFIG_HOME = state .. '/config' },
    settings = { baseUrl = url },
    -- The list prompt (diff_spec.lua shows the diff tab).
    diff_approvals = false,
  })
  local prompts = H.select_by({ ['reika.approval'] = 'Allow' })
  -- The edits Neovim's own handler applies (the plugin's calls it).
  local labels = {}
  local default = vim.lsp.handlers['workspace/applyEdit']
  vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx, config)
    labels[#labels + 1] = params and params.label
    return default(err, params, ctx, config)
  end

  H.open(t, root, 'saved.txt')
  local saved = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/dirty.txt'))
  local dirty = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(dirty, -1, -1, false, { 'my unsaved line' })

  -- Asked from dirty.txt, so its pending change goes to the server first.
  local asked
  reika.ask({
    prompt = 'Edit the files.',
    on_done = function(result, err)
      asked = { result = result, err = err }
    end,
  })
  t.wait('the turn to end', function()
    return asked ~= nil
  end, 120000)
  t.eq(nil, asked.err)
  t.eq('done', asked.result.status, vim.inspect(asked.result))

  -- Every write went through workspace/applyEdit (docs/protocol.md: file
  -- changes go through the editor when it can apply edits).
  t.eq({
    'Reika: write saved.txt',
    'Reika: write dirty.txt',
    'Reika: write dirty.txt',
    'Reika: write closed.txt',
  }, labels)
  t.eq(5, #prompts, 'an approval for each edit, the command and the write')
  t.eq({ 'Allow', 'Allow for this session', 'Deny' }, prompts[1].labels)
  t.matches(
    '^reika: Reika wants to write closed%.txt %(replace, 1 line%)\n',
    prompts[5].prompt,
    'one line, not 1 lines'
  )

  -- saved.txt had no unsaved changes: edited and saved, so the command
  -- the agent ran next saw the edit.
  t.eq({ 'ALPHA one' }, vim.api.nvim_buf_get_lines(saved, 0, -1, false))
  t.eq(false, vim.bo[saved].modified, 'saved.txt is saved')
  t.eq({ 'ALPHA one' }, vim.fn.readfile(root .. '/saved.txt'))
  local lines = H.transcript(root)
  t.truthy(H.has_line(lines, '^%-> bash '), 'the command ran: ' .. vim.inspect(lines))
  t.truthy(
    H.has_line(lines, '^<%- bash: ALPHA one '),
    'the command saw the edit: ' .. vim.inspect(lines)
  )

  -- dirty.txt had unsaved changes: edited twice in the buffer, not saved,
  -- and the user was told once.
  t.eq(
    { 'BETA two', 'GAMMA three', 'my unsaved line' },
    vim.api.nvim_buf_get_lines(dirty, 0, -1, false)
  )
  t.eq(true, vim.bo[dirty].modified, 'dirty.txt keeps its unsaved changes')
  t.eq({ 'beta two', 'gamma three' }, vim.fn.readfile(root .. '/dirty.txt'))
  local told = vim.tbl_filter(function(n)
    return n.msg:find('unsaved changes', 1, true) ~= nil
  end, notes)
  t.eq(1, #told, 'told once: ' .. vim.inspect(notes))
  t.matches('^reika: the agent edited .*dirty%.txt, which has unsaved changes', told[1].msg)
  t.eq(vim.log.levels.WARN, told[1].level)

  -- closed.txt was not open: the edit loaded it into a buffer, and the
  -- plugin saved it, as it had no unsaved changes.
  t.eq({ 'written by the agent' }, vim.fn.readfile(root .. '/closed.txt'))
  local closed = vim.fn.bufnr(root .. '/closed.txt')
  t.truthy(closed ~= -1, 'the edit loaded closed.txt')
  t.eq(false, vim.bo[closed].modified, 'closed.txt is saved')

  local errors = vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR
  end, notes)
  t.eq({}, errors, 'no errors shown')
end)
