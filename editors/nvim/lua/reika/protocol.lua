-- The names of reika-lsp's editor protocol (docs/protocol.md), mirrored in one
-- place. The server, the VS Code extension (src/protocol.ts) and this file
-- change together.
local M = {}

-- The client's name in vim.lsp (and in vim.lsp.config on Neovim 0.11+).
M.client_name = 'reika'

-- workspace/executeCommand commands.
M.command = {
  ask = 'reika.ask',
  compact = 'reika.compact',
  cancel = 'reika.cancel',
  status = 'reika.status',
  save = 'reika.save',
  new_session = 'reika.newSession',
  transcript = 'reika.transcript',
  commands = 'reika.commands',
  sessions = 'reika.sessions',
}

-- Server -> client notifications.
M.notification = {
  status = 'reika/status',
  transcript = 'reika/transcript',
}

-- The code action the server offers once a session has a turn.
M.code_action = {
  title = 'Compact context',
  kind = 'source.compactContext',
}

-- reika.ask result statuses.
M.ask_status = {
  done = 'done',
  cancelled = 'cancelled',
  error = 'error',
}

-- Status levels (reika/status `level`).
M.level = {
  ok = 'ok',
  warning = 'warning',
  error = 'error',
}

-- Where the window size came from (reika/status `windowSource`).
M.window_sources = { 'setting', 'endpoint', 'catalog', 'overflow', 'none' }

-- Transcript event kinds (reika/transcript `kind`).
M.event = {
  user = 'user',
  assistant = 'assistant',
  reasoning = 'reasoning',
  tool_call = 'tool_call',
  tool_result = 'tool_result',
  note = 'note',
  shed = 'shed',
  fold = 'fold',
  info = 'info',
  error = 'error',
}

-- Approval actions of window/showMessageRequest, in the server's order.
M.approval_actions = { 'Allow', 'Allow for this session', 'Deny' }

-- The settings (docs/design.md §5, agent/settings.go SettingNames()) and the type
-- of each value. They go to the server as initializationOptions.reika and as
-- the `reika` section of workspace/configuration. An 'integer' is a whole
-- number of at least `min` (default 0), or, where `values` is given, one of
-- those strings instead; any other type with `values` must be one of them.
M.settings = {
  { name = 'baseUrl', type = 'string' },
  { name = 'model', type = 'string' },
  { name = 'apiKeyEnv', type = 'string' },
  { name = 'apiKeyFile', type = 'string' },
  { name = 'profile', type = 'string' },
  { name = 'contextWindow', type = 'integer' },
  { name = 'minGenTokens', type = 'integer' },
  { name = 'maxTokens', type = 'integer' },
  { name = 'repoMapBudget', type = 'integer' },
  { name = 'reasoningRounds', type = 'integer' },
  { name = 'minimal', type = 'boolean' },
  { name = 'debug', type = 'boolean' },
  { name = 'approve', type = 'string', values = { 'ask', 'edits', 'all' } },
  { name = 'modelsUrl', type = 'string' },
  { name = 'fetchAllowHosts', type = 'string' },
  { name = 'cacheReuse', type = 'integer', min = 1, values = { 'auto', 'off' } },
  { name = 'mode', type = 'string' },
  { name = 'engineRetry', type = 'integer' },
  { name = 'mcpAllow', type = 'string' },
}

-- The settings section name.
M.settings_section = 'reika'

return M
