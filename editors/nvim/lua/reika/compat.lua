-- One place for the differences between Neovim 0.7.2 and later releases.
-- Newer APIs are used where they exist, so nothing deprecated is called
-- (and no deprecation warning shows) on any version.
local M = {}

-- has reports whether Neovim is at least version v ('0.8', '0.10', ...).
-- Tests replace it to walk the other branches.
function M.has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

-- get_clients lists every running LSP client (vim.lsp.get_clients on 0.10+,
-- get_active_clients before).
function M.get_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

-- request sends a request on a client (method call syntax on 0.11+).
function M.request(client, method, params, handler, bufnr)
  if M.has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

-- request_sync sends a request and waits (a hang guard, not a deadline).
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if M.has('0.11') then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.notify(client, method, params)
  if M.has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client, force)
  if M.has('0.11') then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if M.has('0.11') then
    return client:is_stopped()
  end
  return client.is_stopped()
end

-- start starts (or reuses) a client for config and attaches bufnr when
-- given. Returns the client id or nil.
--   0.11+: registers the config with vim.lsp.config(name, ...) and starts it
--          with vim.lsp.start (attach = false when there is no buffer).
--   0.8+:  vim.lsp.start with a buffer; vim.lsp.start_client without one.
--   0.7:   vim.lsp.start_client + vim.lsp.buf_attach_client.
function M.start(config, bufnr, reuse)
  if M.has('0.11') then
    vim.lsp.config(config.name, config)
    local resolved = vim.lsp.config[config.name]
    return vim.lsp.start(resolved, {
      bufnr = bufnr,
      attach = bufnr ~= nil,
      reuse_client = reuse,
    })
  end
  if M.has('0.8') and bufnr then
    local id
    -- 0.8 attaches the current buffer and ignores opts.bufnr.
    vim.api.nvim_buf_call(bufnr, function()
      id = vim.lsp.start(config, { bufnr = bufnr, reuse_client = reuse })
    end)
    return id
  end
  local id = vim.lsp.start_client(config)
  if id and bufnr then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

-- health returns start/ok/info/warn/error reporters for :checkhealth
-- (vim.health.* on 0.10+, vim.health.report_* on 0.8-0.9, require('health')
-- on 0.7).
function M.health()
  local h = vim.health
  if not (h and h.start) then
    h = (vim.health and vim.health.report_start) and vim.health or require('health')
    return {
      start = h.report_start,
      ok = h.report_ok,
      info = h.report_info,
      warn = h.report_warn,
      error = h.report_error,
    }
  end
  return h
end

-- get_hl returns the colours and the attributes that decide where they
-- show of a highlight group, links followed: { fg, bg, reverse, bold }
-- for the GUI (and 'termguicolors'), { ctermfg, ctermbg, cterm_reverse,
-- cterm_bold } for the terminal's palette. Missing ones are nil.
-- hl_attrs puts the GUI and the terminal halves of a group in get_hl's
-- shape; each half is { fg, bg, reverse, bold }.
local function hl_attrs(gui, cterm)
  return {
    fg = gui.fg,
    bg = gui.bg,
    reverse = gui.reverse or nil,
    bold = gui.bold or nil,
    ctermfg = cterm.fg,
    ctermbg = cterm.bg,
    cterm_reverse = cterm.reverse or nil,
    cterm_bold = cterm.bold or nil,
  }
end

function M.get_hl(name)
  if vim.api.nvim_get_hl then
    local ok, h = pcall(vim.api.nvim_get_hl, 0, { name = name, link = false })
    if not ok or not h then
      return {}
    end
    local c = h.cterm or {}
    return hl_attrs(h, { fg = h.ctermfg, bg = h.ctermbg, reverse = c.reverse, bold = c.bold })
  end
  local function get(rgb)
    local ok, h = pcall(vim.api.nvim_get_hl_by_name, name, rgb)
    h = ok and h or {}
    return { fg = h.foreground, bg = h.background, reverse = h.reverse, bold = h.bold }
  end
  return hl_attrs(get(true), get(false))
end

-- progress_event is the autocmd that fires on $/progress: LspProgress on
-- 0.10+ (with the params in its data), User LspProgressUpdate before.
function M.progress_event()
  if M.has('0.10') then
    return { event = 'LspProgress', pattern = nil }
  end
  return { event = 'User', pattern = 'LspProgressUpdate' }
end

return M
