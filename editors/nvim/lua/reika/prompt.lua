-- The prompt buffer: a split where a prompt is written with normal
-- editing, sent with <C-s> (and <CR> in normal mode), with earlier prompts
-- recalled by <C-p> and <C-n> in normal mode, and slash commands completed
-- (omnifunc, <C-x><C-o>) from the server's reika.commands (docs/protocol.md
-- §3.8). :ReikaPrompt from Visual mode attaches the selection as :ReikaAsk
-- does.
local client = require('reika.client')
local format = require('reika.format')
local protocol = require('reika.protocol')
local util = require('reika.util')

local M = {}

M.name = 'reika://prompt'
M.height = 8
M.history = {} -- prompts sent, oldest first
M.max_history = 100
M.commands = nil -- the last reika.commands list, for completion

-- The buffer-local keys of the prompt buffer (:help reika-prompt).
M.keys = {
  send_insert = '<C-s>',
  send_normal = { '<C-s>', '<CR>' },
  older = '<C-p>',
  newer = '<C-n>',
}

local st = { bufnr = nil, target = nil, selection = nil, pos = nil }

local function valid()
  return st.bufnr ~= nil and vim.api.nvim_buf_is_valid(st.bufnr)
end

-- buffer returns the prompt buffer, creating it.
function M.buffer()
  if valid() then
    return st.bufnr
  end
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, M.name)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = 'markdown'
  vim.bo[b].omnifunc = "v:lua.require'reika.prompt'.omnifunc"
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = b, desc = 'reika: ' .. desc })
  end
  map('i', M.keys.send_insert, M.send, 'send the prompt')
  for _, lhs in ipairs(M.keys.send_normal) do
    map('n', lhs, M.send, 'send the prompt')
  end
  map('n', M.keys.older, function()
    M.recall(-1)
  end, 'an earlier prompt')
  map('n', M.keys.newer, function()
    M.recall(1)
  end, 'a later prompt')
  st.bufnr = b
  return b
end

-- window returns the window of the current tab showing the prompt.
local function window()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == st.bufnr then
      return w
    end
  end
end

-- label is the prompt window's statusline: what the prompt is about and
-- the keys.
local function label()
  local about = ''
  local path = st.selection and util.buf_path(st.target)
  if path then
    local name = vim.fn.fnamemodify(path, ':~:.')
    about = ' about ' .. format.selection_label(name, st.selection.start[1], st.selection.finish[1])
  end
  return format.escape_statusline('reika prompt' .. about .. ' · <C-s> send · <C-p>/<C-n> history')
end

-- open shows the prompt buffer in a split below and starts Insert mode.
-- o: bufnr (the buffer asked about, default the current one), selection.
function M.open(o)
  o = o or {}
  local target = o.bufnr or vim.api.nvim_get_current_buf()
  if target ~= st.bufnr then
    st.target = target
    st.selection = o.selection
  end
  local b = M.buffer()
  local win = window()
  if not win then
    vim.cmd('botright ' .. M.height .. 'split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, b)
    vim.wo[win].wrap = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].winfixheight = true
  end
  vim.wo[win].statusline = label()
  vim.api.nvim_set_current_win(win)
  st.pos = nil
  M.fetch_commands(target)
  if o.insert ~= false then
    vim.cmd('startinsert')
  end
  return win
end

local function text()
  return table.concat(vim.api.nvim_buf_get_lines(st.bufnr, 0, -1, false), '\n')
end

local function set_text(s)
  vim.api.nvim_buf_set_lines(st.bufnr, 0, -1, false, vim.split(s, '\n', { plain = true }))
end

-- remember adds a prompt to the history (not twice in a row).
function M.remember(s)
  if M.history[#M.history] ~= s then
    M.history[#M.history + 1] = s
  end
  while #M.history > M.max_history do
    table.remove(M.history, 1)
  end
end

-- send sends the buffer's text with reika.ask (with the selection it was
-- opened with), clears the buffer and leaves Insert mode. o.on_done goes
-- to reika.ask.
function M.send(o)
  o = type(o) == 'table' and o or {}
  if not valid() then
    return
  end
  local prompt = text()
  if prompt:match('^%s*$') then
    return
  end
  M.remember(prompt)
  st.pos = nil
  set_text('')
  vim.cmd('stopinsert')
  local target = st.target
  if not (target and vim.api.nvim_buf_is_valid(target)) then
    target = st.bufnr
  end
  local selection = st.selection
  st.selection = nil
  local win = window()
  if win then
    vim.wo[win].statusline = label()
  end
  require('reika.actions').ask({
    prompt = prompt,
    bufnr = target,
    selection = selection,
    on_done = o.on_done or M.on_done,
  })
end

-- recall replaces the buffer's text with an earlier (step -1) or later
-- (step 1) prompt of the history; past the newest, the buffer empties.
function M.recall(step)
  if #M.history == 0 then
    return
  end
  local pos = (st.pos or (#M.history + 1)) + step
  pos = math.max(1, math.min(pos, #M.history + 1))
  st.pos = pos
  set_text(M.history[pos] or '')
end

-- fetch_commands asks the server for the slash commands (for completion).
function M.fetch_commands(bufnr)
  local c = client.current(bufnr, false)
  if not c then
    return
  end
  client.execute(c, protocol.command.commands, {}, function(err, result)
    if not err and type(result) == 'table' and type(result.commands) == 'table' then
      M.commands = result.commands
    end
  end)
end

-- complete lists the slash commands starting with base ("/co").
function M.complete(base)
  local out = {}
  local want = base:gsub('^/', '')
  for _, cmd in ipairs(M.commands or {}) do
    local name = tostring(cmd.name)
    if vim.startswith(name, want) then
      out[#out + 1] = {
        word = '/' .. name,
        menu = cmd.argumentHint ~= vim.NIL and cmd.argumentHint or nil,
        info = cmd.description ~= vim.NIL and cmd.description or nil,
        kind = cmd.source and cmd.source ~= vim.NIL and 'custom' or 'built-in',
      }
    end
  end
  return out
end

-- omnifunc completes a slash command at the start of the prompt.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local before = vim.api.nvim_get_current_line():sub(1, col)
    if row == 1 and before:match('^/[%w:_%-]*$') then
      return 0
    end
    return -3
  end
  return M.complete(base)
end

return M
