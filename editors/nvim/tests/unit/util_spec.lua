local util = require('reika.util')

t.describe('util.units', function()
  t.it('counts code units per encoding', function()
    local s = 'aé€😀' -- 1 + 2 + 3 + 4 bytes
    t.eq(10, util.units(s, 'utf-8'))
    t.eq(5, util.units(s, 'utf-16'), 'the emoji is a surrogate pair')
    t.eq(4, util.units(s, 'utf-32'))
    t.eq(5, util.units(s, nil), 'utf-16 by default')
    t.eq(0, util.units('', 'utf-16'))
  end)
end)

t.describe('util.selection_range', function()
  local lines = { [3] = 'local x = 1', [4] = 'héllo 😀 wörld', [5] = 'end' }
  t.it('takes whole lines in linewise mode', function()
    local range, text =
      util.selection_range(lines, { mode = 'V', start = { 3, 0 }, finish = { 5, 0 } }, 'utf-16')
    t.eq({ start = { line = 2, character = 0 }, ['end'] = { line = 4, character = 3 } }, range)
    t.eq('local x = 1\nhéllo 😀 wörld\nend', text)
  end)
  t.it('takes characters in charwise mode, end inclusive, in UTF-16', function()
    -- Select "llo 😀": bytes 3..10 of line 4 ('h'=0, 'é'=1-2, 'l'=3, ..., '😀' starts at 7).
    local range, text =
      util.selection_range(lines, { mode = 'v', start = { 4, 3 }, finish = { 4, 7 } }, 'utf-16')
    t.eq('llo 😀', text)
    t.eq({ start = { line = 3, character = 2 }, ['end'] = { line = 3, character = 8 } }, range)
  end)
  t.it('counts bytes for utf-8 clients', function()
    local range =
      util.selection_range(lines, { mode = 'v', start = { 4, 3 }, finish = { 4, 7 } }, 'utf-8')
    t.eq({ start = { line = 3, character = 3 }, ['end'] = { line = 3, character = 11 } }, range)
  end)
  t.it('orders a selection made backwards', function()
    local a =
      util.selection_range(lines, { mode = 'v', start = { 5, 1 }, finish = { 3, 6 } }, 'utf-16')
    local b =
      util.selection_range(lines, { mode = 'v', start = { 3, 6 }, finish = { 5, 1 } }, 'utf-16')
    t.eq(b, a)
    t.eq({ start = { line = 2, character = 6 }, ['end'] = { line = 4, character = 2 } }, a)
  end)
  t.it('clamps an end past the line (v with $)', function()
    local range, text = util.selection_range(
      lines,
      { mode = 'v', start = { 5, 0 }, finish = { 5, 2147483647 } },
      'utf-16'
    )
    t.eq('end', text)
    t.eq(3, range['end'].character)
  end)
end)

t.describe('util.find_root', function()
  local base = vim.fn.tempname()
  vim.fn.mkdir(base .. '/proj/src/deep', 'p')
  vim.fn.mkdir(base .. '/proj/.git', 'p')
  vim.fn.writefile({}, base .. '/proj/src/AGENTS.md')
  local real = vim.loop.fs_realpath(base)
  t.it('finds the nearest marker above a directory', function()
    t.eq(
      real .. '/proj',
      vim.loop.fs_realpath(util.find_root(base .. '/proj/src/deep', { '.git' }))
    )
    t.eq(
      real .. '/proj/src',
      vim.loop.fs_realpath(util.find_root(base .. '/proj/src/deep', { '.git', 'AGENTS.md' }))
    )
  end)
  t.it('returns nil without a marker', function()
    t.eq(nil, util.find_root(base .. '/proj/src/deep', { 'no-such-marker-9f3a' }))
    t.eq(nil, util.find_root('', { '.git' }))
  end)
end)

t.describe('util.is_inside', function()
  t.it('checks path prefixes by directory', function()
    t.truthy(util.is_inside('/a/b/c.go', '/a/b'))
    t.truthy(util.is_inside('/a/b', '/a/b/'))
    t.falsy(util.is_inside('/a/bc/c.go', '/a/b'))
    t.falsy(util.is_inside(nil, '/a'))
  end)
end)

t.describe('util.buf_path', function()
  t.it('gives the path of file buffers only', function()
    local f = vim.fn.tempname() .. '.txt'
    vim.cmd('edit ' .. f)
    t.eq(vim.fn.fnamemodify(f, ':p'), util.buf_path(0))
    local scratch = vim.api.nvim_create_buf(false, true)
    t.eq(nil, util.buf_path(scratch))
    local uri = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_buf_set_name(uri, 'fugitive:///x/y')
    t.eq(nil, util.buf_path(uri))
  end)
end)

t.describe('util.visual_selection', function()
  t.it('uses the visual marks when they match the range', function()
    vim.cmd('enew')
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'one', 'two', 'three' })
    vim.cmd('normal! gglvjl\27')
    local sel = util.visual_selection(0, 1, 2)
    t.eq({ mode = 'v', start = { 1, 1 }, finish = { 2, 2 } }, sel)
  end)
  t.it('falls back to whole lines for a typed range', function()
    local sel = util.visual_selection(0, 2, 3)
    t.eq({ mode = 'V', start = { 2, 0 }, finish = { 3, 0 } }, sel)
  end)
end)
