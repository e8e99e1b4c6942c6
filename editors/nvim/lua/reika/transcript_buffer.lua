-- A scratch buffer that shows one workspace's transcript and follows it as
-- it streams.
local chat = require('reika.chat')
local transcript = require('reika.transcript')

local M = {}

local ns = vim.api.nvim_create_namespace('reika-transcript')

local groups = {
  session = 'ReikaTranscriptSession',
  user = 'ReikaTranscriptUser',
  reasoning = 'ReikaTranscriptReasoning',
  tool_call = 'ReikaTranscriptTool',
  tool_result = 'ReikaTranscriptResult',
  note = 'ReikaTranscriptNote',
  shed = 'ReikaTranscriptShed',
  fold = 'ReikaTranscriptFold',
  info = 'ReikaTranscriptInfo',
  error = 'ReikaTranscriptError',
}

local View = {}
View.__index = View

-- name is the buffer name of a workspace's transcript:
-- reika://transcript/home/me/project for /home/me/project.
function M.name(root)
  return 'reika://transcript/' .. (root:gsub('^/+', ''))
end

-- new makes a view named after the workspace root. opts: result_lines,
-- follow.
function M.new(root, opts)
  opts = opts or {}
  return setmetatable({
    root = root,
    name = M.name(root),
    opts = opts,
    model = transcript.new({ result_lines = opts.result_lines }),
    bufnr = nil,
  }, View)
end

function View:valid()
  return self.bufnr ~= nil and vim.api.nvim_buf_is_valid(self.bufnr)
end

local function set_lines(bufnr, first, last, lines, kinds)
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_clear_namespace(bufnr, ns, first, last)
  vim.api.nvim_buf_set_lines(bufnr, first, last, false, lines)
  vim.bo[bufnr].modifiable = false
  for i, kind in ipairs(kinds) do
    local group = groups[kind]
    if group then
      local row = first + i - 1
      vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, {
        end_row = row,
        end_col = #lines[i],
        hl_group = group,
      })
    end
  end
end

-- buffer returns the view's buffer, creating it (filled with the lines so
-- far) when needed.
function View:buffer()
  if self:valid() then
    return self.bufnr
  end
  local existing = vim.fn.bufnr(self.name)
  if existing ~= -1 then
    vim.api.nvim_buf_delete(existing, { force = true })
  end
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, self.name)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1
  vim.bo[b].filetype = 'reika'
  self.bufnr = b
  local lines = self.model:get_lines()
  set_lines(b, 0, -1, lines, self.model:get_kinds())
  self.placeholder = #lines == 0
  chat.attach(self, b)
  return b
end

-- windows lists the windows (any tab) showing the buffer.
function View:windows()
  if not self:valid() then
    return {}
  end
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == self.bufnr then
      out[#out + 1] = w
    end
  end
  return out
end

-- at_end reports whether window w shows the last line of a buffer of
-- count lines on its cursor line: the cursor is on it, or on a closed fold
-- (a tool call) that ends with it.
local function at_end(w, count)
  local row = vim.api.nvim_win_get_cursor(w)[1]
  if row >= count then
    return true
  end
  local last = vim.api.nvim_win_call(w, function()
    return vim.fn.foldclosedend(row)
  end)
  return last >= count
end

-- apply adds one reika/transcript event.
function View:apply(ev)
  local edits = self.model:apply(ev)
  if #edits == 0 or not self:valid() then
    return
  end
  local b = self.bufnr
  local following = {}
  if self.opts.follow ~= false then
    local count = vim.api.nvim_buf_line_count(b)
    for _, w in ipairs(self:windows()) do
      if at_end(w, count) then
        following[#following + 1] = w
      end
    end
  end
  for _, e in ipairs(edits) do
    local first, last = e.first, e.last
    -- An empty transcript shows as one empty line the model does not have.
    if self.placeholder then
      self.placeholder = false
      last = -1
    end
    set_lines(b, first, last, e.lines, e.kinds)
  end
  local count = vim.api.nvim_buf_line_count(b)
  for _, w in ipairs(following) do
    vim.api.nvim_win_set_cursor(w, { count, 0 })
  end
end

-- open shows the buffer: focuses a window of the current tab that shows
-- it, else opens one with opts.open. With keep_focus the cursor returns to
-- the window it was in. Returns the window.
function View:open(open_cmd, keep_focus)
  local b = self:buffer()
  local from = vim.api.nvim_get_current_win()
  local tab = vim.api.nvim_get_current_tabpage()
  local win
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    if vim.api.nvim_win_get_buf(w) == b then
      win = w
      break
    end
  end
  if not win then
    vim.cmd(open_cmd or 'botright vsplit')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, b)
    chat.decorate(win)
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(b), 0 })
  end
  if keep_focus then
    vim.api.nvim_set_current_win(from)
  else
    vim.api.nvim_set_current_win(win)
  end
  return win
end

-- visible reports whether a window of the current tab shows the buffer.
function View:visible()
  if not self:valid() then
    return false
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == self.bufnr then
      return true
    end
  end
  return false
end

M.View = View
M.namespace = ns
return M
