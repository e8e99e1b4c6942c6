-- plugin/reika.lua: the commands exist before anything else loads.
vim.cmd('runtime plugin/reika.lua')

t.describe('plugin/reika.lua', function()
  t.it('defines the commands without loading the plugin', function()
    local cmds = vim.api.nvim_get_commands({})
    for _, name in ipairs({
      'ReikaAsk',
      'ReikaCompact',
      'ReikaCancel',
      'ReikaSave',
      'ReikaNew',
      'ReikaTranscript',
      'ReikaStatus',
    }) do
      t.truthy(cmds[name], name .. ' defined')
    end
    t.eq('*', cmds.ReikaAsk.nargs)
    t.truthy(cmds.ReikaAsk.range ~= nil and cmds.ReikaAsk.range ~= '', 'ReikaAsk takes a range')
    t.eq('?', cmds.ReikaSave.nargs)
    t.eq('file', cmds.ReikaSave.complete)
    t.eq(nil, package.loaded['reika'], 'reika not loaded')
    t.eq(nil, package.loaded['reika.client'], 'reika.client not loaded')
  end)

  t.it('is tiny', function()
    local path = vim.api.nvim_get_runtime_file('plugin/reika.lua', false)[1]
    t.truthy(#vim.fn.readfile(path) <= 30, 'plugin/reika.lua stays under 30 lines')
  end)

  t.it('loads once', function()
    vim.api.nvim_del_user_command('ReikaNew')
    vim.cmd('runtime plugin/reika.lua')
    t.eq(nil, vim.api.nvim_get_commands({}).ReikaNew)
  end)
end)

t.describe('setup', function()
  t.it('raises errors in the options', function()
    t.errors('unknown option "bogus"', require('reika').setup, { bogus = true })
  end)

  t.it('sets no keymaps by default and the chosen ones on request', function()
    local reika = require('reika')
    reika.setup({ autostart = false })
    t.eq('', vim.fn.maparg('<leader>ra', 'n'))
    reika.setup({ autostart = false, keymaps = { ask = '<leader>aa', compact = false } })
    t.eq('<Cmd>ReikaAsk<CR>', vim.fn.maparg('<leader>aa', 'n'))
    t.eq(':ReikaAsk<CR>', vim.fn.maparg('<leader>aa', 'x'))
    t.eq('', vim.fn.maparg('<leader>rc', 'n'))
    t.eq('<Cmd>ReikaTranscript<CR>', vim.fn.maparg('<leader>rt', 'n'))
  end)

  t.it('does not start a server for buffers outside a workspace', function()
    require('reika').setup({
      cmd = { 'reika-lsp-that-does-not-exist' },
      root_markers = { 'no-such-marker-7c1d' },
    })
    vim.cmd('edit ' .. vim.fn.tempname())
    t.eq({}, require('reika.client').clients())
  end)
end)
