local tb = require('reika.transcript_buffer')

local function ev(kind, text, extra)
  return vim.tbl_extend(
    'force',
    { session = 's1', turn = 1, round = 1, kind = kind, text = text, delta = false },
    extra or {}
  )
end

local function lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

t.describe('transcript buffer', function()
  t.it('holds the events that came before it was opened', function()
    local v = tb.new('/w/one', {})
    v:apply(ev('user', 'hello'))
    local b = v:buffer()
    t.eq({ '=== session s1 ===', '', '--- turn 1 ---', '> hello' }, lines(b))
    t.eq('nofile', vim.bo[b].buftype)
    t.eq(false, vim.bo[b].modifiable)
    t.eq('reika', vim.bo[b].filetype)
    t.eq('reika://transcript/w/one', vim.api.nvim_buf_get_name(b), 'one slash')
    t.eq(0, vim.fn.buflisted(b), 'not listed')
  end)

  t.it('starts empty and replaces the placeholder line', function()
    local v = tb.new('/w/two', {})
    local b = v:buffer()
    t.eq({ '' }, lines(b))
    v:apply(ev('assistant', 'Hi', { delta = true }))
    t.eq({ '=== session s1 ===', 'Hi' }, lines(b))
    v:apply(ev('assistant', ' there', { delta = true }))
    v:apply(ev('assistant', 'Hi there.'))
    t.eq({ '=== session s1 ===', 'Hi there.' }, lines(b))
  end)

  t.it('highlights lines by kind', function()
    local v = tb.new('/w/three', {})
    local b = v:buffer()
    v:apply(ev('fold', 'Folded 2 rounds into a 1.3k-token recap'))
    local marks = vim.api.nvim_buf_get_extmarks(b, tb.namespace, 0, -1, { details = true })
    local groups = {}
    for _, m in ipairs(marks) do
      groups[m[2]] = m[4].hl_group
    end
    t.eq('ReikaTranscriptSession', groups[0])
    t.eq('ReikaTranscriptFold', groups[2], 'the heading')
    t.eq('ReikaTranscriptFold', groups[3], 'the text')
  end)

  t.it('opens in a window, focuses it again instead of opening another', function()
    vim.cmd('silent! only')
    local v = tb.new('/w/four', {})
    local start = vim.api.nvim_get_current_win()
    local w = v:open('botright vsplit', true)
    t.eq(start, vim.api.nvim_get_current_win(), 'keep_focus returns to the window')
    t.eq(2, #vim.api.nvim_tabpage_list_wins(0))
    t.truthy(v:visible())
    local again = v:open('botright vsplit', false)
    t.eq(w, again)
    t.eq(w, vim.api.nvim_get_current_win())
    t.eq(2, #vim.api.nvim_tabpage_list_wins(0))
  end)

  t.it('follows new lines in windows at the end, not in windows scrolled up', function()
    vim.cmd('silent! only')
    local v = tb.new('/w/five', { follow = true })
    for i = 1, 30 do
      v:apply(ev('assistant', 'line ' .. i, { round = i }))
    end
    local w1 = v:open('botright vsplit', false)
    vim.cmd('split')
    local w2 = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_cursor(w2, { 3, 0 })
    vim.api.nvim_win_set_cursor(w1, { vim.api.nvim_buf_line_count(v.bufnr), 0 })
    v:apply(ev('assistant', 'new', { round = 99 }))
    t.eq(vim.api.nvim_buf_line_count(v.bufnr), vim.api.nvim_win_get_cursor(w1)[1], 'w1 follows')
    t.eq(3, vim.api.nvim_win_get_cursor(w2)[1], 'w2 stays')
  end)

  t.it('makes a new buffer after the old one was wiped', function()
    local v = tb.new('/w/six', {})
    v:apply(ev('user', 'a'))
    local b = v:buffer()
    vim.api.nvim_buf_delete(b, { force = true })
    v:apply(ev('assistant', 'b'))
    local b2 = v:buffer()
    t.neq(b, b2)
    t.eq('b', lines(b2)[#lines(b2)])
  end)
end)
