-- A benchmark of the transcript buffer (not a test: no target is asserted).
--   N=4000 nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=editors/nvim' \
--     -c 'luafile editors/nvim/tests/bench_transcript.lua' -c 'qa!'
-- Streams N assistant chunks of 11 bytes (a newline every 8th) into a
-- visible transcript, then N closed tool results of 4 lines.
local tb = require('reika.transcript_buffer')
local v = tb.new('/bench', {})
v:open('botright vsplit', false)
local chunk = 'abcdefghij '
local n = tonumber(os.getenv('N') or '4000')

local function event(round, kind, text, delta)
  return { session = 's', turn = 1, round = round, kind = kind, text = text, delta = delta }
end

local t0 = vim.loop.hrtime()
for i = 1, n do
  v:apply(event(1, 'assistant', i % 8 == 0 and chunk .. '\n' or chunk, true))
end
local t1 = vim.loop.hrtime()
v:apply(event(1, 'assistant', string.rep(chunk, n), false))
local t2 = vim.loop.hrtime()
for i = 1, n do
  local ev = event(i + 1, 'tool_result', 'x lines 1-3\n1\n2\n3', false)
  ev.tool = 'read'
  v:apply(ev)
end
local t3 = vim.loop.hrtime()

local function ms(a, b)
  return (b - a) / 1e6
end
local stream = ms(t0, t1)
local bytes = n * #chunk
io.stdout:write(
  string.format('%d deltas (%d bytes): %.1f ms (%.3f ms/delta)\n', n, bytes, stream, stream / n)
)
io.stdout:write(string.format('final message: %.1f ms\n', ms(t1, t2)))
local results = ms(t2, t3)
io.stdout:write(string.format('%d tool results: %.1f ms (%.3f ms each)\n', n, results, results / n))
io.stdout:write(string.format('%d lines\n', vim.api.nvim_buf_line_count(v.bufnr)))
