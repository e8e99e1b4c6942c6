-- The reika-lsp clients: one per workspace root. Starting, attaching file
-- buffers, the handlers of the server's custom notifications and requests,
-- and sending commands.
local approval = require('reika.approval')
local compat = require('reika.compat')
local config = require('reika.config')
local edits = require('reika.edits')
local format = require('reika.format')
local progress = require('reika.progress')
local protocol = require('reika.protocol')
local spinner = require('reika.spinner')
local status = require('reika.status')
local transcript_buffer = require('reika.transcript_buffer')
local util = require('reika.util')

local M = {}

M.by_root = {} -- root -> client id
M.roots = {} -- client id -> root
M.views = {} -- root -> transcript view (kept across server restarts)
M.messages = {} -- client id -> { {seq, type, message}, ... } (window/showMessage)
M.message_seq = 0
M.pending = {} -- client id -> functions to run once initialized
M.failed = {} -- root -> true when its server failed; autostart skips it
M.stopping = {} -- client id -> true once its stop was asked for
M.dead = {} -- root -> id of the client whose server died (its red status shows)
M.inflight = {} -- client id -> { [request id] = callback } (M.execute)
M.opts = nil -- the options in force (set by reika.setup, or defaults)

local function opts()
  if not M.opts then
    M.opts = assert(config.resolve({}))
    spinner.set_frames(M.opts.spinner)
    status.define_highlights()
  end
  return M.opts
end

-- options returns the options in force.
M.options = opts

function M.is_ours(client_id)
  return client_id ~= nil and M.roots[client_id] ~= nil
end

-- view returns the transcript view of a workspace root.
function M.view(root)
  local v = M.views[root]
  if not v then
    v = transcript_buffer.new(root, opts().transcript)
    M.views[root] = v
  end
  return v
end

local function notify(msg, level)
  vim.notify('reika: ' .. msg, level or vim.log.levels.INFO)
end
M.notify = notify

-- handlers are the client's handlers for the server's custom messages.
function M.handlers()
  return {
    [protocol.notification.status] = function(_, result, ctx)
      status.update(ctx.client_id, result)
    end,
    [protocol.notification.transcript] = function(_, result, ctx)
      local root = M.roots[ctx.client_id]
      if root and type(result) == 'table' then
        M.view(root):apply(result)
      end
    end,
    ['window/showMessage'] = function(_, result, ctx)
      if type(result) ~= 'table' then
        return
      end
      M.message_seq = M.message_seq + 1
      local log = M.messages[ctx.client_id] or {}
      M.messages[ctx.client_id] = log
      log[#log + 1] = { seq = M.message_seq, type = result.type, message = result.message }
      if #log > 100 then
        table.remove(log, 1)
      end
      notify(
        format.user_words(tostring(result.message)),
        approval.message_levels[result.type] or vim.log.levels.INFO
      )
    end,
    ['window/showMessageRequest'] = approval.handler,
    -- Neovim's handler, then save what the edit changed (reika.edits).
    ['workspace/applyEdit'] = edits.handler(notify),
  }
end

-- shown_since reports whether the server showed message (window/showMessage)
-- after sequence number seq.
function M.shown_since(client_id, seq, message)
  for _, m in ipairs(M.messages[client_id] or {}) do
    if m.seq > seq and m.message == message then
      return true
    end
  end
  return false
end

-- root_for_buf returns the workspace root of a buffer: opts.root_dir, or
-- the nearest directory with a root marker above its file; nil for
-- buffers that show no file or lie in no workspace.
function M.root_for_buf(bufnr)
  local o = opts()
  if type(o.root_dir) == 'function' then
    local r = o.root_dir(bufnr)
    return r and vim.fn.fnamemodify(r, ':p'):gsub('/$', '') or nil
  end
  if type(o.root_dir) == 'string' then
    return (vim.fn.fnamemodify(o.root_dir, ':p'):gsub('/$', ''))
  end
  local path = util.buf_path(bufnr)
  if not path then
    return nil
  end
  return util.find_root(vim.fn.fnamemodify(path, ':h'), o.root_markers)
end

-- cwd_root is the workspace of the current directory: its root marker
-- directory, else the directory itself.
function M.cwd_root()
  local cwd = vim.fn.getcwd()
  local o = opts()
  if type(o.root_dir) == 'string' then
    return (vim.fn.fnamemodify(o.root_dir, ':p'):gsub('/$', ''))
  end
  return util.find_root(cwd, o.root_markers) or cwd
end

local function flush_pending(client_id)
  local fns = M.pending[client_id]
  M.pending[client_id] = nil
  for _, fn in ipairs(fns or {}) do
    fn(nil)
  end
end

-- load_transcript fills an empty transcript view from the server's
-- reika.transcript (docs/protocol.md §3.7): a Neovim that starts again on a
-- workspace whose session resumes shows the conversation so far. A view
-- that has lines (this Neovim saw the session live, or live events came in
-- while the request ran) is left as it is.
function M.load_transcript(client)
  local root = M.roots[client.id]
  if not root then
    return
  end
  local view = M.view(root)
  if #view.model.lines > 0 then
    return
  end
  M.execute(client, protocol.command.transcript, { {} }, function(err, page)
    if err or type(page) ~= 'table' or type(page.events) ~= 'table' then
      return
    end
    if #view.model.lines > 0 or page.session == '' then
      return
    end
    local omitted = tonumber(page.omitted) or 0
    if omitted > 0 and page.events[1] then
      view:apply({
        kind = protocol.event.info,
        session = page.events[1].session,
        text = string.format('(%d older events are not shown)', omitted),
      })
    end
    for _, ev in ipairs(page.events) do
      view:apply(ev)
    end
  end)
end

-- make_config builds the vim.lsp client config for a root.
function M.make_config(root)
  local o = opts()
  local settings = config.settings_payload(o.settings)
  return {
    name = protocol.client_name,
    cmd = o.cmd,
    cmd_env = o.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = { [protocol.settings_section] = settings },
    settings = { [protocol.settings_section] = settings },
    handlers = M.handlers(),
    commands = {
      -- The "Compact context" code action runs this (Neovim runs a
      -- client-side command when one is registered, else sends
      -- workspace/executeCommand itself): same request, with the result
      -- shown.
      [protocol.command.compact] = function(_, ctx)
        require('reika.commands').compact({ client_id = ctx and ctx.client_id })
      end,
    },
    flags = { debounce_text_changes = 150 },
    on_init = function(client)
      vim.schedule(function()
        flush_pending(client.id)
        M.load_transcript(client)
      end)
    end,
    on_attach = function(client, bufnr)
      if o.on_attach then
        o.on_attach(client, bufnr)
      end
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        M.on_exit(client_id, code, signal)
      end)
    end,
  }
