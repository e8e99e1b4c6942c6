-- Options of require('reika').setup(): defaults, merging and validation.
-- Pure: no editor state is read or changed here.
local protocol = require('reika.protocol')

local M = {}

-- The keymaps set when `keymaps = true`; a table of the same keys overrides
-- them one by one (false turns one off).
M.default_keymaps = {
  ask = '<leader>ra',
  prompt = '<leader>rp',
  mode = '<leader>rm',
  sessions = '<leader>rs',
  compact = '<leader>rc',
  cancel = '<leader>rx',
  transcript = '<leader>rt',
  new_session = '<leader>rn',
}

M.defaults = {
  -- The server command; a string is one word.
  cmd = { 'reika-lsp' },
  -- Extra environment variables for the server process.
  cmd_env = nil,
  -- docs/design.md §5 settings, sent as initializationOptions.reika and
  -- workspace/configuration section `reika`.
  settings = {},
  -- Files or directories that mark a workspace root, searched upwards from
  -- a buffer's directory.
  root_markers = { '.git', '.hg', '.svn', '.jj', 'AGENTS.md' },
  -- A root directory, or function(bufnr) -> root|nil, instead of markers.
  root_dir = nil,
  -- Start the server when a file buffer inside a workspace is entered.
  autostart = true,
  -- false (default), true for default_keymaps, or a table of them.
  keymaps = false,
  -- Ask about an edit with a side-by-side diff in a new tab page instead of
  -- the list prompt (reika.diffview).
  diff_approvals = true,
  transcript = {
    -- The Ex command that opens the transcript window.
    open = 'botright vsplit',
    -- Keep windows showing the transcript scrolled to its end while they
    -- are at the end.
    follow = true,
    -- Lines of each tool result shown (0 = only the summary line).
    result_lines = 3,
    -- Show the transcript (without moving the cursor) when a turn starts.
    open_on_ask = true,
  },
  -- function(client, bufnr) called when a buffer is attached.
  on_attach = nil,
  -- The busy sign before the chip while a turn runs: frames shown in turn
  -- (one frame: a sign that stays still).
  spinner = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' },
}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = tostring(k)
  end
  table.sort(keys)
  return keys
end

local function is_list_of_strings(v)
  if type(v) ~= 'table' then
    return false
  end
  local n = 0
  for k, x in pairs(v) do
    if type(k) ~= 'number' or type(x) ~= 'string' then
      return false
    end
    n = n + 1
  end
  return n == #v
end

local function copy(v)
  if type(v) ~= 'table' then
    return v
  end
  local out = {}
  for k, x in pairs(v) do
    out[k] = copy(x)
  end
  return out
end

local setting_specs = {}
for _, s in ipairs(protocol.settings) do
  setting_specs[s.name] = s
end

-- setting_names lists the settings in docs/design.md order.
function M.setting_names()
  local names = {}
  for i, s in ipairs(protocol.settings) do
    names[i] = s.name
  end
  return names
end

-- validate_settings checks a settings table: known keys, right types.
-- Returns an error message or nil.
function M.validate_settings(settings)
  if type(settings) ~= 'table' then
    return 'settings: want a table, got ' .. type(settings)
  end
  for _, k in ipairs(sorted_keys(settings)) do
    local v = settings[k]
    local spec = setting_specs[k]
    if not spec then
      local hint = ''
      if k == 'apiKey' then
        hint = ' (the key itself is never a setting: set apiKeyEnv to the name of'
          .. ' an environment variable that holds it, or REIKA_API_KEY)'
      end
      return string.format(
        'settings: unknown setting %q%s; known: %s',
        k,
        hint,
        table.concat(M.setting_names(), ', ')
      )
    end
    if spec.type == 'integer' then
      local min = spec.min or 0
      local word = spec.values ~= nil and type(v) == 'string' and vim.tbl_contains(spec.values, v)
      local whole = type(v) == 'number' and v == math.floor(v) and v >= min
      if not (word or whole) then
        local words = spec.values and (table.concat(spec.values, ', ') .. ' or ') or ''
        return string.format(
          'settings.%s: want %sa whole number >= %d, got %s',
          k,
          words,
          min,
          vim.inspect(v)
        )
      end
    elseif type(v) ~= spec.type then
      return string.format('settings.%s: want a %s, got %s', k, spec.type, vim.inspect(v))
    end
    if spec.values and spec.type ~= 'integer' and not vim.tbl_contains(spec.values, v) then
      return string.format(
        'settings.%s: want one of %s, got %q',
        k,
        table.concat(spec.values, ', '),
        v
      )
    end
  end
  return nil
end

