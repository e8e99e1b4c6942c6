local format = require('reika.format')

t.describe('format.tokens', function()
  -- docs/design.md §3.10: whole k from 10000, one decimal from 1000, else the number.
  local cases = {
    { 0, '0' },
    { 999, '999' },
    { 1000, '1.0k' },
    { 1300, '1.3k' },
    { 8789, '8.8k' },
    { 9949, '9.9k' },
    { 10000, '10k' },
    { 16000, '16k' },
    { 19756, '20k' },
    { 24000, '24k' },
    { 113356, '113k' },
  }
  for _, c in ipairs(cases) do
    t.it(tostring(c[1]) .. ' -> ' .. c[2], function()
      t.eq(c[2], format.tokens(c[1]))
    end)
  end
  t.it('prints nothing for a non-number', function()
    t.eq('', format.tokens(nil))
  end)
end)

t.describe('format chip and level', function()
  local warn = { text = 'ctx 16k/24k (81% of 20k)', level = 'warning' }
  t.it('is empty before the first status', function()
    t.eq('', format.chip(nil))
    t.eq(nil, format.level(nil))
    t.eq('ReikaStatus', format.hl_group(nil))
    t.eq('', format.statusline_item(nil))
  end)
  t.it('shows the server text', function()
    t.eq('ctx 16k/24k (81% of 20k)', format.chip(warn))
    t.eq('ctx 16k', format.chip({ text = 'ctx 16k', level = 'ok', window = vim.NIL }))
  end)
  t.it('maps levels to highlight groups, for the current window and the others', function()
    t.eq('ReikaStatus', format.hl_group({ text = 'x', level = 'ok' }))
    t.eq('ReikaStatusWarn', format.hl_group(warn))
    t.eq('ReikaStatusError', format.hl_group({ text = 'x', level = 'error' }))
    t.eq('ReikaStatusNC', format.hl_group({ text = 'x', level = 'ok' }, true))
    t.eq('ReikaStatusWarnNC', format.hl_group(warn, true))
    t.eq('ReikaStatusErrorNC', format.hl_group({ text = 'x', level = 'error' }, true))
  end)
  t.it('treats an unknown level as ok', function()
    t.eq('ok', format.level({ text = 'x', level = 'purple' }))
    t.eq('ReikaStatus', format.hl_group({ text = 'x' }))
  end)
  t.it('escapes % in the statusline item', function()
    t.eq(
      '%#ReikaStatusWarn#ctx 16k/24k (81%% of 20k)%*',
      format.statusline_item(warn, format.chip(warn))
    )
    t.eq(
      '%#ReikaStatusWarnNC#ctx 16k/24k (81%% of 20k)%*',
      format.statusline_item(warn, format.chip(warn), true)
    )
    t.eq('', format.statusline_item(warn, ''))
  end)
  t.it('puts the busy sign before the chip while a turn runs', function()
    local busy = { text = 'ctx 3.1k/24k (16% of 20k)', level = 'ok', busy = true }
    t.eq('⠋ ctx 3.1k/24k (16% of 20k)', format.busy_chip(busy, '⠋'))
    busy.busy = false
    t.eq('ctx 3.1k/24k (16% of 20k)', format.busy_chip(busy, '⠋'))
    t.eq('', format.busy_chip(nil, '⠋'), 'nothing before the first status')
  end)
end)

t.describe('format.without_chip', function()
  t.it("drops the chip the server ends a round's report with", function()
    t.eq(
      'round 7 · read main.go',
      format.without_chip('round 7 · read main.go · ctx 3.1k/24k (16% of 20k)')
    )
    t.eq(
      'round 2 · read ctx · ctx.go',
      format.without_chip('round 2 · read ctx · ctx.go · ctx 16k')
    )
    t.eq('fix the ctx bug', format.without_chip('fix the ctx bug'), 'a prompt is kept')
  end)
end)

t.describe('format.progress_text', function()
  t.it('is empty with nothing running', function()
    t.eq('', format.progress_text(nil))
    t.eq('', format.progress_text({ a = { title = 'Reika', message = 'x', done = true } }))
  end)
  t.it('shows title and message', function()
    t.eq(
      'Reika: round 3 · read a.go',
      format.progress_text({
        ['reika-ask-1'] = { title = 'Reika', message = 'round 3 · read a.go' },
      })
    )
    t.eq('Reika', format.progress_text({ x = { title = 'Reika', message = '' } }))
  end)
  t.it('never repeats the chip', function()
    t.eq(
      'Reika: round 7 · read main.go',
      format.progress_text({
        tok = { title = 'Reika', message = 'round 7 · read main.go · ctx 3.1k/24k (16% of 20k)' },
      })
    )
  end)
  t.it('joins several in token order', function()
    t.eq(
      'A: 1, B: 2',
      format.progress_text({
        t2 = { title = 'B', message = '2' },
        t1 = { title = 'A', message = '1' },
      })
    )
  end)
end)

t.describe('format.user_words', function()
  t.it('names the user commands instead of the protocol commands', function()
    t.eq(
      'a turn is already running: wait for it to end or cancel it (:ReikaCancel)',
      format.user_words('a turn is already running: wait for it to end or cancel it (reika.cancel)')
    )
    t.eq(':ReikaSave: cannot write x', format.user_words('reika.save: cannot write x'))
    t.eq('start one with :ReikaNew', format.user_words('start one with reika.newSession'))
    t.eq(
      'reika/status and reika.unknown stay',
      format.user_words('reika/status and reika.unknown stay')
    )
    t.eq('myreika.cancel stays', format.user_words('myreika.cancel stays'))
    t.eq('saved to /tmp/reika.save.md', format.user_words('saved to /tmp/reika.save.md'))
    t.eq('see reika.cancelled', format.user_words('see reika.cancelled'))
    t.eq('run :ReikaCancel.', format.user_words('run reika.cancel.'))
    t.eq('reika.save.md', format.user_words('reika.save.md'))
  end)
end)

t.describe('format.selection_label', function()
  t.it('says which lines are attached, in one word for one line', function()
    t.eq('main.go line 3', format.selection_label('main.go', 3, 3))
    t.eq('main.go lines 3-7', format.selection_label('main.go', 3, 7))
    t.eq('main.go lines 3-7', format.selection_label('main.go', 7, 3))
  end)
end)

t.describe('format.first_line', function()
  t.it('counts the lines after the first', function()
    t.eq({ 'a', 0 }, { format.first_line('a') })
    t.eq({ 'a', 0 }, { format.first_line('a\n') })
    t.eq({ 'a', 1 }, { format.first_line('a\nb') })
    t.eq({ 'a', 1 }, { format.first_line('a\nb\n') })
    t.eq({ 'a', 2 }, { format.first_line('a\nb\nc') })
    t.eq({ '', 0 }, { format.first_line(nil) })
  end)
end)
