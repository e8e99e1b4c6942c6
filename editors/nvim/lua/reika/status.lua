-- The status item: the last reika/status of each client, the highlight
-- groups, and redrawing statuslines when a status arrives.
local compat = require('reika.compat')
local format = require('reika.format')

local M = {}

-- by_client[id] = the last status object from that client.
M.by_client = {}
-- The client whose status arrived last.
M.last_client = nil
-- The number of status notifications received (all clients).
M.count = 0

local function from_group(names, attr)
  for _, n in ipairs(names) do
    local h = compat.get_hl(n)
    if h[attr] then
      return h[attr]
    end
  end
  return nil
end

-- define_highlights (re)defines the chip's groups as defaults, so a user's
-- own definitions win: ReikaStatus links to StatusLine; the warning and
-- error groups take their colour from DiagnosticWarn/DiagnosticError (or
-- WarningMsg/ErrorMsg) on the StatusLine background.
function M.define_highlights()
  M.highlights_defined = true
  vim.api.nvim_set_hl(0, 'ReikaStatus', { link = 'StatusLine', default = true })
  local bg = from_group({ 'StatusLine' }, 'bg')
  local ctermbg = from_group({ 'StatusLine' }, 'ctermbg')
  local function derived(name, sources)
    local def = {
      fg = from_group(sources, 'fg'),
      bg = bg,
      ctermfg = from_group(sources, 'ctermfg'),
      ctermbg = ctermbg,
      bold = true,
      default = true,
    }
    if def.fg == nil and def.ctermfg == nil then
      def = { link = sources[#sources], default = true }
    end
    vim.api.nvim_set_hl(0, name, def)
  end
  derived('ReikaStatusWarn', { 'DiagnosticWarn', 'WarningMsg' })
  derived('ReikaStatusError', { 'DiagnosticError', 'ErrorMsg' })
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

-- redraw refreshes every statusline (and lualine, when loaded) and fires
-- the User ReikaStatus autocmd.
function M.redraw()
  vim.cmd('redrawstatus!')
  local lualine = package.loaded['lualine']
  if lualine and type(lualine.refresh) == 'function' then
    pcall(lualine.refresh, { place = { 'statusline' } })
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'ReikaStatus', modeline = false })
end

-- update stores a status from client_id and redraws.
function M.update(client_id, status)
  if type(status) ~= 'table' then
    return
  end
  M.ensure_highlights()
  M.by_client[client_id] = status
  M.last_client = client_id
  M.count = M.count + 1
  M.redraw()
end

-- forget drops a client's status (its server exited).
function M.forget(client_id)
  M.by_client[client_id] = nil
  if M.last_client == client_id then
    M.last_client = next(M.by_client)
  end
  M.redraw()
end

-- get returns the status to show: that of a reika client attached to
-- bufnr when there is one, else the last one received.
function M.get(bufnr_clients)
  for _, id in ipairs(bufnr_clients or {}) do
    if M.by_client[id] then
      return M.by_client[id]
    end
  end
  if M.last_client then
    return M.by_client[M.last_client]
  end
  return nil
end

-- lualine_color returns a lualine color table for a status level: the
-- warning/error groups' foreground, nil (the section's colours) when ok.
function M.lualine_color(status)
  local level = format.level(status)
  if level == nil or level == 'ok' then
    return nil
  end
  local h = compat.get_hl(format.hl_group(status))
  if not h.fg then
    return nil
  end
  return { fg = string.format('#%06x', h.fg) }
end

return M