local function validate_keymaps(v)
  if type(v) == 'boolean' then
    return nil
  end
  if type(v) ~= 'table' then
    return 'keymaps: want true, false or a table, got ' .. type(v)
  end
  for _, k in ipairs(sorted_keys(v)) do
    if M.default_keymaps[k] == nil then
      return string.format(
        'keymaps: unknown action %q; known: %s',
        k,
        table.concat(sorted_keys(M.default_keymaps), ', ')
      )
    end
    local lhs = v[k]
    if lhs ~= false and (type(lhs) ~= 'string' or lhs == '') then
      return string.format('keymaps.%s: want a key sequence or false, got %s', k, vim.inspect(lhs))
    end
  end
  return nil
end

local function validate_transcript(v)
  if type(v) ~= 'table' then
    return 'transcript: want a table, got ' .. type(v)
  end
  for _, k in ipairs(sorted_keys(v)) do
    local x = v[k]
    if k == 'open' then
      if type(x) ~= 'string' then
        return 'transcript.open: want an Ex command string, got ' .. vim.inspect(x)
      end
    elseif k == 'follow' or k == 'open_on_ask' then
      if type(x) ~= 'boolean' then
        return 'transcript.' .. k .. ': want a boolean, got ' .. vim.inspect(x)
      end
    elseif k == 'result_lines' then
      if type(x) ~= 'number' or x < 0 or x ~= math.floor(x) then
        return 'transcript.result_lines: want a whole number >= 0, got ' .. vim.inspect(x)
      end
    else
      return string.format(
        'transcript: unknown option %q; known: follow, open, open_on_ask, result_lines',
        k
      )
    end
  end
  return nil
end

local validators = {
  cmd = function(v)
    if type(v) == 'string' and v ~= '' then
      return nil
    end
    if is_list_of_strings(v) and #v > 0 then
      return nil
    end
    return 'cmd: want a non-empty list of strings, got ' .. vim.inspect(v)
  end,
  cmd_env = function(v)
    if v == nil or type(v) == 'table' then
      return nil
    end
    return 'cmd_env: want a table of environment variables, got ' .. type(v)
  end,
  settings = M.validate_settings,
  root_markers = function(v)
    if is_list_of_strings(v) then
      return nil
    end
    return 'root_markers: want a list of file names, got ' .. vim.inspect(v)
  end,
  root_dir = function(v)
    if v == nil or type(v) == 'string' or type(v) == 'function' then
      return nil
    end
    return 'root_dir: want a directory or function(bufnr), got ' .. type(v)
  end,
  autostart = function(v)
    if type(v) == 'boolean' then
      return nil
    end
    return 'autostart: want a boolean, got ' .. vim.inspect(v)
  end,
  diff_approvals = function(v)
    if type(v) == 'boolean' then
      return nil
    end
    return 'diff_approvals: want a boolean, got ' .. vim.inspect(v)
  end,
  keymaps = validate_keymaps,
  transcript = validate_transcript,
  on_attach = function(v)
    if v == nil or type(v) == 'function' then
      return nil
    end
    return 'on_attach: want a function, got ' .. type(v)
  end,
  spinner = function(v)
    if is_list_of_strings(v) and #v > 0 then
      return nil
    end
    return 'spinner: want a non-empty list of frames (strings), got ' .. vim.inspect(v)
  end,
}

-- resolve merges user options over the defaults and validates them.
-- Returns the options, or nil and an error message naming the bad option.
-- Lists (cmd, root_markers) replace the default; tables of options
-- (transcript) merge key by key; settings are the user's alone.
function M.resolve(user)
  user = user or {}
  if type(user) ~= 'table' then
    return nil, 'setup: want a table of options, got ' .. type(user)
  end
  for _, k in ipairs(sorted_keys(user)) do
    if validators[k] == nil then
      local known = table.concat(sorted_keys(validators), ', ')
      return nil, string.format('unknown option %q; known: %s', k, known)
    end
    local err = validators[k](user[k])
    if err then
      return nil, err
    end
  end
  local out = copy(M.defaults)
  for k, v in pairs(user) do
    if k == 'transcript' then
      for tk, tv in pairs(v) do
        out.transcript[tk] = tv
      end
    else
      out[k] = copy(v)
    end
  end
  if type(out.cmd) == 'string' then
    out.cmd = { out.cmd }
  end
  return out, nil
end

-- keymaps returns the action -> lhs table the options ask for (empty when
-- keymaps are off).
function M.keymaps(opts)
  local km = opts.keymaps
  if km == false or km == nil then
    return {}
  end
  local out = copy(M.default_keymaps)
  if type(km) == 'table' then
    for k, v in pairs(km) do
      out[k] = v or nil
    end
  end
  return out
end

-- settings_payload is the `reika` settings object for the wire: a JSON
-- object even when empty (Neovim encodes an empty Lua table as []).
function M.settings_payload(settings)
  if settings == nil or next(settings) == nil then
    return vim.empty_dict()
  end
  return copy(settings)
end

return M
