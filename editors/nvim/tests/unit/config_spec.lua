local config = require('reika.config')

t.describe('config.resolve', function()
  t.it('gives the defaults for no options', function()
    local o, err = config.resolve(nil)
    t.eq(nil, err)
    t.eq({ 'reika-lsp' }, o.cmd)
    t.eq({}, o.settings)
    t.eq(false, o.keymaps)
    t.eq(true, o.autostart)
    t.eq('botright vsplit', o.transcript.open)
    t.eq(3, o.transcript.result_lines)
  end)

  t.it('does not share tables with the defaults', function()
    local o = config.resolve({})
    o.transcript.open = 'tabnew'
    table.insert(o.root_markers, 'x')
    local again = config.resolve({})
    t.eq('botright vsplit', again.transcript.open)
    t.eq(config.defaults.root_markers, again.root_markers)
  end)

  t.it('replaces lists and merges option tables key by key', function()
    local o = config.resolve({
      cmd = { '/opt/reika-lsp', 'serve' },
      root_markers = { 'go.mod' },
      transcript = { result_lines = 0 },
    })
    t.eq({ '/opt/reika-lsp', 'serve' }, o.cmd)
    t.eq({ 'go.mod' }, o.root_markers)
    t.eq(0, o.transcript.result_lines)
    t.eq(true, o.transcript.follow, 'untouched transcript option keeps its default')
  end)

  t.it('takes a string cmd as one word', function()
    t.eq({ 'reika-lsp-dev' }, config.resolve({ cmd = 'reika-lsp-dev' }).cmd)
  end)

  t.it('takes cacheReuse as auto, off or a chunk size of at least 1', function()
    for _, v in ipairs({ 'auto', 'off', 1, 64 }) do
      local o, err = config.resolve({ settings = { cacheReuse = v } })
      t.eq(nil, err, vim.inspect(v))
      t.eq({ cacheReuse = v }, o.settings)
    end
  end)

  t.it('keeps the settings as given', function()
    local o = config.resolve({
      settings = { baseUrl = 'http://127.0.0.1:8000/v1', contextWindow = 32768, minimal = true },
    })
    t.eq(
      { baseUrl = 'http://127.0.0.1:8000/v1', contextWindow = 32768, minimal = true },
      o.settings
    )
  end)

  local reuse = 'settings.cacheReuse: want auto, off or a whole number >= 1'
  local bad = {
    { { nope = 1 }, 'unknown option "nope"' },
    { { cmd = {} }, 'cmd: want a non%-empty list' },
    { { cmd = { 1 } }, 'cmd: want a non%-empty list' },
    { { settings = { baseURL = 'x' } }, 'unknown setting "baseURL"' },
    { { settings = { apiKey = 'sk-1' } }, 'apiKeyEnv' },
    { { settings = { contextWindow = '32k' } }, 'settings.contextWindow: want a whole number' },
    { { settings = { contextWindow = 1.5 } }, 'settings.contextWindow: want a whole number' },
    { { settings = { maxTokens = -1 } }, 'settings.maxTokens: want a whole number' },
    { { settings = { minimal = 'yes' } }, 'settings.minimal: want a boolean' },
    { { settings = { approve = 'always' } }, 'settings.approve: want one of ask, edits, all' },
    { { settings = { cacheReuse = 0 } }, reuse },
    { { settings = { cacheReuse = 8.5 } }, reuse },
    { { settings = { cacheReuse = 'never' } }, reuse },
    { { settings = { cacheReuse = '64' } }, reuse },
    { { settings = { cacheReuse = true } }, reuse },
    { { keymaps = 'yes' }, 'keymaps: want true, false or a table' },
    { { keymaps = { fly = 'x' } }, 'keymaps: unknown action "fly"' },
    { { keymaps = { ask = '' } }, 'keymaps.ask: want a key sequence or false' },
    { { transcript = { open = 1 } }, 'transcript.open' },
    { { transcript = { size = 1 } }, 'transcript: unknown option "size"' },
    { { root_dir = 3 }, 'root_dir' },
    { { autostart = 'no' }, 'autostart' },
    { { on_attach = true }, 'on_attach' },
  }
  for _, case in ipairs(bad) do
    t.it('rejects ' .. vim.inspect(case[1], { newline = ' ', indent = '' }), function()
      local o, err = config.resolve(case[1])
      t.eq(nil, o)
      t.matches(case[2], err)
    end)
  end

  t.it('names every known setting when one is unknown', function()
    local _, err = config.resolve({ settings = { foo = 1 } })
    for _, name in ipairs(config.setting_names()) do
      t.matches(name, err)
    end
  end)
end)

t.describe('config.keymaps', function()
  t.it('sets none by default', function()
    t.eq({}, config.keymaps(config.resolve({})))
  end)
  t.it('sets the defaults for true', function()
    t.eq(config.default_keymaps, config.keymaps(config.resolve({ keymaps = true })))
  end)
  t.it('overrides and turns off single maps', function()
    local km = config.keymaps(config.resolve({ keymaps = { ask = '<leader>aa', cancel = false } }))
    t.eq('<leader>aa', km.ask)
    t.eq(nil, km.cancel)
    t.eq(config.default_keymaps.compact, km.compact)
  end)
end)

t.describe('config.settings_payload', function()
  t.it('encodes no settings as an empty JSON object, not []', function()
    t.eq('{}', vim.json.encode(config.settings_payload({})))
    t.eq('{}', vim.json.encode(config.settings_payload(nil)))
    t.eq('{"reika":{}}', vim.json.encode({ reika = config.settings_payload({}) }))
  end)
  t.it('encodes settings as an object', function()
    t.eq(
      { model = 'qwen3' },
      vim.json.decode(vim.json.encode(config.settings_payload({ model = 'qwen3' })))
    )
  end)
end)
