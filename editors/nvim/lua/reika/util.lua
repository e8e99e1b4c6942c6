-- Small helpers: workspace roots, file buffers, and editor selections as
-- LSP ranges.
local M = {}

local uv = vim.uv or vim.loop

-- find_root returns the nearest directory at or above dir holding one of
-- markers, or nil.
function M.find_root(dir, markers)
  if not dir or dir == '' then
    return nil
  end
  dir = vim.fn.fnamemodify(dir, ':p'):gsub('/$', '')
  if dir == '' then
    dir = '/'
  end
  while true do
    for _, m in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- buf_path returns the absolute path of a buffer that shows a file, or nil
-- for special buffers (help, terminals, scratch, URIs such as fugitive://).
function M.buf_path(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return vim.fn.fnamemodify(name, ':p')
end

-- is_inside reports whether path is root or below it.
function M.is_inside(path, root)
  if not path or not root then
    return false
  end
  root = root:gsub('/$', '')
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

-- units counts the code units of s in an LSP position encoding
-- ('utf-8', 'utf-16' (default) or 'utf-32').
function M.units(s, encoding)
  if encoding == 'utf-8' then
    return #s
  end
  local n = 0
  local i = 1
  local len = #s
  while i <= len do
    local b = s:byte(i)
    local size = 1
    if b >= 0xF0 then
      size = 4
    elseif b >= 0xE0 then
      size = 3
    elseif b >= 0xC0 then
      size = 2
    end
    if size == 4 and encoding ~= 'utf-32' then
      n = n + 2
    else
      n = n + 1
    end
    i = i + size
  end
  return n
end

-- char_end returns the byte index just past the character that starts at
-- 0-based byte col of line.
local function char_end(line, col)
  local b = line:byte(col + 1)
  if not b then
    return #line
  end
  local size = 1
  if b >= 0xF0 then
    size = 4
  elseif b >= 0xE0 then
    size = 3
  elseif b >= 0xC0 then
    size = 2
  end
  return math.min(col + size, #line)
end

-- selection_range turns a selection into an LSP range and its text.
-- sel = { mode = 'v' | 'V' | '\22', start = {row, col}, finish = {row, col} }
-- with 1-based rows and 0-based byte columns (as marks give them; the end
-- column is inclusive). lines[row] is the text of each row. Blockwise
-- selections are taken line by line.
function M.selection_range(lines, sel, encoding)
  local r1, r2 = sel.start[1], sel.finish[1]
  local c1, c2 = sel.start[2], sel.finish[2]
  if r2 < r1 or (r2 == r1 and c2 < c1) then
    r1, r2, c1, c2 = r2, r1, c2, c1
  end
  local first = lines[r1] or ''
  local last = lines[r2] or ''
  local start_byte, end_byte
  if sel.mode == 'v' then
    start_byte = math.min(c1, #first)
    end_byte = char_end(last, math.min(c2, #last))
  else
    start_byte = 0
    end_byte = #last
  end
  local text = {}
  for row = r1, r2 do
    local l = lines[row] or ''
    local from = row == r1 and start_byte or 0
    local to = row == r2 and end_byte or #l
    text[#text + 1] = l:sub(from + 1, to)
  end
  return {
    start = { line = r1 - 1, character = M.units(first:sub(1, start_byte), encoding) },
    ['end'] = { line = r2 - 1, character = M.units(last:sub(1, end_byte), encoding) },
  },
    table.concat(text, '\n')
end

-- statusline_window returns the window whose statusline is being drawn
-- and whether it is the current window. Neovim makes the drawn window
-- current while it evaluates %{} (g:actual_curwin names the real one) and
-- sets g:statusline_winid for %!; outside a statusline it is the current
-- window.
function M.statusline_window()
  local cur = vim.api.nvim_get_current_win()
  local drawn = vim.g.statusline_winid
  if type(drawn) == 'number' then
    return drawn, drawn == cur
  end
  local actual = tonumber(vim.g.actual_curwin)
  if actual then
    return cur, actual == cur
  end
  return cur, true
end

-- visual_selection reads the selection an Ex command ran on: marks '< '>
-- when they match the command's range, else whole lines line1..line2.
function M.visual_selection(bufnr, line1, line2)
  local s = vim.api.nvim_buf_get_mark(bufnr, '<')
  local e = vim.api.nvim_buf_get_mark(bufnr, '>')
  local mode = vim.fn.visualmode()
  if s[1] == line1 and e[1] == line2 and mode ~= '' then
    return { mode = mode, start = { s[1], s[2] }, finish = { e[1], e[2] } }
  end
  return { mode = 'V', start = { line1, 0 }, finish = { line2, 0 } }
end

return M
