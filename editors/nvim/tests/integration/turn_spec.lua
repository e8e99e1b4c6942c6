-- Issue 8's scenario end to end: the real reika-lsp ($REIKA_LSP_BIN) against
-- the standalone fake engine that run.sh started ($REIKA_TEST_ENGINE_URL,
-- window 16000, replies from fixtures/engine-script.json).
local S = require('scenario')
local H = require('helpers')

local bin = os.getenv('REIKA_LSP_BIN')
local url = os.getenv('REIKA_TEST_ENGINE_URL')
if not bin or bin == '' or not url or url == '' then
  t.skip_file('needs REIKA_LSP_BIN and REIKA_TEST_ENGINE_URL (run.sh sets them)')
  return
end

-- filler makes n numbered lines of prose-like text.
local function filler(name, n)
  local lines = {}
  for i = 1, n do
    lines[i] = string.format(
      '%s line %d: the quick brown fox jumps over the lazy dog again.',
      name,
      i
    )
  end
  return lines
end

t.it('asks, fills the window, compacts through the code action', function()
  local state = H.tmpdir()
  S.run(t, {
    cmd = { bin },
    cmd_env = {
      XDG_STATE_HOME = state .. '/state',
      XDG_CONFIG_HOME = state .. '/config',
      REIKA_DEBUG = '1',
    },
    settings = { baseUrl = url },
    files = {
      ['main.txt'] = { 'A small project for the test.' },
      -- About 12 KB each: one read takes the 16k window past 80% of the
      -- shed point by the server's estimate.
      ['notes/one.txt'] = filler('one', 180),
      ['notes/two.txt'] = filler('two', 180),
    },
    file = 'main.txt',
    prompt = 'Read notes/one.txt and notes/two.txt and tell me what they hold.',
    timeout = 120000,
  })
end)
