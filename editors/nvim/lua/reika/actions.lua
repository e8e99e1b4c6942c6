-- What the :Reika* commands do (reika.commands declares them), as the Lua
-- API (require('reika').ask() ...).
local approval = require('reika.approval')
local client = require('reika.client')
local format = require('reika.format')
local protocol = require('reika.protocol')
local status = require('reika.status')
local util = require('reika.util')

local M = {}

local levels = vim.log.levels
local notify = client.notify

local ask_seq = 0

local function with_client(bufnr, fn)
  local c, err = client.current(bufnr, true)
  if not c then
    notify(err or 'reika-lsp is not running', levels.ERROR)
    return
  end
  fn(c)
end

-- error_text is the text of a request's error, in the user's words
-- (format.user_words: the server's errors name its commands).
local function error_text(err)
  if type(err) == 'table' then
    return format.user_words(tostring(err.message or vim.inspect(err)))
  end
  return format.user_words(tostring(err))
end

-- failed tells the user that a request failed, unless the server stopped
-- under it (client.on_exit said so already).
local function failed(what, err)
  if type(err) == 'table' and err.stopped then
    return
  end
  notify(what .. ' failed: ' .. error_text(err), levels.ERROR)
end

-- answered is the callback of a command's request: err is said (failed),
-- a table result goes to on_result, and o.on_done hears both.
local function answered(o, what, on_result)
  return function(err, result)
    if err then
      failed(what, err)
    elseif type(result) == 'table' then
      on_result(result)
    end
    if o.on_done then
      o.on_done(not err and result or nil, err)
    end
  end
end

-- selection_arg adds to arg (a reika.ask argument) the uri and range of
-- selection = {mode, start, finish} in bufnr, and makes sure the server
-- has that buffer (it reads open buffers).
local function selection_arg(arg, c, bufnr, selection)
  local r1, r2 = selection.start[1], selection.finish[1]
  if r2 < r1 then
    r1, r2 = r2, r1
  end
  local lines = {}
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, r1 - 1, r2, false)) do
    lines[r1 + i - 1] = l
  end
  arg.uri = vim.uri_from_bufnr(bufnr)
  arg.range = util.selection_range(lines, selection, c.offset_encoding or 'utf-16')
  if not (c.attached_buffers and c.attached_buffers[bufnr]) then
    vim.lsp.buf_attach_client(bufnr, c.id)
  end
end

-- show_transcript opens c's transcript as a turn starts, unless the
-- transcript option open_on_ask is false.
local function show_transcript(c)
  local root = client.root_of(c.id)
  local o = client.options().transcript
  if root and o.open_on_ask ~= false then
    local view = client.view(root)
    if not view:visible() then
      view:open(o.open, true)
    end
  end
end

-- ask_done tells the user how a turn of c ended (err or the reika.ask
-- result). The turn's approvals still asking are gone.
local function ask_done(c, err, result)
  approval.withdraw(c.id, 'the turn ended')
  if err then
    failed('ask', err)
  elseif type(result) == 'table' then
    if result.status == protocol.ask_status.error then
      notify(format.user_words(tostring(result.message or 'the turn failed')), levels.ERROR)
    elseif result.status == protocol.ask_status.cancelled then
      notify('turn cancelled', levels.INFO)
    end
  end
end

-- ask sends a prompt. o: prompt (asked for with vim.ui.input when empty),
-- bufnr, selection = {mode, start, finish} (see util.selection_range),
-- on_done(result) called with the reika.ask result (or nil on error).
function M.ask(o)
  o = o or {}
  local bufnr = o.bufnr or vim.api.nvim_get_current_buf()
  local function send(prompt)
    if type(prompt) ~= 'string' or prompt:match('^%s*$') then
      return
    end
    with_client(bufnr, function(c)
      local arg = { prompt = prompt }
      if o.selection and util.buf_path(bufnr) then
        selection_arg(arg, c, bufnr, o.selection)
      end
      ask_seq = ask_seq + 1
      show_transcript(c)
      client.execute(c, protocol.command.ask, { arg }, function(err, result)
        ask_done(c, err, result)
        if o.on_done then
          o.on_done(not err and result or nil, err)
        end
      end, {
        token = string.format('reika-ask-%d-%d', vim.fn.getpid(), ask_seq),
        bufnr = bufnr,
      })
    end)
  end
  if o.prompt and not o.prompt:match('^%s*$') then
    send(o.prompt)
    return
  end
  local label = 'Ask reika: '
  local path = o.selection and util.buf_path(bufnr)
  if path then
    local name = vim.fn.fnamemodify(path, ':~:.')
    local where = format.selection_label(name, o.selection.start[1], o.selection.finish[1])
    label = 'Ask reika about ' .. where .. ': '
  end
  vim.ui.input({ prompt = label }, send)
end

-- compact runs "Compact context". o: client_id (the code action's client),
-- on_done(result, err).
function M.compact(o)
  o = o or {}
  local function run(c)
    local seq = client.state.message_seq
    client.execute(c, protocol.command.compact, {}, answered(o, 'compact', function(result)
      -- The server usually says the same with window/showMessage.
      if type(result.message) == 'string' and not client.shown_since(c.id, seq, result.message) then
        notify(format.user_words(result.message), levels.INFO)
      end
    end))
  end
  if o.client_id then
    local c = vim.lsp.get_client_by_id(o.client_id)
    if c then
      run(c)
      return
    end
  end
  with_client(o.bufnr, run)
end

-- cancel stops the running turn.
function M.cancel(o)
  o = o or {}
  local c = client.current(o.bufnr, false)
  if not c then
    notify('no turn is running', levels.INFO)
    return
  end
  client.execute(c, protocol.command.cancel, {}, answered(o, 'cancel', function(result)
    if result.cancelled == false then
      notify('no turn is running', levels.INFO)
    end
  end))
end

-- save writes the whole conversation as Markdown to path (the server
-- chooses a file in its state directory when path is empty).
function M.save(o)
  o = o or {}
  local arg = vim.empty_dict()
  if o.path and o.path ~= '' then
    arg = { path = vim.fn.fnamemodify(vim.fn.expand(o.path), ':p') }
  end
  with_client(o.bufnr, function(c)
    client.execute(c, protocol.command.save, { arg }, answered(o, 'save', function(result)
      if result.path then
        notify('saved the conversation to ' .. tostring(result.path), levels.INFO)
      end
    end))
  end)
end

-- new_session starts a fresh session.
function M.new_session(o)
  o = o or {}
  with_client(o.bufnr, function(c)
    client.execute(c, protocol.command.new_session, {}, answered(o, 'new session', function(result)
      if result.session then
        notify('new session ' .. tostring(result.session), levels.INFO)
      end
    end))
  end)
end

-- transcript opens the transcript of the current workspace.
function M.transcript(o)
  o = o or {}
  with_client(o.bufnr, function(c)
    local root = client.root_of(c.id)
    local t = client.options().transcript
    client.view(root):open(t.open, o.keep_focus)
  end)
end

-- show_status shows the status item's text and its budget breakdown.
function M.show_status(o)
  o = o or {}
  with_client(o.bufnr, function(c)
    client.execute(c, protocol.command.status, {}, function(err, result)
      if err then
        failed('status', err)
        return
      end
      if type(result) == 'table' then
        status.update(c.id, result)
        local text = tostring(result.text or '')
        if type(result.tooltip) == 'string' and result.tooltip ~= '' then
          text = text .. '\n' .. result.tooltip
        end
        notify(text, levels.INFO)
      end
      if o.on_done then
        o.on_done(result, err)
      end
    end)
  end)
end

return M