end

local signal_names = {
  [1] = 'SIGHUP',
  [2] = 'SIGINT',
  [3] = 'SIGQUIT',
  [4] = 'SIGILL',
  [6] = 'SIGABRT',
  [7] = 'SIGBUS',
  [8] = 'SIGFPE',
  [9] = 'SIGKILL',
  [11] = 'SIGSEGV',
  [13] = 'SIGPIPE',
  [15] = 'SIGTERM',
}

-- exit_reason says how a process ended: "killed by SIGKILL (signal 9)",
-- "exited with code 2".
function M.exit_reason(code, signal)
  if type(signal) == 'number' and signal ~= 0 then
    return string.format('killed by %s (signal %d)', signal_names[signal] or 'a signal', signal)
  end
  return string.format('exited with code %s', tostring(code))
end

-- watch_stop marks the client's stops as asked for. Every way Neovim stops
-- a client (client.stop(), client:stop(), vim.lsp.stop_client(), quitting
-- Neovim) calls its stop method; any other exit is a death.
local function watch_stop(c)
  local stop = c.stop
  c.stop = function(...)
    M.stopping[c.id] = true
    return stop(...)
  end
end

local function quitting()
  return vim.v.exiting ~= nil and vim.v.exiting ~= vim.NIL
end

-- on_exit handles the end of a client's server. A stop that was asked for
-- drops its status. Any other exit, by a signal or with any exit code, is
-- a death: the chip turns to the red "reika-lsp stopped", the user is told,
-- requests in flight fail, and the workspace is not restarted on buffer
-- switches (that would repeat a failure) but by the next command (the
-- server then resumes the workspace's last session).
function M.on_exit(client_id, code, signal)
  local root = M.roots[client_id]
  local asked = M.stopping[client_id] or quitting()
  M.stopping[client_id] = nil
  M.roots[client_id] = nil
  if root and M.by_root[root] == client_id then
    M.by_root[root] = nil
  end
  local reason = M.exit_reason(code, signal)
  local fns = M.pending[client_id]
  M.pending[client_id] = nil
  for _, fn in ipairs(fns or {}) do
    fn('reika-lsp ' .. reason .. ' before it was ready')
  end
  local inflight = M.inflight[client_id]
  M.inflight[client_id] = nil
  for _, cb in pairs(inflight or {}) do
    cb({ message = 'reika-lsp ' .. reason, stopped = true }, nil)
  end
  progress.forget(client_id)
  M.messages[client_id] = nil
  if asked or not root then
    status.forget(client_id)
    return
  end
  M.failed[root] = true
  M.dead[root] = client_id
  local next_step = 'the next :Reika command starts it again'
  status.update(client_id, {
    text = 'reika-lsp stopped',
    tooltip = 'reika-lsp ' .. reason .. '; ' .. next_step,
    level = protocol.level.error,
    busy = false,
  })
  M.swallow_quit_notice(client_id)
  -- One short line: two lines, or one wider than the screen, make Neovim
  -- wait for ENTER.
  notify(
    string.format('server %s; any :Reika command restarts it', M.short_reason(code, signal)),
    vim.log.levels.ERROR
  )
end

-- short_reason is exit_reason without the signal's number.
function M.short_reason(code, signal)
  if type(signal) == 'number' and signal ~= 0 then
    return 'killed by ' .. (signal_names[signal] or ('signal ' .. signal))
  end
  return string.format('exited with code %s', tostring(code))
end

-- swallow_quit_notice drops the "Client reika quit with exit code 0 and
-- signal 9" line that Neovim's own exit handler shows for a death by any
-- signal but SIGTERM (0.7 names the client by its id): the plugin's line
-- says the same and what to do. Neovim schedules its line right after
-- calling on_exit, which scheduled this: the filter stands for that one
-- turn of the event loop, and only while nothing replaced vim.notify since.
function M.swallow_quit_notice(client_id)
  local names = { protocol.client_name, tostring(client_id) }
  local inner = vim.notify
  local filter
  filter = function(msg, level, o)
    if type(msg) == 'string' then
      for _, name in ipairs(names) do
        if vim.startswith(msg, 'Client ' .. name .. ' quit with exit code ') then
          return
        end
      end
    end
    return inner(msg, level, o)
  end
  vim.notify = filter
  vim.schedule(function()
    if vim.notify == filter then
      vim.notify = inner
    end
  end)
end

local function reuse(client, conf)
  return client.name == conf.name and client.config.root_dir == conf.root_dir
end

-- get_client returns the client object of an id, nil when it is gone.
local function live(id)
  if not id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(id)
  if not c or compat.is_stopped(c) then
    return nil
  end
  return c
end

-- start returns the client of root, starting reika-lsp when none runs, and
-- attaches bufnr when it is a file inside root. Returns client or nil, err.
function M.start(root, bufnr)
  local attach = nil
  if bufnr and util.is_inside(util.buf_path(bufnr), root) then
    attach = bufnr
  end
  local c = live(M.by_root[root])
  if c then
    if attach then
      vim.lsp.buf_attach_client(attach, c.id)
    end
    return c
  end
  local o = opts()
  if vim.fn.executable(o.cmd[1]) ~= 1 then
    return nil,
      string.format(
        'cannot start reika-lsp: %q is not an executable; put reika-lsp on PATH'
          .. " or set cmd in require('reika').setup()",
        o.cmd[1]
      )
  end
  if vim.fn.isdirectory(root) ~= 1 then
    return nil, 'workspace root is not a directory: ' .. root
  end
  M.failed[root] = nil
  local id = compat.start(M.make_config(root), attach, reuse)
  if not id then
    return nil, 'reika-lsp did not start (see :LspLog)'
  end
  M.by_root[root] = id
  M.roots[id] = root
  if M.dead[root] then
    status.forget(M.dead[root])
    M.dead[root] = nil
  end
  local c = vim.lsp.get_client_by_id(id)
  if c then
    watch_stop(c)
  end
  return c
end

-- autostart attaches a file buffer to the client of its workspace,
-- starting one when needed. Buffers outside any workspace are left alone.
function M.autostart(bufnr)
  local root = M.root_for_buf(bufnr)
  if not root or M.failed[root] then
    return
  end
  local _, err = M.start(root, bufnr)
  if err and not M.start_error_shown then
    M.start_error_shown = true
    notify(err, vim.log.levels.ERROR)
  end
end

-- status_ids lists the clients whose status belongs to bufnr: those
-- attached to it, then the dead one of its workspace.
function M.status_ids(bufnr)
  local ids = M.attached(bufnr)
  if next(M.dead) == nil then
    return ids
  end
  local root = M.root_for_buf(bufnr)
  if root and M.dead[root] then
    ids[#ids + 1] = M.dead[root]
  end
  return ids
end

-- attached lists the reika clients attached to bufnr.
function M.attached(bufnr)
  local out = {}
  for id in pairs(M.roots) do
    local c = live(id)
    if c and c.attached_buffers and c.attached_buffers[bufnr] then
      out[#out + 1] = id
    end
  end
  table.sort(out)
  return out
end

-- current returns the client for commands run from bufnr: one attached to
-- it, else that of its workspace; for a buffer in no workspace (the
-- transcript, help), that of the current directory, else the only one
-- running. With start, starts one for the buffer's (or the current
-- directory's) workspace. Returns client or nil, err.
function M.current(bufnr, start)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local ids = M.attached(bufnr)
  if ids[1] then
    return live(ids[1])
  end
  local root = M.root_for_buf(bufnr)
  local c = root and live(M.by_root[root])
  if c then
    return c
  end
  if root then
    -- Never another workspace's server.
    if not start then
      return nil, 'reika-lsp is not running for this workspace'
    end
    return M.start(root, bufnr)
  end
  local croot = M.cwd_root()
  c = live(M.by_root[croot])
  if c then
    return c
  end
  local running = {}
  for id in pairs(M.roots) do
    if live(id) then
      running[#running + 1] = id
    end
  end
  if #running == 1 then
    return live(running[1])
  end
  if not start then
    return nil, 'reika-lsp is not running for this workspace'
  end
  return M.start(croot, bufnr)
end

-- when_ready runs fn(err) once the client is initialized (at once when it
-- is); err is set when the server exits first.
function M.when_ready(client, fn)
  if client.initialized then
    fn(nil)
    return
  end
  local list = M.pending[client.id] or {}
  M.pending[client.id] = list
  list[#list + 1] = fn
end

-- execute sends workspace/executeCommand once the client is ready and
-- calls cb(err, result). opts.token sets a workDoneToken; opts.on_sent(id)
-- receives the request id.
function M.execute(client, command, arguments, cb, o)
  o = o or {}
  M.when_ready(client, function(err)
    if err then
      -- The server exited first: on_exit has told the user.
      cb({ message = err, stopped = true }, nil)
      return
    end
    local params = { command = command, arguments = arguments }
    if o.token then
      params.workDoneToken = o.token
    end
    -- Neovim drops the handlers of requests in flight when the server
    -- exits: on_exit answers them from M.inflight.
    local answered, id = false, nil
    local function once(e, result)
      if answered then
        return
      end
      answered = true
      if id and M.inflight[client.id] then
        M.inflight[client.id][id] = nil
      end
      cb(e, result)
    end
    local ok
    ok, id = compat.request(client, 'workspace/executeCommand', params, once, o.bufnr)
    if not ok then
      once({ message = 'reika-lsp is not running' }, nil)
      return
    end
    if not answered then
      M.inflight[client.id] = M.inflight[client.id] or {}
      M.inflight[client.id][id] = once
    end
    if o.on_sent then
      o.on_sent(id)
    end
  end)
end

-- update_settings sends new settings to every running client. Neovim
-- answers workspace/configuration from client.config.settings before 0.10
-- and from client.settings since: both are set.
function M.update_settings()
  local settings = config.settings_payload(opts().settings)
  for id in pairs(M.roots) do
    local c = live(id)
    if c then
      c.config.settings = { [protocol.settings_section] = settings }
      c.settings = { [protocol.settings_section] = settings }
      if c.initialized then
        compat.notify(c, 'workspace/didChangeConfiguration', {
          settings = { [protocol.settings_section] = settings },
        })
      end
    end
  end
end

-- clients lists the running reika clients.
function M.clients()
  local out = {}
  for id in pairs(M.roots) do
    local c = live(id)
    if c then
      out[#out + 1] = c
    end
  end
  table.sort(out, function(a, b)
    return a.id < b.id
  end)
  return out
end

-- stop stops every reika client.
function M.stop_all()
  for _, c in ipairs(M.clients()) do
    compat.stop(c)
  end
end

return M
