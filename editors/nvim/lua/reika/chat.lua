-- How the transcript buffer reads: Markdown highlighting (the treesitter
-- `markdown` parser where Neovim has it, the `markdown` syntax otherwise),
-- one fold per tool call with its result (foldmethod=expr), and the code
-- block under the cursor yanked with one key.
local protocol = require('reika.protocol')

local M = {}

-- views maps a buffer to the transcript view showing it (for foldexpr).
M.views = {}

-- The buffer-local keys of the transcript (:help reika-transcript-keys).
M.keys = {
  yank_code = 'gy',
}

-- highlight starts Markdown highlighting in bufnr and returns how:
-- 'treesitter' or 'syntax'.
function M.highlight(bufnr)
  local ts = vim.treesitter
  if ts and ts.start then
    local ok = pcall(ts.start, bufnr, 'markdown')
    if ok then
      return 'treesitter'
    end
  end
  vim.bo[bufnr].syntax = 'markdown'
  return 'syntax'
end

-- has_treesitter reports whether this Neovim can highlight the transcript
-- with the treesitter markdown parser (for :checkhealth).
function M.has_treesitter()
  local ts = vim.treesitter
  if not (ts and ts.start and ts.language) then
    return false, 'Neovim ' .. tostring(vim.version().minor) .. ' has no vim.treesitter.start'
  end
  local add = ts.language.add or ts.language.require_language
  local ok, res = pcall(add, 'markdown')
  if not ok or res == false then
    return false, 'no markdown treesitter parser'
  end
  return true
end

local call, result = protocol.event.tool_call, protocol.event.tool_result

-- fold_level is the fold of one line given the kinds of lines (1-based):
-- a tool call starts a fold, its result lines stay in it.
function M.fold_level(kinds, lnum)
  local k = kinds[lnum]
  if k == call then
    return '>1'
  end
  if k == result and lnum > 1 and (kinds[lnum - 1] == call or kinds[lnum - 1] == result) then
    return '1'
  end
  return '0'
end

-- foldexpr is the transcript windows' 'foldexpr'.
function M.foldexpr(lnum)
  local view = M.views[vim.api.nvim_get_current_buf()]
  if not view or view.placeholder then
    return '0'
  end
  return M.fold_level(view.model.line_kinds, lnum)
end

-- decorate sets the window options of a window showing the transcript.
function M.decorate(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.spell = false
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'reika.chat'.foldexpr(v:lnum)"
  wo.foldlevel = 0
  wo.foldenable = true
end

-- code_blocks lists the fenced code blocks of lines: { {first, last} }
-- of their contents, 1-based and inclusive (first > last when empty).
function M.code_blocks(lines)
  local out, open, fence = {}, nil, nil
  for i, l in ipairs(lines) do
    local f = l:match('^%s*(```+)') or l:match('^%s*(~~~+)')
    if open then
      if f and f:sub(1, 1) == fence:sub(1, 1) and #f >= #fence and l:match('^%s*[`~]+%s*$') then
        out[#out + 1] = { open + 1, i - 1 }
        open = nil
      end
    elseif f then
      open, fence = i, f
    end
  end
  if open then
    -- A block still streaming: its lines so far.
    out[#out + 1] = { open + 1, #lines }
  end
  return out
end

-- block_at picks the code block for a cursor on line row: the one around
-- it, else the next one below, else the last one above.
function M.block_at(blocks, row)
  local above
  for _, b in ipairs(blocks) do
    if row >= b[1] - 1 and row <= b[2] + 1 then
      return b
    end
    if b[1] > row then
      return b
    end
    above = b
  end
  return above
end

-- yank_code yanks the code block at the cursor (without its fences) into
-- the register given (v:register) linewise.
function M.yank_code()
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local b = M.block_at(M.code_blocks(lines), vim.api.nvim_win_get_cursor(0)[1])
  if not b then
    vim.notify('reika: no code block in the transcript', vim.log.levels.INFO)
    return
  end
  local text = vim.list_slice(lines, b[1], b[2])
  vim.fn.setreg(vim.v.register, text, 'l')
  vim.notify(string.format('reika: yanked %d line%s', #text, #text == 1 and '' or 's'))
end

-- attach sets up a new transcript buffer of view.
function M.attach(view, bufnr)
  M.views[bufnr] = view
  view.highlighting = M.highlight(bufnr)
  vim.keymap.set('n', M.keys.yank_code, M.yank_code, {
    buffer = bufnr,
    desc = 'reika: yank the code block at the cursor',
  })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = bufnr,
    desc = 'reika: transcript window options',
    callback = function()
      M.decorate(vim.api.nvim_get_current_win())
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = bufnr,
    callback = function()
      M.views[bufnr] = nil
    end,
  })
end

return M
