-- The end-to-end scenario of issue 8, run against the LSP double
-- (client/) and against the real reika-lsp with the fake engine
-- (integration/): start the server for a workspace, :ReikaAsk, wait for the
-- turn to end, check that the statusline text and level changed as the
-- window filled, list the code actions and run "Compact context", and find
-- the fold line in the transcript buffer.
local H = require('helpers')

local S = {}

-- run: o.cmd, o.cmd_env, o.settings, o.files, o.file (to open), o.prompt,
-- o.timeout (hang guard per wait), o.after_compact(t, c) extra checks.
function S.run(t, o)
  local notes = H.capture_notify()
  local root = H.workspace(o.files)
  require('reika').setup({ cmd = o.cmd, cmd_env = o.cmd_env, settings = o.settings })
  local history = H.watch_status()
  local c = H.open(t, root, o.file, o.timeout)
  local reika = require('reika')
  t.neq('', reika.statusline(), 'a chip once the server answered')
  local first = { text = reika.statusline(), level = reika.statusline_level() }
  t.eq('ok', first.level, 'the window starts below 80%: ' .. first.text)

  local prompts = H.select_by({ ['reika.approval'] = 'Allow', codeaction = 'Compact context' })
  vim.cmd('ReikaAsk ' .. o.prompt)
  t.wait('the turn to start', function()
    for _, h in ipairs(history) do
      if h.busy then
        return true
      end
    end
    return false
  end, o.timeout)
  t.wait('the turn to end', function()
    local s = H.status(c)
    return s and s.busy == false and H.has_line(H.transcript(root), '^> ') ~= nil
  end, o.timeout)
  local errors = vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR
  end, notes)
  t.eq({}, errors, 'no errors shown')

  -- The chip changed as the window filled, and crossed into warning.
  local texts, warned = {}, false
  for _, h in ipairs(history) do
    texts[h.text] = true
    warned = warned or h.level == 'warning'
  end
  t.truthy(vim.tbl_count(texts) >= 2, 'the chip text changed: ' .. vim.inspect(history))
  t.truthy(warned, 'the level reached warning: ' .. vim.inspect(history))

  -- The transcript shows the turn.
  local lines = H.transcript(root)
  t.truthy(H.has_line(lines, '^%-%-%- turn 1 %-%-%-$'), 'turn header in ' .. vim.inspect(lines))
  t.truthy(H.has_line(lines, '^%-> '), 'a tool call in ' .. vim.inspect(lines))

  -- "Compact context" is offered and runs through vim.lsp.buf.code_action().
  local actions = H.code_actions(t, nil, o.timeout)
  local compact
  for _, a in ipairs(actions) do
    if a.title == 'Compact context' then
      compact = a
    end
  end
  t.truthy(compact, 'Compact context offered: ' .. vim.inspect(actions))
  t.eq('source.compactContext', compact.kind)
  t.eq('reika.compact', compact.command and compact.command.command)
  t.eq(nil, compact.edit, 'no edit')
  vim.lsp.buf.code_action()
  t.wait('the fold line in the transcript buffer', function()
    return H.has_line(H.transcript(root), '^%[fold%] ') ~= nil
  end, o.timeout)
  local kinds = vim.tbl_map(function(p)
    return p.kind
  end, prompts)
  t.contains(kinds, 'codeaction', 'the code action menu was shown')
  local view = require('reika.client').view(root)
  t.truthy(view:valid(), 'the transcript buffer exists')
  t.truthy(
    H.has_line(vim.api.nvim_buf_get_lines(view.bufnr, 0, -1, false), '^%[fold%] '),
    'the buffer holds the fold line'
  )
  if o.after_compact then
    o.after_compact(t, c, history, notes)
  end
  return { root = root, client = c, history = history, notes = notes }
end

return S
