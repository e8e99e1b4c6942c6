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
local exit = require('reika.exit')
local state = require('reika.state')

local M = {}

-- The records of workspaces and clients (reika.state).
M.state = state
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
  return state.get(client_id) ~= nil
end

-- root_of returns the workspace root of a client id.
M.root_of = state.root_of

-- view returns the transcript view of a workspace root.
function M.view(root)
  local ws = state.workspace(root)
  if not ws.view then
    ws.view = transcript_buffer.new(root, opts().transcript)
  end
  return ws.view
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
      local root = state.root_of(ctx.client_id)
      if root and type(result) == 'table' then
        M.view(root):apply(result)
      end
    end,
    ['window/showMessage'] = function(_, result, ctx)
      if type(result) ~= 'table' then
        return
      end
      state.message_seq = state.message_seq + 1
      local rec = state.get(ctx.client_id)
      if rec then
        local log = rec.messages
        log[#log + 1] = { seq = state.message_seq, type = result.type, message = result.message }
        if #log > 100 then
          table.remove(log, 1)
        end
      end
      notify(
        format.user_words(tostring(result.message)),
        approval.message_levels[result.type] or vim.log.levels.INFO
      )
    end,
    ['window/showMessageRequest'] = approval.handler,
    -- The server gave up on a request of its: an approval it asked for
    -- is gone (reika.approval.withdraw).
    ['$/cancelRequest'] = function(_, _, ctx)
      approval.withdraw(ctx.client_id, 'cancelled by reika-lsp')
    end,
    -- Neovim's handler, then save what the edit changed (reika.edits).
    ['workspace/applyEdit'] = edits.handler(notify),
  }
end

-- shown_since reports whether the server showed message (window/showMessage)
-- after sequence number seq.
function M.shown_since(client_id, seq, message)
  local rec = state.get(client_id)
  for _, m in ipairs(rec and rec.messages or {}) do
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
  local rec = state.get(client_id)
  if not rec then
    return
  end
  local fns = rec.pending
  rec.pending = {}
  for _, fn in ipairs(fns) do
    fn(nil)
  end
end

-- load_transcript fills an empty transcript view from the server's
-- reika.transcript (docs/protocol.md §3.7): a Neovim that starts again on a
-- workspace whose session resumes shows the conversation so far. A view
-- that has lines (this Neovim saw the session live, or live events came in
-- while the request ran) is left as it is. With o.resumed (a session
-- resumed with :ReikaSessions) the session's conversation is added under
-- its header unless the view shows that session last already. o.on_done()
-- runs when that is done (or there was nothing to do).
function M.load_transcript(client, o)
  o = o or {}
  local done = o.on_done or function() end
  local root = state.root_of(client.id)
  if not root then
    return done()
  end
  local view = M.view(root)
  local function stale(page_session)
    if o.resumed then
      return view.model.session == page_session
    end
    return #view.model.lines > 0
  end
  if not o.resumed and stale(nil) then
    return done()
  end
  M.execute(client, protocol.command.transcript, { {} }, function(err, page)
    if err or type(page) ~= 'table' or type(page.events) ~= 'table' then
      return done()
    end
    if stale(page.session) or page.session == '' then
      return done()
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
    done()
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
        require('reika.actions').compact({ client_id = ctx and ctx.client_id })
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
        approval.withdraw(client_id, 'reika-lsp stopped')
        exit.on_exit(client_id, code, signal)
      end)
    end,
  }
end

M.exit_reason = exit.exit_reason
M.short_reason = exit.short_reason
M.on_exit = exit.on_exit

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
  local ws = state.workspace(root)
  local c = live(state.client_id(root))
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
  ws.failed = nil
  local id = compat.start(M.make_config(root), attach, reuse)
  if not id then
    return nil, 'reika-lsp did not start (see :LspLog)'
  end
  if not state.get(id) then
    state.add(id, root)
  end
  if ws.dead then
    status.forget(ws.dead.id)
    ws.dead = nil
  end
  return vim.lsp.get_client_by_id(id)
end

-- autostart attaches a file buffer to the client of its workspace,
-- starting one when needed. Buffers outside any workspace are left alone.
function M.autostart(bufnr)
  local root = M.root_for_buf(bufnr)
  local ws = root and state.workspaces[root]
  if not root or (ws and ws.failed) then
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
  local root = M.root_for_buf(bufnr)
  local ws = root and state.workspaces[root]
  if ws and ws.dead then
    ids[#ids + 1] = ws.dead.id
  end
  return ids
end

-- attached lists the reika clients attached to bufnr.
function M.attached(bufnr)
  local out = {}
  for _, id in ipairs(state.ids()) do
    local c = live(id)
    if c and c.attached_buffers and c.attached_buffers[bufnr] then
      out[#out + 1] = id
    end
  end
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
  local c = root and live(state.client_id(root))
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
  c = live(state.client_id(croot))
  if c then
    return c
  end
  local running = M.clients()
  if #running == 1 then
    return running[1]
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
  local rec = state.get(client.id)
  if not rec then
    fn('reika-lsp is not running')
    return
  end
  rec.pending[#rec.pending + 1] = fn
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
    -- exits: on_exit answers them from the record's inflight.
    local answered, id = false, nil
    local function once(e, result)
      if answered then
        return
      end
      answered = true
      local rec = state.get(client.id)
      if id and rec then
        rec.inflight[id] = nil
      end
      cb(e, result)
    end
    local ok
    ok, id = compat.request(client, 'workspace/executeCommand', params, once, o.bufnr)
    if not ok then
      once({ message = 'reika-lsp is not running' }, nil)
      return
    end
    local rec = state.get(client.id)
    if not answered and rec then
      rec.inflight[id] = once
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
  for _, c in ipairs(M.clients()) do
    do
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
  for _, id in ipairs(state.ids()) do
    local c = live(id)
    if c then
      out[#out + 1] = c
    end
  end
  return out
end

-- stop stops a client; its exit shows nothing (exit.on_exit), even when
-- force ends it with SIGTERM.
function M.stop(c, force)
  local rec = state.get(c.id)
  if rec then
    rec.stopping = true
  end
  compat.stop(c, force)
end

-- stop_all stops every reika client.
function M.stop_all(force)
  for _, c in ipairs(M.clients()) do
    M.stop(c, force)
  end
end

return M
