-- :checkhealth reika — the binary, its version, whether the engine answers
-- and where the context window size comes from.
local client = require('reika.client')
local compat = require('reika.compat')
local config = require('reika.config')
local protocol = require('reika.protocol')
local util = require('reika.util')

local M = {}

-- How long :checkhealth waits for the server (a hang guard).
M.timeout_ms = 15000

local function check_binary(h, o)
  local exe = o.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    h.error(string.format('%q is not an executable', exe), {
      'Build it: go build -o bin/reika-lsp ./cmd/reika-lsp, and put it on PATH',
      "or set cmd: require('reika').setup({ cmd = { '/path/to/reika-lsp' } })",
    })
    return false
  end
  h.ok('binary: ' .. vim.fn.exepath(exe))
  local out = vim.fn.system({ exe, 'version' })
  if vim.v.shell_error ~= 0 then
    h.warn('`' .. exe .. ' version` failed: ' .. vim.trim(out))
  else
    h.ok('version: ' .. vim.trim(out))
  end
  return true
end

local function wait_ready(c)
  local ready, failure = false, nil
  client.when_ready(c, function(err)
    ready, failure = true, err
  end)
  vim.wait(M.timeout_ms, function()
    return ready
  end, 50)
  if not ready then
    return 'reika-lsp did not answer initialize'
  end
  return failure
end

-- checked_buffer is the buffer :checkhealth ran from: it shows its report
-- in a new tab page, so that of the previous tab page's window.
local function checked_buffer()
  local cur = vim.api.nvim_get_current_buf()
  if util.buf_path(cur) then
    return cur
  end
  local tab = vim.fn.tabpagenr('#')
  if tab > 0 then
    local b = vim.fn.tabpagebuflist(tab)[vim.fn.tabpagewinnr(tab)]
    if b and b > 0 then
      return b
    end
  end
  return cur
end

local function check_server(h)
  local bufnr = checked_buffer()
  local c, err = client.current(bufnr, false)
  if not c then
    h.info('reika-lsp is not running for this workspace; starting it to ask')
    c, err = client.current(bufnr, true)
  end
  if not c then
    h.error(err or 'reika-lsp did not start')
    return
  end
  h.ok(string.format('server running for %s (client %d)', client.root_of(c.id) or '?', c.id))
  local failure = wait_ready(c)
  if failure then
    h.error(failure, { 'See :LspLog, or run reika-lsp in a terminal to see its errors' })
    return
  end
  local resp = compat.request_sync(c, 'workspace/executeCommand', {
    command = protocol.command.status,
    arguments = {},
  }, M.timeout_ms)
  if not resp or resp.err or type(resp.result) ~= 'table' then
    local why = resp and resp.err and (resp.err.message or vim.inspect(resp.err)) or 'no answer'
    h.error('the status request failed: ' .. tostring(why))
    return
  end
  local s = resp.result
  if s.level == protocol.level.error then
    h.error('engine: ' .. tostring(s.text) .. (s.tooltip and ('\n' .. s.tooltip) or ''), {
      'Is the engine running? Check settings.baseUrl (or REIKA_BASE_URL).',
    })
  else
    h.ok('engine: reachable' .. (s.model and s.model ~= '' and (', model ' .. s.model) or ''))
  end
  local source = s.windowSource
  if source == 'none' or source == nil or source == vim.NIL then
    h.warn('context window: unknown (nothing is shed or folded)', {
      "Set settings.contextWindow (or REIKA_CONTEXT_WINDOW) to the engine's window",
    })
  else
    h.ok(string.format('context window: %s (from %s)', tostring(s.window), source))
  end
  if s.level == protocol.level.warning then
    h.warn(string.format('status: %s', tostring(s.text)), {
      'The window is past 80% of the shed point: old tool output will be shed soon.',
      ':ReikaCompact folds old rounds into a recap now; :ReikaNew starts afresh.',
    })
  else
    h.info('status: ' .. tostring(s.text))
  end
end

-- check_features says what this Neovim has of the plugin, and what it
-- does instead of what it lacks.
local function check_features(h)
  local ok, why = require('reika.chat').has_treesitter()
  if ok then
    h.ok('transcript: Markdown highlighted with the treesitter markdown parser')
  else
    h.info('transcript: Markdown highlighted with the markdown syntax (' .. why .. ')')
  end
  if compat.has('0.9') then
    h.ok('approvals: asynchronous pickers (telescope, fzf-lua, snacks) can answer')
  else
    h.info(
      'approvals: Neovim before 0.9 needs the answer at once: a picker that answers later'
        .. ' is replaced by the built-in prompt, and the diff tab of an edit is answered'
        .. ' with the built-in prompt instead of its keys'
    )
  end
end

function M.check()
  local h = compat.health()
  h.start('reika')
  local v = vim.version()
  h.info(string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch))
  local o = client.options()
  local err = config.validate_settings(o.settings)
  if err then
    h.error(err)
  end
  h.info('setup: ' .. (require('reika').did_setup and 'called' or 'not called (defaults)'))
  check_features(h)
  if check_binary(h, o) then
    check_server(h)
  end
end

return M
