-- The statusline API of require('reika') over the status store, without a
-- server: statuses are fed as the reika/status handler would.
local reika = require('reika')
local status = require('reika.status')
local client = require('reika.client')
local colour = require('reika.colour')
local compat = require('reika.compat')
local spinner = require('reika.spinner')

local handler = client.handlers()['reika/status']

-- feed hands a status to the handler as client id would (each client
-- has its record, reika.state, which holds its status).
local function feed(id, s)
  if not client.state.get(id) then
    client.state.add(id, '/tmp/status-' .. id)
  end
  handler(nil, s, { client_id = id, method = 'reika/status' })
end

local function reset()
  client.state.reset()
  status.last = nil
  status.redraw()
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
    feed(1, { text = 'ctx 11k/16k (88% of 13k)', level = 'warning', busy = false })
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

  t.it('uses the NC groups in the statusline of a window that is not current', function()
    feed(1, { text = 'ctx 16k/24k (81% of 20k)', level = 'warning' })
    vim.cmd('silent! only')
    vim.cmd('split')
    local current = vim.api.nvim_get_current_win()
    local other
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= current then
        other = w
      end
    end
    local line = "%{%v:lua.require'reika'.statusline_item()%}"
    local cur = vim.api.nvim_eval_statusline(line, { winid = current, highlights = true })
    local nc = vim.api.nvim_eval_statusline(line, { winid = other, highlights = true })
    t.eq('ReikaStatusWarn', cur.highlights[1].group)
    t.eq('ReikaStatusWarnNC', nc.highlights[1].group)
    t.eq(cur.str, nc.str)
    -- With %! Neovim names the window in g:statusline_winid instead.
    _G.reika_test_hl = function()
      return reika.statusline_hl()
    end
    local bang = vim.api.nvim_eval_statusline('%{v:lua.reika_test_hl()}', { winid = other })
    t.eq('ReikaStatusWarnNC', bang.str)
    vim.g.statusline_winid = other
    t.eq('ReikaStatusWarnNC', reika.statusline_hl(), 'while %! draws another window')
    vim.g.statusline_winid = nil
    t.eq('ReikaStatusWarn', reika.statusline_hl())
    vim.cmd('only')
  end)

  t.it("shows the status of the buffer's workspace when several run", function()
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
      reset()
      feed(5, { text = 'ctx 1k', level = 'ok' })
      client.state.get(5).stopping = true
      client.on_exit(5, exit[1], exit[2])
      t.eq('', reika.statusline(), vim.inspect(exit))
      t.eq(nil, client.state.get(5), 'the record is gone')
    end
  end)

  t.it('takes an exit with code 0 for a stop asked through Neovim (LSP shutdown)', function()
    reset()
    feed(6, { text = 'ctx 1k', level = 'ok' })
    client.on_exit(6, 0, 0)
    t.eq('', reika.statusline())
    t.falsy(client.state.workspace('/tmp/status-6').failed, 'autostart stays on')
  end)

  t.it('shows any exit that was not asked for, by a signal or with a code', function()
    local notes = {}
    local real_notify = vim.notify
    vim.notify = function(msg, level)
      notes[#notes + 1] = { msg = msg, level = level }
    end
    local cases = {
      { 0, 9, 'killed by SIGKILL %(signal 9%)', 'killed by SIGKILL' },
      { 0, 15, 'killed by SIGTERM %(signal 15%)', 'killed by SIGTERM' },
      { 2, 0, 'exited with code 2', 'exited with code 2' },
      { 1, 0, 'exited with code 1', 'exited with code 1' },
    }
    for i, case in ipairs(cases) do
      local id = 10 + i
      feed(id, { text = 'ctx 1k', level = 'ok', busy = true })
      client.on_exit(id, case[1], case[2])
      t.eq('reika-lsp stopped', reika.statusline(), vim.inspect(case))
      t.eq('error', reika.statusline_level())
      t.eq(false, reika.status().busy)
      t.matches(case[3], reika.status().tooltip)
      t.matches('^reika: server ' .. case[4] .. '; any :Reika command restarts it$', notes[i].msg)
      t.eq(vim.log.levels.ERROR, notes[i].level)
      t.eq(true, client.state.workspace('/tmp/status-' .. id).failed, 'no autostart')
    end
    vim.notify = real_notify
  end)
end)

