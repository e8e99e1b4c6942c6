-- Edit approvals as a side-by-side diff: the file's current text and the
-- text the agent proposes, in a new tab page with 'diff' on two scratch
-- buffers, answered with keys (a allow, s allow for the session, d or q
-- deny). The proposed text is the current one with the approval's unified
-- diff applied; where that cannot be built (a diff cut short, a file that
-- changed since), the list prompt asks instead.
local M = {}

-- The keys of the diff tab and the action each answers.
M.keys = {
  { lhs = 'a', action = 'Allow' },
  { lhs = 's', action = 'Allow for this session' },
  { lhs = 'd', action = 'Deny' },
  { lhs = 'q', action = 'Deny' },
}

-- parse reads an approval message "Reika wants to edit a.go (1 hunk)\n\n
-- --- a/a.go\n+++ b/a.go\n@@ ...". Returns { path, new_file, hunks =
-- { {old_start, old_count, lines = {{op, text}}} } } or nil.
function M.parse(message)
  if type(message) ~= 'string' then
    return nil
  end
  local head, diff = message:match('^Reika wants to (%a+ [^\n]*)\n\n(.*)$')
  if not head or not (head:match('^edit ') or head:match('^write ')) then
    return nil
  end
  local lines = vim.split(diff, '\n', { plain = true })
  local old, new = (lines[1] or ''):match('^%-%-%- (.+)$'), (lines[2] or ''):match('^%+%+%+ (.+)$')
  if not old or not new then
    return nil
  end
  local path = new:gsub('^b/', '')
  local out = { path = path, new_file = old == '/dev/null', hunks = {} }
  local h
  for i = 3, #lines do
    local l = lines[i]
    local os_, oc = l:match('^@@ %-(%d+),?(%d*) %+%d+,?%d* @@')
    if os_ then
      h = { old_start = tonumber(os_), old_count = oc == '' and 1 or tonumber(oc), lines = {} }
      out.hunks[#out.hunks + 1] = h
    elseif l == '\\ No newline at end of file' then
      h.no_eol = true
    elseif h and l:match('^[ +-]') then
      h.lines[#h.lines + 1] = { l:sub(1, 1), l:sub(2) }
    elseif l ~= '' or i < #lines then
      return nil -- cut short ("…") or not a diff
    end
  end
  if #out.hunks == 0 then
    return nil
  end
  return out
end

-- apply returns the proposed lines: old (a list of lines) with the hunks
-- applied, or nil when a hunk does not match old.
function M.apply(old, parsed)
  local out, at = {}, 1
  for _, h in ipairs(parsed.hunks) do
    local start = h.old_count == 0 and h.old_start + 1 or h.old_start
    while at < start do
      if old[at] == nil then
        return nil
      end
      out[#out + 1] = old[at]
      at = at + 1
    end
    local seen = 0
    for _, op in ipairs(h.lines) do
      if op[1] == '+' then
        out[#out + 1] = op[2]
      else
        if old[at] ~= op[2] then
          return nil
        end
        if op[1] == ' ' then
          out[#out + 1] = op[2]
        end
        at = at + 1
        seen = seen + 1
      end
    end
    if seen ~= h.old_count then
      return nil
    end
  end
  for i = at, #old do
    out[#out + 1] = old[i]
  end
  return out
end

-- current returns the lines of path now: its buffer's when loaded (the
-- server reads open buffers), else the disk's, {} for a new file.
function M.current(abs)
  local b = vim.fn.bufnr(abs)
  if b ~= -1 and vim.api.nvim_buf_is_loaded(b) then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end
  if vim.fn.filereadable(abs) == 1 then
    return vim.fn.readfile(abs)
  end
  return {}
end

-- build returns { path, abs, old, new } for an approval message of the
-- workspace root, nil when the diff cannot be built.
function M.build(message, root)
  local p = M.parse(message)
  if not p or not root then
    return nil
  end
  local abs = p.path:sub(1, 1) == '/' and p.path or (root .. '/' .. p.path)
  local old = p.new_file and {} or M.current(abs)
  local new = M.apply(old, p)
  if not new then
    return nil
  end
  return { path = p.path, abs = abs, old = old, new = new, title = message:match('^[^\n]*') }
end

local function scratch(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, b, name)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = false
  if ft and ft ~= '' then
    vim.bo[b].filetype = ft
  end
  return b
end

-- open shows d (from build) in a new tab page: current on the left,
-- proposed on the right, and calls on_answer(action title) once, on a key
-- or Deny when the tab is closed. Returns the tab page and a close
-- function.
function M.open(d, on_answer)
  -- vim.filetype.match takes a table since 0.8 (0.7: no filetype here).
  local ft = ''
  if require('reika.compat').has('0.8') then
    ft = vim.filetype.match({ filename = d.abs }) or ''
  end
  local seq = (M.seq or 0) + 1
  M.seq = seq
  local left = scratch(string.format('reika://diff/%d/current/%s', seq, d.path), d.old, ft)
  local right = scratch(string.format('reika://diff/%d/proposed/%s', seq, d.path), d.new, ft)
  local from = vim.api.nvim_get_current_tabpage()
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local scratch_tab = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, left)
  vim.cmd('diffthis')
  vim.cmd('rightbelow vsplit')
  vim.api.nvim_win_set_buf(0, right)
  vim.cmd('diffthis')
  if vim.api.nvim_buf_is_valid(scratch_tab) and scratch_tab ~= left then
    pcall(vim.api.nvim_buf_delete, scratch_tab, { force = true })
  end
  local hint = ' · a allow · s allow for the session · d or q deny'
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local side = vim.api.nvim_win_get_buf(w) == left and 'current' or 'proposed'
    vim.wo[w].statusline = require('reika.format').escape_statusline(side .. ': ' .. d.path .. hint)
  end
  local answered = false
  -- close closes the tab and wipes its buffers; from the diff tab it goes
  -- back to where the user was, from elsewhere it stays there.
  local function close()
    local here = vim.api.nvim_get_current_tabpage() == tab
    if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
    end
    for _, b in ipairs({ left, right }) do
      if vim.api.nvim_buf_is_valid(b) then
        pcall(vim.api.nvim_buf_delete, b, { force = true })
      end
    end
    if here and vim.api.nvim_tabpage_is_valid(from) then
      vim.api.nvim_set_current_tabpage(from)
    end
  end
  local function answer(action)
    if answered then
      return
    end
    answered = true
    vim.schedule(close)
    on_answer(action)
  end
  for _, b in ipairs({ left, right }) do
    for _, k in ipairs(M.keys) do
      vim.keymap.set('n', k.lhs, function()
        answer(k.action)
      end, { buffer = b, nowait = true, desc = 'reika: ' .. k.action })
    end
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = b,
      callback = function()
        answer('Deny')
      end,
    })
  end
  vim.cmd('redraw')
  return tab, close, answer
end

return M
