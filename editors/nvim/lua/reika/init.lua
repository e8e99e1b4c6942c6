-- reika-lsp for Neovim: setup, the statusline chip and the Lua API.
--
--   require('reika').setup({ settings = { baseUrl = 'http://127.0.0.1:8080/v1' } })
--   vim.o.statusline = "%f %= %{%v:lua.require'reika'.statusline_item()%}"
local client = require('reika.client')
local actions = require('reika.actions')
local commands = require('reika.commands')
local config = require('reika.config')
local format = require('reika.format')
local progress = require('reika.progress')
local spinner = require('reika.spinner')
local status = require('reika.status')
local util = require('reika.util')

local M = {}

local group = nil

local function set_keymaps(o)
  for action, lhs in pairs(config.keymaps(o)) do
    local spec = commands.keymap_actions[action]
    for _, mode in ipairs({ 'n', 'x' }) do
      if spec[mode] then
        vim.keymap.set(mode, lhs, spec[mode], { silent = true, desc = spec.desc })
      end
    end
  end
end

-- setup sets the options (see :help reika-setup) and starts reika-lsp for
-- workspaces as their files are opened. Calling it again applies new
-- settings to running servers. Errors in the options are raised.
function M.setup(user)
  local o, err = config.resolve(user)
  if not o then
    error('reika.setup: ' .. err, 2)
  end
  local first = client.opts == nil
  client.opts = o
  spinner.set_frames(o.spinner)
  status.define_highlights()
  group = vim.api.nvim_create_augroup('reika', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = group,
    desc = 'reika: redefine the statusline highlights',
    callback = status.define_highlights,
  })
  progress.setup(group, client.is_ours, function()
    vim.cmd('redrawstatus!')
  end)
  if o.autostart then
    vim.api.nvim_create_autocmd({ 'BufEnter', 'BufReadPost', 'BufNewFile' }, {
      group = group,
      desc = 'reika: attach file buffers to their workspace server',
      callback = function(args)
        client.autostart(args.buf)
      end,
    })
    -- Buffers already loaded (setup ran late, e.g. from a plugin manager).
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) then
        client.autostart(b)
      end
    end
  end
  set_keymaps(o)
  if not first then
    client.update_settings()
  end
  M.did_setup = true
end

-- options returns the options in force (the defaults before setup).
function M.options()
  return client.options()
end

-- drawn returns the buffer whose statusline is being drawn (that of the
-- current window outside a statusline) and whether its window is not the
-- current one.
local function drawn()
  local win, current = util.statusline_window()
  local ok, bufnr = pcall(vim.api.nvim_win_get_buf, win)
  if not ok then
    bufnr = vim.api.nvim_get_current_buf()
  end
  return bufnr, not current
end

local function current_status()
  local bufnr = drawn()
  return status.get(client.status_ids(bufnr))
end

-- status returns the last reika/status object (of the current buffer's
-- workspace, else the last one received), or nil before the first.
function M.status()
  local s = current_status()
  return s and vim.deepcopy(s) or nil
end

-- statusline returns the chip text ("ctx 16k/24k (81% of 20k)"), with the
-- busy sign before it while a turn runs ("⠋ ctx 3.1k/24k (16% of 20k)"),
-- '' before the server's first status. In a statusline it is the chip of
-- the window's buffer.
function M.statusline()
  client.options() -- the spinner's frames
  return format.busy_chip(current_status(), spinner.frame())
end

-- statusline_level returns 'ok', 'warning' or 'error', nil before the
-- first status.
function M.statusline_level()
  return format.level(current_status())
end

-- statusline_hl returns the chip's highlight group: ReikaStatus,
-- ReikaStatusWarn or ReikaStatusError, with NC appended in the statusline
-- of a window that is not the current one.
function M.statusline_hl()
  local _, inactive = drawn()
  return format.hl_group(current_status(), inactive)
end

-- statusline_item returns the chip in its highlight group, for
-- 'statusline' with %{% %}: "%{%v:lua.require'reika'.statusline_item()%}".
function M.statusline_item()
  local _, inactive = drawn()
  return format.statusline_item(current_status(), M.statusline(), inactive)
end

-- progress returns the running turn's progress message without the chip
-- ("Reika: round 3 · read src/a.go"), '' when idle.
function M.progress()
  local c = client.current(drawn(), false)
  return c and progress.get(c.id) or ''
end

-- lualine returns a lualine component showing the chip (and the busy
-- sign), hidden before the first status, coloured by level:
-- sections = { lualine_x = { require('reika').lualine() } }. Fields of o
-- override the component's (icon, separator, ...).
function M.lualine(o)
  local component = {
    function()
      -- lualine puts a function's text in the statusline as it is.
      return format.escape_statusline(M.statusline())
    end,
    cond = function()
      return M.statusline() ~= ''
    end,
    color = function()
      return status.lualine_color(current_status())
    end,
  }
  for k, v in pairs(o or {}) do
    component[k] = v
  end
  return component
end

-- client returns the reika-lsp client of a buffer's workspace (nil when
-- none runs).
function M.client(bufnr)
  return (client.current(bufnr or vim.api.nvim_get_current_buf(), false))
end

-- The commands as Lua functions (see :help reika-lua).
M.ask = actions.ask
M.compact = actions.compact
M.cancel = actions.cancel
M.save = actions.save
M.new_session = actions.new_session
M.transcript = actions.transcript
M.show_status = actions.show_status

-- stop stops reika-lsp: the server of bufnr's workspace, or every one
-- without a bufnr. Its exit shows nothing, even one that force ends with
-- SIGTERM.
function M.stop(bufnr, force)
  if bufnr == nil then
    client.stop_all(force)
    return
  end
  local c = client.current(bufnr, false)
  if c then
    client.stop(c, force)
  end
end

return M
