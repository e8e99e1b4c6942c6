-- Issue 8's scenario against the LSP double.
local S = require('scenario')

t.it('asks, fills the window, compacts through the code action', function()
  S.run(t, {
    cmd = { os.getenv('REIKA_TEST_DOUBLE') },
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