t.describe('busy sign', function()
  t.it('spins before the chip while a turn runs, and stops with it', function()
    reset()
    local frames = client.options().spinner
    t.eq(10, #frames, 'the default spinner')
    feed(1, { text = 'ctx 3.1k/24k (16% of 20k)', level = 'ok', busy = true })
    t.truthy(spinner.running(), 'the timer runs')
    local first = reika.statusline()
    t.eq(frames[1] .. ' ctx 3.1k/24k (16% of 20k)', first)
    local redrawn = 0
    local real_refresh = status.refresh
    status.refresh = function()
      redrawn = redrawn + 1
      real_refresh()
    end
    t.wait('the next frame', function()
      return spinner.frame() ~= frames[1]
    end)
    status.refresh = real_refresh
    t.truthy(redrawn >= 1, 'the statuslines are redrawn for it')
    t.eq(frames[2] .. ' ctx 3.1k/24k (16% of 20k)', reika.statusline())
    t.matches('^%%#ReikaStatus#' .. frames[2], reika.statusline_item())
    feed(1, { text = 'ctx 4k/24k (20% of 20k)', level = 'ok', busy = false })
    t.falsy(spinner.running(), 'the timer stops')
    t.eq('ctx 4k/24k (20% of 20k)', reika.statusline())
  end)

  t.it('keeps spinning while any workspace runs a turn', function()
    reset()
    feed(1, { text = 'a', level = 'ok', busy = true })
    feed(2, { text = 'b', level = 'ok', busy = false })
    t.truthy(spinner.running())
    feed(1, { text = 'a', level = 'ok', busy = false })
    t.falsy(spinner.running())
  end)

  t.it('takes its frames from setup, and one frame stays still', function()
    reset()
    reika.setup({ autostart = false, spinner = { '*' } })
    feed(1, { text = 'ctx 1k', level = 'ok', busy = true })
    t.eq('* ctx 1k', reika.statusline())
    t.falsy(spinner.running(), 'no timer for one frame')
    feed(1, { text = 'ctx 1k', level = 'ok', busy = false })
    reika.setup({ autostart = false })
  end)

  t.it('never shows the chip twice beside progress()', function()
    reset()
    feed(1, { text = 'ctx 3.1k/24k (16% of 20k)', level = 'ok', busy = true })
    local progress = require('reika.progress')
    local real_get = progress.get
    -- The running turn's last report, as the server sends it.
    local entries = {
      tok = { title = 'Reika', message = 'round 7 · read main.go · ctx 3.1k/24k (16% of 20k)' },
    }
    progress.get = function()
      return require('reika.format').progress_text(entries)
    end
    local real_current = client.current
    client.current = function()
      return { id = 1 }
    end
    local line = "%{v:lua.require'reika'.progress()} %{%v:lua.require'reika'.statusline_item()%}"
    local r = vim.api.nvim_eval_statusline(line, {})
    client.current = real_current
    progress.get = real_get
    local frame = client.options().spinner[1]
    t.eq('Reika: round 7 · read main.go ' .. frame .. ' ctx 3.1k/24k (16% of 20k)', r.str)
    local _, n = r.str:gsub('ctx ', '')
    t.eq(1, n, 'the chip once')
    feed(1, { text = 'ctx 3.1k/24k (16% of 20k)', level = 'ok', busy = false })
  end)
end)

-- hl gives a group's definition in compat.get_hl's shape.
local hl = compat.get_hl

local function clear_chip_groups()
  for _, g in ipairs(status.groups) do
    vim.cmd('highlight clear ' .. g.name)
  end
end

-- fits checks that a chip group shows the accent colours on exactly the
-- background of its base group, in the GUI and in the terminal, and that
-- its GUI text reads there: the accent itself when it does, else one that
-- does.
local function fits(name, base, gui, cterm)
  local chip, line = status.shown(hl(name)), status.shown(hl(base))
  t.eq(line.bg, chip.bg, name .. ': the GUI background of ' .. base)
  t.eq(line.ctermbg, chip.ctermbg, name .. ': the terminal background of ' .. base)
  t.eq(cterm, chip.ctermfg, name .. ': the terminal text colour')
  if type(line.bg) ~= 'number' or colour.contrast(gui, line.bg) >= 3 then
    t.eq(gui, chip.fg, name .. ': the GUI text colour')
  else
    t.neq(gui, chip.fg, name .. ': the accent does not read on ' .. base)
    t.truthy(colour.contrast(chip.fg, line.bg) >= 3, name .. ': the GUI text reads')
  end
end

t.describe('highlights', function()
  local warn, err = 0xffaa00, 0xff0000
  t.before_each(function()
    vim.api.nvim_set_hl(0, 'DiagnosticWarn', { fg = warn, ctermfg = 3 })
    vim.api.nvim_set_hl(0, 'DiagnosticError', { fg = err, ctermfg = 1 })
    clear_chip_groups()
  end)

  t.it('fit a reversed StatusLine with no colours (cterm and gui)', function()
    -- Neovim 0.7's default StatusLine, and 0.10's in the terminal palette.
    vim.api.nvim_set_hl(
      0,
      'StatusLine',
      { reverse = true, bold = true, cterm = { reverse = true } }
    )
    vim.api.nvim_set_hl(0, 'StatusLineNC', { reverse = true, cterm = { reverse = true } })
    status.define_highlights()
    local h = hl('ReikaStatusWarn')
    t.eq(true, h.reverse, 'reversed like StatusLine (gui)')
    t.eq(true, h.cterm_reverse, 'reversed like StatusLine (cterm)')
    t.eq(warn, h.bg, 'the text colour is the background of a reversed group')
    t.eq(3, h.ctermbg)
    t.eq(nil, h.ctermfg, "the terminal's foreground, as StatusLine's background")
    t.eq('default fg', status.shown(hl('StatusLine')).ctermbg)
    fits('ReikaStatusWarn', 'StatusLine', warn, 3)
    fits('ReikaStatusError', 'StatusLine', err, 1)
    fits('ReikaStatusWarnNC', 'StatusLineNC', warn, 3)
    fits('ReikaStatusErrorNC', 'StatusLineNC', err, 1)
  end)

  t.it('fit a reversed StatusLine with colours', function()
    vim.api.nvim_set_hl(0, 'StatusLine', {
      fg = 0x111111,
      bg = 0xeeeeee,
      reverse = true,
      ctermfg = 0,
      ctermbg = 7,
      cterm = { reverse = true },
    })
    status.define_highlights()
    fits('ReikaStatusWarn', 'StatusLine', warn, 3)
    t.eq(0x111111, status.shown(hl('ReikaStatusWarn')).bg)
    t.eq(0, status.shown(hl('ReikaStatusWarn')).ctermbg)
  end)

  t.it('fit explicit backgrounds', function()
    vim.api.nvim_set_hl(
      0,
      'StatusLine',
      { fg = 0xffffff, bg = 0x202020, ctermfg = 15, ctermbg = 236 }
    )
    vim.api.nvim_set_hl(0, 'StatusLineNC', { fg = 0x999999, bg = 0x333333, ctermbg = 238 })
    status.define_highlights()
    local h = hl('ReikaStatusWarn')
    t.eq({ warn, 0x202020, 3, 236 }, { h.fg, h.bg, h.ctermfg, h.ctermbg })
    t.eq(nil, h.reverse)
    t.eq(nil, h.cterm_reverse)
    t.eq(true, h.bold)
    fits('ReikaStatusWarn', 'StatusLine', warn, 3)
    fits('ReikaStatusErrorNC', 'StatusLineNC', err, 1)
    t.eq(0x333333, hl('ReikaStatusErrorNC').bg)
  end)

  t.it('fit GUI colours with a reversed terminal palette (Neovim 0.10 style)', function()
    vim.api.nvim_set_hl(
      0,
      'StatusLine',
      { fg = 0x07080d, bg = 0xc4c6cd, cterm = { reverse = true } }
    )
    status.define_highlights()
    local h = hl('ReikaStatusWarn')
    t.eq(nil, h.reverse)
    t.eq(true, h.cterm_reverse)
    fits('ReikaStatusWarn', 'StatusLine', warn, 3)
  end)

  t.it("fit this Neovim's own default colours", function()
    vim.cmd('highlight clear')
    pcall(vim.cmd, 'colorscheme default')
    clear_chip_groups()
    status.define_highlights()
    for _, level in ipairs({ 'Warn', 'Error' }) do
      local gui, cterm = hl('Diagnostic' .. level).fg, hl('Diagnostic' .. level).ctermfg
      fits('ReikaStatus' .. level, 'StatusLine', gui, cterm)
      fits('ReikaStatus' .. level .. 'NC', 'StatusLineNC', gui, cterm)
    end
  end)

  t.it('keep the text readable on a light StatusLine', function()
    -- Neovim 0.10's defaults with 'termguicolors': NvimLightYellow on
    -- NvimLightGrey3 has a contrast of 1.3.
    vim.api.nvim_set_hl(0, 'DiagnosticWarn', { fg = 0xfce094, ctermfg = 11 })
    vim.api.nvim_set_hl(
      0,
      'StatusLine',
      { fg = 0x2c2e33, bg = 0xc4c6cd, cterm = { reverse = true } }
    )
    status.define_highlights()
    local h = hl('ReikaStatusWarn')
    t.truthy(colour.contrast(h.fg, 0xc4c6cd) >= 3, string.format('#%06x reads', h.fg))
    t.eq(11, h.ctermbg, 'the palette colour is kept')
    fits('ReikaStatusWarn', 'StatusLine', 0xfce094, 11)
    -- On a dark StatusLine the accent itself reads, and is kept.
    vim.api.nvim_set_hl(0, 'StatusLine', { fg = 0xe0e2ea, bg = 0x2c2e33 })
    status.define_highlights()
    t.eq(0xfce094, hl('ReikaStatusWarn').fg)
  end)

  t.it('link the ok groups to StatusLine and StatusLineNC', function()
    vim.api.nvim_set_hl(0, 'StatusLine', { fg = 0xffffff, bg = 0x202020 })
    vim.api.nvim_set_hl(0, 'StatusLineNC', { fg = 0x999999, bg = 0x333333 })
    status.define_highlights()
    t.eq(0x202020, hl('ReikaStatus').bg)
    t.eq(0x333333, hl('ReikaStatusNC').bg)
  end)

  t.it('follow a new StatusLine, and leave a user definition alone', function()
    vim.api.nvim_set_hl(0, 'StatusLine', { fg = 0xffffff, bg = 0x202020 })
    status.define_highlights()
    vim.api.nvim_set_hl(0, 'StatusLine', { fg = 0xffffff, bg = 0x404040 })
    status.define_highlights()
    t.eq(0x404040, hl('ReikaStatusWarn').bg, 'follows StatusLine')
    vim.api.nvim_set_hl(0, 'ReikaStatusWarn', { fg = 0x00ff00 })
    status.define_highlights()
    t.eq(0x00ff00, hl('ReikaStatusWarn').fg, "the user's own wins")
    t.eq(0x404040, hl('ReikaStatusError').bg, 'the others still follow')
  end)

  t.it('leave a definition made before setup alone', function()
    status.derived = {}
    vim.api.nvim_set_hl(0, 'ReikaStatusError', { fg = 0x0000ff })
    status.define_highlights()
    t.eq(0x0000ff, hl('ReikaStatusError').fg)
  end)
end)

-- lualine_draw renders a component the way lualine does (its
-- component.lua draw and highlight.lua): nothing unless cond() is true;
-- the function's result, called with (self, is_focused), goes into the
-- statusline as it is; color is called with { section = ... } and gives
-- nil (the section's colours), a table { fg, bg, gui } (fg '#rrggbb' or a
-- palette number 0-255) or a group name. Returns what the statusline
-- shows and the group of the text.
local function lualine_draw(component, section)
  if component.cond ~= nil and component.cond() ~= true then
    return '', nil
  end
  local text = component[1]({ options = component }, true)
  local group = 'lualine_' .. section .. '_normal'
  vim.api.nvim_set_hl(0, group, { fg = 0xdddddd, bg = 0x303030, ctermfg = 252, ctermbg = 236 })
  local color = component.color and component.color({ section = section })
  if type(color) == 'string' then
    group = color
  elseif type(color) == 'table' then
    group = 'lualine_' .. section .. '_reika_normal'
    local def = { bg = 0x303030, ctermbg = 236, bold = color.gui == 'bold' or nil }
    if type(color.fg) == 'number' then
      def.ctermfg = color.fg
    elseif type(color.fg) == 'string' then
      def.fg = tonumber(color.fg:sub(2), 16)
    end
    vim.api.nvim_set_hl(0, group, def)
  end
  local line = '%#' .. group .. '#' .. text
  local r = vim.api.nvim_eval_statusline(line, { highlights = true })
  return r.str, r.highlights[1] and r.highlights[1].group
end

t.describe('lualine component', function()
  t.before_each(function()
    vim.api.nvim_set_hl(
      0,
      'StatusLine',
      { fg = 0xffffff, bg = 0x202020, ctermfg = 15, ctermbg = 236 }
    )
    vim.api.nvim_set_hl(0, 'DiagnosticWarn', { fg = 0xffaa00, ctermfg = 3 })
    vim.api.nvim_set_hl(0, 'DiagnosticError', { fg = 0xff0000, ctermfg = 1 })
    clear_chip_groups()
    status.define_highlights()
    reset()
  end)

  t.it('is hidden before the first status and takes extra fields', function()
    local c = reika.lualine({ icon = 'R' })
    t.eq('R', c.icon)
    t.eq(false, c.cond())
    t.eq('', (lualine_draw(c, 'x')))
  end)

  t.it('shows the chip with its % intact, in the section colours when ok', function()
    local c = reika.lualine()
    feed(1, { text = 'ctx 16k/24k (81% of 20k)', level = 'ok' })
    local shown, group = lualine_draw(c, 'x')
    t.eq('ctx 16k/24k (81% of 20k)', shown)
    t.eq('lualine_x_normal', group)
    t.eq(nil, c.color({ section = 'x' }))
  end)

  t.it('colours warnings and errors by level, GUI or palette', function()
    local c = reika.lualine()
    feed(1, { text = 'ctx 11k/16k (88% of 13k)', level = 'warning' })
    vim.o.termguicolors = true
    local shown, group = lualine_draw(c, 'x')
    t.eq('ctx 11k/16k (88% of 13k)', shown)
    t.eq('lualine_x_reika_normal', group)
    t.eq({ fg = '#ffaa00', gui = 'bold' }, c.color({ section = 'x' }))
    vim.o.termguicolors = false
    t.eq({ fg = 3, gui = 'bold' }, c.color({ section = 'x' }), 'the palette colour')
    feed(1, { text = 'reika-lsp stopped', level = 'error' })
    t.eq({ fg = 1, gui = 'bold' }, c.color({ section = 'x' }))
    vim.o.termguicolors = true
    t.eq({ fg = '#ff0000', gui = 'bold' }, c.color({ section = 'x' }))
    -- A reversed StatusLine changes the groups, not the text colour.
    vim.api.nvim_set_hl(0, 'StatusLine', { reverse = true, cterm = { reverse = true } })
    clear_chip_groups()
    status.define_highlights()
    t.eq({ fg = '#ff0000', gui = 'bold' }, c.color({ section = 'x' }))
    vim.o.termguicolors = false
    t.eq({ fg = 1, gui = 'bold' }, c.color({ section = 'x' }))
  end)

  t.it('shows the busy sign', function()
    local c = reika.lualine()
    feed(1, { text = 'ctx 1k', level = 'ok', busy = true })
    t.matches('^' .. vim.pesc(spinner.frame()) .. ' ctx 1k$', (lualine_draw(c, 'x')))
    feed(1, { text = 'ctx 1k', level = 'ok', busy = false })
  end)
end)
