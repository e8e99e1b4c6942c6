-- doc/reika.txt documents what the plugin has, and doc/tags is up to date.
local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')
local doc = table.concat(vim.fn.readfile(plugin .. '/doc/reika.txt'), '\n')

local function has_tag(tag)
  return doc:find('*' .. tag .. '*', 1, true) ~= nil
end

t.describe('doc/reika.txt', function()
  t.it('has committed tags that helptags regenerates unchanged', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    vim.fn.writefile(vim.fn.readfile(plugin .. '/doc/reika.txt'), dir .. '/reika.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
    t.eq(
      vim.fn.readfile(dir .. '/tags'),
      vim.fn.readfile(plugin .. '/doc/tags'),
      'run: nvim --headless -c "helptags doc" -c q'
    )
  end)

  t.it('documents every command of reika.commands', function()
    local list = require('reika.commands').list
    for _, c in ipairs(list) do
      t.truthy(has_tag(':' .. c.name), ':' .. c.name .. ' has a help tag')
    end
    t.truthy(#list >= 7, 'found the commands')
  end)

  t.it('documents every setting', function()
    local section = doc:match('%*reika%-settings%*(.-)%*reika%-lua%*')
    t.truthy(section, 'settings section')
    for _, name in ipairs(require('reika.config').setting_names()) do
      t.truthy(section:find('\n    ' .. name .. ' ', 1, true), 'setting ' .. name)
    end
  end)

  t.it('documents every option of setup()', function()
    local section = doc:match('%*reika%-setup%*(.-)%*reika%-commands%*')
    for name in pairs(require('reika.config').defaults) do
      t.truthy(section:find('\n    ' .. name .. ' ', 1, true), 'option ' .. name)
    end
    for name in pairs(require('reika.config').defaults.transcript) do
      t.truthy(section:find('\n        ' .. name .. ' ', 1, true), 'transcript option ' .. name)
    end
  end)

  t.it('documents every function of the Lua API', function()
    local reika = require('reika')
    for name, v in pairs(reika) do
      if type(v) == 'function' then
        local tag = name == 'lualine' and 'reika-lualine' or ('reika.' .. name .. '()')
        t.truthy(has_tag(tag), 'reika.' .. name .. ' documented')
      end
    end
  end)

  t.it('documents every keymap action and buffer key', function()
    local section = doc:match('%*reika%-setup%*(.-)%*reika%-commands%*')
    for action, lhs in pairs(require('reika.config').default_keymaps) do
      t.truthy(section:find(action .. '%s+`' .. vim.pesc(lhs) .. '`'), 'keymap ' .. action)
    end
    t.truthy(doc:find('`' .. require('reika.chat').keys.yank_code .. '`', 1, true), 'gy')
    for _, k in ipairs(require('reika.diffview').keys) do
      t.truthy(doc:find('`' .. k.lhs .. '`', 1, true), 'diff key ' .. k.lhs)
    end
    local prompt = require('reika.prompt').keys
    for _, lhs in ipairs({ prompt.send_insert, prompt.older, prompt.newer, '<CR>' }) do
      t.truthy(doc:find('`' .. lhs .. '`', 1, true), 'prompt key ' .. lhs)
    end
  end)

  t.it('opens with :help', function()
    vim.cmd('set rtp^=' .. vim.fn.fnameescape(plugin))
    vim.cmd('help reika-statusline')
    t.eq('reika.txt', vim.fn.expand('%:t'))
    t.matches('reika%-statusline', vim.api.nvim_get_current_line())
  end)
end)

t.describe('README.md', function()
  local readme = table.concat(vim.fn.readfile(plugin .. '/README.md'), '\n')
  t.it('names every command, keymap action, option and buffer key', function()
    for _, c in ipairs(require('reika.commands').list) do
      t.truthy(readme:find(c.name, 1, true), c.name)
    end
    for action, lhs in pairs(require('reika.config').default_keymaps) do
      t.truthy(readme:find('| `' .. action .. '` | `' .. lhs .. '`', 1, true), 'keymap ' .. action)
    end
    for name in pairs(require('reika.config').defaults) do
      t.truthy(readme:find('| `' .. name .. '` |', 1, true), 'option ' .. name)
    end
    for name in pairs(require('reika.config').defaults.transcript) do
      t.truthy(readme:find('`' .. name .. '`', 1, true), 'transcript option ' .. name)
    end
    for _, k in ipairs(require('reika.diffview').keys) do
      t.truthy(readme:find('`' .. k.lhs .. '`', 1, true), 'diff key ' .. k.lhs)
    end
  end)

  t.it('has a lazy.nvim snippet', function()
    t.truthy(readme:find("dir = '[^']*editors/nvim'"), 'lazy.nvim spec')
  end)
end)
