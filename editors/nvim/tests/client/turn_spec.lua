-- Issue 8's scenario against reika-lsp's server over a scripted agent.
local H = require('helpers')
local S = require('scenario')

local server = H.need(t, 'REIKA_TEST_SCRIPTED')
if not server then
  return
end

t.it('asks, fills the window, compacts through the code action', function()
  S.run(t, {
    cmd = { server },
    settings = { model = 'm1' },
    files = { ['main.txt'] = { 'one', 'two' } },
    file = 'main.txt',
    prompt = 'read big.txt',
    after_compact = function(t2, c, history)
      t2.wait('the level to drop back after the fold', function()
        return history[#history].level == 'ok'
      end)
      t2.eq('m1', require('reika').status().model, 'settings reached the server')
      t2.eq(c.id, require('reika').client().id)
    end,
  })
end)
