-- The end of a client's server: a stop that was asked for, or a death
-- that the user must see (the red chip and one line).
local progress = require('reika.progress')
local protocol = require('reika.protocol')
local state = require('reika.state')
local status = require('reika.status')

local M = {}

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

-- short_reason is exit_reason without the signal's number.
function M.short_reason(code, signal)
  if type(signal) == 'number' and signal ~= 0 then
    return 'killed by ' .. (signal_names[signal] or ('signal ' .. signal))
  end
  return string.format('exited with code %s', tostring(code))
end

local function quitting()
  return vim.v.exiting ~= nil and vim.v.exiting ~= vim.NIL
end

-- asked reports whether an exit was asked for: the plugin stopped the
-- client (rec.stopping, even when that ends with SIGTERM), Neovim is
-- quitting, or the server exited with code 0 on its own, which reika-lsp
-- does only after the LSP shutdown request or when the editor closed its
-- input (any stop through Neovim's client.stop). A forced stop from
-- outside the plugin (client.stop(true)) ends the server with SIGTERM and
-- shows as a death, as a SIGTERM from anyone else does.
local function asked(rec, code, signal)
  if rec.stopping or quitting() then
    return true
  end
  return code == 0 and (signal == nil or signal == 0)
end

-- fail_waiters answers what waited on the client: the functions waiting
-- for it to be ready, and the requests in flight (Neovim drops their
-- handlers when the server exits).
local function fail_waiters(rec, reason)
  local fns = rec.pending
  rec.pending = {}
  for _, fn in ipairs(fns) do
    fn('reika-lsp ' .. reason .. ' before it was ready')
  end
  local inflight = rec.inflight
  rec.inflight = {}
  for _, cb in pairs(inflight) do
    cb({ message = 'reika-lsp ' .. reason, stopped = true }, nil)
  end
end

-- on_exit handles the end of a client's server. A stop that was asked for
-- drops its status. Any other exit, by a signal or with a non-zero code,
-- is a death: the chip turns to the red "reika-lsp stopped", the user is
-- told in one line, requests in flight fail, and the workspace is not
-- restarted on buffer switches (that would repeat a failure) but by the
-- next command (the server then resumes the workspace's last session).
function M.on_exit(client_id, code, signal)
  local rec = state.get(client_id)
  progress.forget(client_id)
  if not rec then
    status.forget(client_id)
    return
  end
  state.remove(rec)
  fail_waiters(rec, M.exit_reason(code, signal))
  if asked(rec, code, signal) then
    status.forget(client_id)
    return
  end
  local ws = rec.workspace
  ws.failed = true
  ws.dead = rec
  status.update(client_id, {
    text = 'reika-lsp stopped',
    tooltip = 'reika-lsp '
      .. M.exit_reason(code, signal)
      .. '; the next :Reika command starts it again',
    level = protocol.level.error,
    busy = false,
  })
  M.swallow_quit_notice(client_id)
  -- One short line: two lines, or one wider than the screen, make Neovim
  -- wait for ENTER.
  vim.notify(
    string.format('reika: server %s; any :Reika command restarts it', M.short_reason(code, signal)),
    vim.log.levels.ERROR
  )
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

return M
