-- The status item: the last reika/status of each client (kept in its
-- record), the highlight groups, and redrawing statuslines when a status
-- arrives.
local colour = require('reika.colour')
local compat = require('reika.compat')
local format = require('reika.format')
local spinner = require('reika.spinner')
local state = require('reika.state')

local M = {}

-- Each client's last status is its record's (reika.state) `status`.
-- The record whose status arrived last.
M.last = nil
-- The number of status notifications received (all clients).
M.count = 0

-- accent returns the colour a group shows its text in, for the GUI and
-- the terminal, from the first of names that has one: its foreground, or
-- its background where it is reversed.
local function accent(names)
  local gui, cterm
  for _, n in ipairs(names) do
    local h = compat.get_hl(n)
    if gui == nil then
      if h.reverse then
        gui = h.bg
      else
        gui = h.fg
      end
    end
    if cterm == nil then
      if h.cterm_reverse then
        cterm = h.ctermbg
      else
        cterm = h.ctermfg
      end
    end
  end
  return gui, cterm
end

-- derive returns the highlight definition of text in colour gui (GUI) and
-- cterm (terminal palette) on the background of base (a compat.get_hl
-- table), for the GUI and the terminal each. A base that is reversed
-- (Neovim's default StatusLine is cterm=reverse with no ctermbg) shows its
-- foreground as its background, or the terminal's own foreground when it
-- has none: the derived group is then reversed too, keeps base's
-- foreground, and carries the text colour as its background. Where base's
-- GUI colours are known, gui is moved towards base's text colour until it
-- reads on base's background (Neovim 0.10's light yellow on its light grey
-- StatusLine does not). Nil when there is no colour at all.
function M.derive(base, gui, cterm)
  if gui == nil and cterm == nil then
    return nil
  end
  local line = base.reverse and { fg = base.bg, bg = base.fg } or base
  if gui and line.fg and line.bg then
    gui = colour.readable(gui, line.bg, line.fg)
  end
  local def = { bold = true, cterm = { bold = true } }
  if base.reverse then
    def.reverse, def.fg, def.bg = true, base.fg, gui
  else
    def.fg, def.bg = gui, base.bg
  end
  if base.cterm_reverse then
    def.cterm.reverse, def.ctermfg, def.ctermbg = true, base.ctermfg, cterm
  else
    def.ctermfg, def.ctermbg = cterm, base.ctermbg
  end
  return def
end

-- shown returns the colours a group (a compat.get_hl table) puts on the
-- screen, reverse applied: { fg, bg } for the GUI, { ctermfg, ctermbg }
-- for the terminal. A colour the group does not set is the string
-- 'default fg' or 'default bg' (the terminal's or Normal's own), so a
-- reversed group with no colours shows 'default fg' as its background.
function M.shown(h)
  local out = {
    fg = h.fg or 'default fg',
    bg = h.bg or 'default bg',
    ctermfg = h.ctermfg or 'default fg',
    ctermbg = h.ctermbg or 'default bg',
  }
  if h.reverse then
    out.fg, out.bg = out.bg, out.fg
  end
  if h.cterm_reverse then
    out.ctermfg, out.ctermbg = out.ctermbg, out.ctermfg
  end
  return out
end

-- The chip's groups: per level, one for the current window's statusline
-- and one (NC) for the other windows'.
M.groups = {
  { name = 'ReikaStatus', base = 'StatusLine' },
  { name = 'ReikaStatusNC', base = 'StatusLineNC' },
  { name = 'ReikaStatusWarn', base = 'StatusLine', accent = { 'DiagnosticWarn', 'WarningMsg' } },
  {
    name = 'ReikaStatusWarnNC',
    base = 'StatusLineNC',
    accent = { 'DiagnosticWarn', 'WarningMsg' },
  },
  { name = 'ReikaStatusError', base = 'StatusLine', accent = { 'DiagnosticError', 'ErrorMsg' } },
  {
    name = 'ReikaStatusErrorNC',
    base = 'StatusLineNC',
    accent = { 'DiagnosticError', 'ErrorMsg' },
  },
}

-- derived[name] is what a derived group looked like when it was last set
-- here (compat.get_hl, inspected).
M.derived = {}

local function empty(h)
  return next(h) == nil
end

-- set_derived defines a derived group unless someone else did: a group
-- that is empty (new, or cleared by :highlight clear) or still as it was
-- set here is (re)defined; one defined by a colour scheme or the user is
-- left alone.
local function set_derived(name, def)
  local now = compat.get_hl(name)
  if not empty(now) and vim.inspect(now) ~= M.derived[name] then
    return
  end
  vim.api.nvim_set_hl(0, name, def)
  M.derived[name] = vim.inspect(compat.get_hl(name))
