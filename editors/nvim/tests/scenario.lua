-- The end-to-end scenario of issue 8, run against reika-lsp's server over
-- a scripted agent (client/) and against the real reika-lsp with the fake
-- engine (integration/): start the server for a workspace, :ReikaAsk, wait
-- for the turn to end, check that the statusline text and level changed as
-- the window filled, list the code actions and run "Compact context", and
-- find the fold line in the transcript buffer.
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
  -- ... and the server said so once, as a warning.
  local crossed = vim.tbl_filter(function(n)
    return n.msg:find('^reika: Context at %d+%% of the shed point') ~= nil
  end, notes)
  t.truthy(#crossed >= 1, 'a notification on crossing 80%: ' .. vim.inspect(notes))
  t.eq(vim.log.levels.WARN, crossed[1].level, 'the crossing is a warning')

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
  -- The code action runs the plugin's compact command (registered as the
  -- client-side command reika.compact): watch its result.
  local commands = require('reika.actions')
  local compact_fn, compacted = commands.compact, nil
  commands.compact = function(co)
    co = co or {}
    local on_done = co.on_done
    co.on_done = function(result, err)
      compacted = { result = result, err = err }
      if on_done then
        on_done(result, err)
      end
    end
    return compact_fn(co)
  end
  local folds_before = H.count_lines(H.transcript(root), '^### Fold$')
  local fold_msg = '^reika: Folded %d+ rounds? into a [%d.]+k?%-token recap$'
  local fold_notes_before = H.count(notes, fold_msg)
  local compact_at = #history
  vim.lsp.buf.code_action()
  t.wait('the result of Compact context', function()
    return compacted ~= nil
  end, o.timeout)
  commands.compact = compact_fn
  t.eq(nil, compacted.err, 'compact answered')
  local res = compacted.result
  t.eq(true, res.folded, 'compact folded: ' .. vim.inspect(res))
  t.truthy(
    type(res.recapTokens) == 'number' and res.recapTokens > 0,
    'recapTokens: ' .. vim.inspect(res)
  )
  t.matches(fold_msg, 'reika: ' .. res.message, 'the compact message')
  -- The server shows the same line with window/showMessage: the user sees
  -- it once, as information.
  t.eq(
    fold_notes_before + 1,
    H.count(notes, fold_msg),
    'one fold notification: ' .. vim.inspect(notes)
  )
  t.eq(vim.log.levels.INFO, H.find(notes, fold_msg).level, 'the fold notification level')
  -- The transcript shows the note, then the fold.
  local after = H.transcript(root)
  t.eq(
    folds_before + 1,
    H.count_lines(after, '^### Fold$'),
    'one more fold line in ' .. vim.inspect(after)
  )
  local last_note, last_fold
  for i, l in ipairs(after) do
    if l == '### Note' then
      last_note = i
    elseif l == '### Fold' then
      last_fold = i
    end
  end
  t.truthy(
    last_note and last_fold and last_note < last_fold,
    'the note precedes the fold in ' .. vim.inspect(after)
  )
  t.eq(res.message, after[last_fold + 1], 'the fold line')
  local kinds = vim.tbl_map(function(p)
    return p.kind
  end, prompts)
  t.contains(kinds, 'codeaction', 'the code action menu was shown')
  local view = require('reika.client').view(root)
  t.truthy(view:valid(), 'the transcript buffer exists')
  t.truthy(
    H.has_line(vim.api.nvim_buf_get_lines(view.bufnr, 0, -1, false), '^### Fold$'),
    'the buffer holds the fold line'
  )
  if o.after_compact then
    o.after_compact(t, c, history, notes)
  end
  return { root = root, client = c, history = history, notes = notes, compact_at = compact_at }
end

return S
