-- The statusline API of require('reika') over the status store, without a
-- server: statuses are fed as the reika/status handler would.
local reika = require('reika')
local status = require('reika.status')
local client = require('reika.client')

local handler = client.handlers()['reika/status']

local function feed(id, s)
  handler(nil, s, { client_id = id, method = 'reika/status' })
end

local fired = 0
vim.api.nvim_create_autocmd('User', {
  pattern = 'ReikaStatus',
  callback = function()
    fired = fired + 1
  end,
})

t.describe('statusline', function()
  t.it('is empty before the first status', function()
    t.eq('', reika.statusline())
    t.eq(nil, reika.statusline_level())
    t.eq('ReikaStatus', reika.statusline_hl())
    t.eq('', reika.statusline_item())
    t.eq(nil, reika.status())
  end)

  t.it('follows each status notification and fires User ReikaStatus', function()
    local before = fired
    feed(1, { text = 'ctx 1.2k/16k (10% of 13k)', level = 'ok', busy = false })
    t.eq('ctx 1.2k/16k (10% of 13k)', reika.statusline())
    t.eq('ok', reika.statusline_level())
    t.eq('ReikaStatus', reika.statusline_hl())
    feed(1, { text = 'ctx 11k/16k (88% of 13k)', level = 'warning', busy = true })
    t.eq('ctx 11k/16k (88% of 13k)', reika.statusline())
    t.eq('warning', reika.statusline_level())
    t.eq('ReikaStatusWarn', reika.statusline_hl())
    t.eq('%#ReikaStatusWarn#ctx 11k/16k (88%% of 13k)%*', reika.statusline_item())
    feed(1, { text = 'ctx 11k', level = 'error' })
    t.eq('ReikaStatusError', reika.statusline_hl())
    t.eq(before + 3, fired, 'one User ReikaStatus per notification')
  end)

  t.it('returns a copy of the status', function()
    local s = reika.status()
    s.text = 'changed'
    t.eq('ctx 11k', reika.statusline())
  end)

  t.it('renders in a real statusline', function()
    feed(1, { text = 'ctx 16k/24k (81% of 20k)', level = 'warning' })
    vim.o.laststatus = 2
    vim.o.statusline = "%{%v:lua.require'reika'.statusline_item()%}"
    vim.cmd('redrawstatus')
    local r = vim.api.nvim_eval_statusline(vim.o.statusline, { highlights = true })
    t.eq('ctx 16k/24k (81% of 20k)', r.str)
    t.eq('ReikaStatusWarn', r.highlights[1].group)
  end)

  t.it('shows the status of the buffer\'s workspace when several run', function()
    feed(2, { text = 'other', level = 'ok' })
    t.eq('other', reika.statusline(), 'the last received without an attached client')
  end)

  t.it('refreshes lualine when it is loaded', function()
    local refreshed = 0
    package.loaded['lualine'] = {
      refresh = function(o)
        t.eq({ place = { 'statusline' } }, o)
        refreshed = refreshed + 1
      end,
    }
    feed(1, { text = 'x', level = 'ok' })
    package.loaded['lualine'] = nil
    t.eq(1, refreshed)
  end)

  t.it('drops a status when a stop was asked for, even one that ends by SIGTERM', function()
    for _, exit in ipairs({ { 0, 0 }, { 0, 15 }, { 1, 0 } }) do
      status.by_client = {}
      status.last_client = nil
      feed(5, { text = 'ctx 1k', level = 'ok' })
      client.roots[5] = '/tmp'
      client.stopping[5] = true
      client.on_exit(5, exit[1], exit[2])
      t.eq('', reika.statusline(), vim.inspect(exit))
      t.eq(nil, client.stopping[5])
    end
  end)

  t.it('shows any exit that was not asked for, by a signal or with a code', function()
    local notes = {}
    local real_notify = vim.notify
    vim.notify = function(msg, level)
      notes[#notes + 1] = { msg = msg, level = level }
    end
    local cases = {
      { 0, 9, 'killed by SIGKILL %(signal 9%)' },
      { 0, 15, 'killed by SIGTERM %(signal 15%)' },
      { 2, 0, 'exited with code 2' },
      { 0, 0, 'exited with code 0' },
    }
    for i, case in ipairs(cases) do
      local id = 10 + i
      feed(id, { text = 'ctx 1k', level = 'ok', busy = true })
      client.roots[id] = '/tmp/w' .. i
      client.on_exit(id, case[1], case[2])
      t.eq('reika-lsp stopped', reika.statusline(), vim.inspect(case))
      t.eq('error', reika.statusline_level())
      t.eq(false, reika.status().busy)
      t.matches(case[3], reika.status().tooltip)
      t.matches('^reika: reika%-lsp stopped %(' .. case[3] .. '%); the next :Reika', notes[i].msg)
      t.eq(vim.log.levels.ERROR, notes[i].level)
      t.eq(true, client.failed['/tmp/w' .. i], 'no autostart')
    end
    vim.notify = real_notify
  end)
end)

t.describe('highlights', function()
  t.it('defines the three chip groups as defaults a user can override', function()
    vim.api.nvim_set_hl(0, 'StatusLine', { fg = 0xffffff, bg = 0x202020 })
    vim.api.nvim_set_hl(0, 'DiagnosticWarn', { fg = 0xffaa00 })
    vim.api.nvim_set_hl(0, 'DiagnosticError', { fg = 0xff0000 })
    vim.api.nvim_set_hl(0, 'ReikaStatusWarn', {})
    vim.cmd('highlight clear ReikaStatusWarn')
    vim.cmd('highlight clear ReikaStatusError')
    status.define_highlights()
    local compat = require('reika.compat')
    t.eq(
      { fg = 0xffaa00, bg = 0x202020 },
      { fg = compat.get_hl('ReikaStatusWarn').fg, bg = compat.get_hl('ReikaStatusWarn').bg }
    )
    t.eq(0xff0000, compat.get_hl('ReikaStatusError').fg)
    t.eq(0x202020, compat.get_hl('ReikaStatus').bg, 'ReikaStatus links to StatusLine')
    -- A user's definition wins over the default.
    vim.api.nvim_set_hl(0, 'ReikaStatusWarn', { fg = 0x00ff00 })
    status.define_highlights()
    t.eq(0x00ff00, compat.get_hl('ReikaStatusWarn').fg)
  end)
end)

t.describe('lualine component', function()
  t.it('shows the chip, hides without one, and colours warnings', function()
    status.by_client = {}
    status.last_client = nil
    local c = reika.lualine({ icon = 'R' })
    t.eq('R', c.icon)
    t.eq(false, c.cond())
    feed(1, { text = 'ctx 11k/16k (88% of 13k)', level = 'warning' })
    t.eq(true, c.cond())
    t.eq('ctx 11k/16k (88% of 13k)', c[1]())
    t.eq({ fg = '#00ff00' }, c.color())
    feed(1, { text = 'ctx 2k', level = 'ok' })
    t.eq(nil, c.color(), 'ok keeps the section colours')
  end)
end)