end

-- define_highlights (re)defines the chip's groups without overriding a
-- user's or a colour scheme's own: ReikaStatus and ReikaStatusNC link to
-- StatusLine and StatusLineNC (as defaults); the warning and error groups
-- show the colour of DiagnosticWarn and DiagnosticError (else WarningMsg,
-- ErrorMsg) on the background of StatusLine (StatusLineNC for the NC
-- ones), see derive, and follow StatusLine when it changes.
function M.define_highlights()
  M.highlights_defined = true
  for _, g in ipairs(M.groups) do
    local def = g.accent and M.derive(compat.get_hl(g.base), accent(g.accent))
    if def then
      set_derived(g.name, def)
    else
      vim.api.nvim_set_hl(0, g.name, { link = g.base, default = true })
    end
  end
  local links = {
    ReikaTranscriptSession = 'Title',
    ReikaTranscriptUser = 'Title',
    ReikaTranscriptReasoning = 'Comment',
    ReikaTranscriptTool = 'Function',
    ReikaTranscriptResult = 'Comment',
    ReikaTranscriptNote = 'Special',
    ReikaTranscriptShed = 'WarningMsg',
    ReikaTranscriptFold = 'WarningMsg',
    ReikaTranscriptInfo = 'Comment',
    ReikaTranscriptError = 'ErrorMsg',
  }
  for group, target in pairs(links) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

-- ensure_highlights defines the groups once (setup() redefines them on
-- every ColorScheme).
function M.ensure_highlights()
  if not M.highlights_defined then
    M.define_highlights()
  end
end

-- refresh redraws every statusline, and lualine's when it is loaded.
function M.refresh()
  vim.cmd('redrawstatus!')
  local lualine = package.loaded['lualine']
  if lualine and type(lualine.refresh) == 'function' then
    pcall(lualine.refresh, { place = { 'statusline' } })
  end
end

-- busy reports whether any client's status says a turn runs.
function M.busy()
  local busy = false
  state.each(function(rec)
    busy = busy or (rec.status ~= nil and rec.status.busy == true)
  end)
  return busy
end

-- redraw refreshes the statuslines, runs the busy sign while a turn runs,
-- and fires the User ReikaStatus autocmd.
function M.redraw()
  spinner.follow(M.busy(), function()
    M.refresh()
  end)
  M.refresh()
  vim.api.nvim_exec_autocmds('User', { pattern = 'ReikaStatus', modeline = false })
end

-- update stores a status from client_id and redraws.
function M.update(client_id, status)
  if type(status) ~= 'table' then
    return
  end
  local rec = state.find(client_id)
  if not rec then
    return
  end
  M.ensure_highlights()
  rec.status = status
  M.last = rec
  M.count = M.count + 1
  M.redraw()
end

-- forget drops a client's status (its server exited).
function M.forget(client_id)
  local rec = state.find(client_id)
  if rec then
    rec.status = nil
  end
  if M.last and M.last.id == client_id then
    M.last = nil
    state.each(function(r)
      if not M.last and r.status then
        M.last = r
      end
    end)
  end
  M.redraw()
end

-- get returns the status to show: that of a reika client attached to
-- bufnr when there is one, else the last one received.
function M.get(bufnr_clients)
  for _, id in ipairs(bufnr_clients or {}) do
    local rec = state.find(id)
    if rec and rec.status then
      return rec.status
    end
  end
  return M.last and M.last.status or nil
end

-- lualine_color returns the color of the lualine component for a status:
-- nil (the section's own colours) at level ok, else { fg, gui = 'bold' }
-- with fg the colour the warning or error group shows its text in: '#rrggbb'
-- with 'termguicolors' (or without a palette colour), else the palette
-- number, which lualine takes as a terminal colour.
function M.lualine_color(status)
  local level = format.level(status)
  if level == nil or level == 'ok' then
    return nil
  end
  local c = M.shown(compat.get_hl(format.hl_group(status)))
  local gui = type(c.fg) == 'number' and c.fg or nil
  local cterm = type(c.ctermfg) == 'number' and c.ctermfg or nil
  local fg = nil
  if gui and (vim.o.termguicolors or cterm == nil) then
    fg = string.format('#%06x', gui)
  elseif cterm then
    fg = cterm
  end
  if fg == nil then
    return nil
  end
  return { fg = fg, gui = 'bold' }
end

return M
