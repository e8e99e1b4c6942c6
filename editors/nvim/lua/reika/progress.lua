-- The running turn's $/progress message ("Reika: round 3 · read a.go ·
-- ctx 12k/24k (61% of 20k)") of each reika client, from LspProgress on
-- Neovim 0.10+ and User LspProgressUpdate before.
local compat = require('reika.compat')
local format = require('reika.format')
local state = require('reika.state')

local M = {}

-- A client's progress entries are its record's (reika.state) `progress`:
-- progress[token] = { title, message } (0.10+ only; older releases keep
-- them in client.messages.progress).

local function update_entry(client_id, token, value)
  local rec = state.get(client_id)
  if type(value) ~= 'table' or token == nil or not rec then
    return
  end
  local t = rec.progress
  if value.kind == 'begin' then
    t[token] = { title = value.title, message = value.message }
  elseif value.kind == 'report' and t[token] then
    t[token].message = value.message or t[token].message
  elseif value.kind == 'end' then
    t[token] = nil
  end
end

-- get returns the progress text of a client, '' when nothing runs.
function M.get(client_id)
  if client_id == nil then
    return ''
  end
  if compat.has('0.10') then
    local rec = state.get(client_id)
    return format.progress_text(rec and rec.progress)
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or not client.messages then
    return ''
  end
  return format.progress_text(client.messages.progress)
end

-- on_lsp_progress handles the data of an LspProgress autocmd: 0.10.0
-- names the params `result`, later releases `params`.
function M.on_lsp_progress(data, is_ours, on_change)
  data = data or {}
  local params = data.params or data.result
  if not is_ours(data.client_id) or type(params) ~= 'table' then
    return
  end
  update_entry(data.client_id, params.token, params.value)
  on_change(data.client_id)
end

-- setup listens for progress of the clients is_ours accepts and calls
-- on_change(client_id) for each update.
function M.setup(group, is_ours, on_change)
  local ev = compat.progress_event()
  vim.api.nvim_create_autocmd(ev.event, {
    group = group,
    pattern = ev.pattern,
    desc = 'reika: track turn progress',
    callback = function(args)
      if ev.event == 'LspProgress' then
        M.on_lsp_progress(args.data, is_ours, on_change)
        return
      end
      -- User LspProgressUpdate says nothing about which client: refresh ours.
      for _, c in ipairs(compat.get_clients()) do
        if is_ours(c.id) then
          on_change(c.id)
        end
      end
    end,
  })
end

-- forget drops a client's entries (its server exited).
function M.forget(client_id)
  local rec = state.get(client_id)
  if rec then
    rec.progress = {}
  end
end

return M
