-- An engine that is down keeps the chip red (issue 31): the real reika-lsp
-- ($REIKA_LSP_BIN) whose engine (the fake one) answered a turn and then
-- went away shows the error level after the next turn failed on it, never
-- ok meanwhile, and when the status is asked for again.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

local reika = require('reika')

t.after_each(function()
  H.stop_servers(t)
  vim.cmd('silent! %bwipeout!')
end)

t.it('keeps the chip red while the engine is down', function()
  H.capture_notify()
  local url, job = H.fake_engine(t, 'death-script.json')
  local state = H.tmpdir()
  local root = H.workspace({ ['main.txt'] = { 'hello' } })
  H.setup_real(state, url, { settings = { engineRetry = 0 } })
  local c = H.open(t, root, 'main.txt', 60000)
  t.eq('done', H.ask(t, 'say hello', 60000).result.status)
  t.neq('error', reika.statusline_level(), 'up: ' .. reika.statusline())
  vim.fn.jobstop(job)
  vim.fn.jobwait({ job }, 10000)
  local seen = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'ReikaStatus',
    callback = function()
      seen[#seen + 1] = reika.statusline_level()
    end,
  })
  local done = H.ask(t, 'say hello again', 120000)
  t.eq('error', done.result and done.result.status, vim.inspect(done))
  t.eq('error', reika.statusline_level(), 'red after the failed turn: ' .. reika.statusline())
  local pulled
  reika.show_status({
    on_done = function(r)
      pulled = r
    end,
  })
  t.wait('the status', function()
    return pulled ~= nil
  end, 30000)
  t.eq('error', pulled.level, vim.inspect(pulled))
  t.eq('error', reika.statusline_level())
  -- The turn's first status may be ok (nothing is known to be down yet);
  -- once red, it stays red.
  local red = false
  for _, level in ipairs(seen) do
    red = red or level == 'error'
    t.falsy(red and level ~= 'error', 'red, then ' .. tostring(level) .. ': ' .. vim.inspect(seen))
  end
  t.truthy(red, 'red during the turn: ' .. vim.inspect(seen))
  t.truthy(c)
end)
