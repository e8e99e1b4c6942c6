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
local t0 = vim.loop.hrtime()
for i = 1, n do
  local text = chunk
  if i % 8 == 0 then
    text = text .. '\n'
  end
  v:apply({ session = 's', turn = 1, round = 1, kind = 'assistant', text = text, delta = true })
end
local t1 = vim.loop.hrtime()
v:apply({ session = 's', turn = 1, round = 1, kind = 'assistant', text = string.rep(chunk, n), delta = false })
local t2 = vim.loop.hrtime()
for i = 1, n do
  v:apply({ session = 's', turn = 1, round = i + 1, kind = 'tool_result', tool = 'read', text = 'x lines 1-3\n1\n2\n3', delta = false })
end
local t3 = vim.loop.hrtime()
io.stdout:write(string.format(
  '%d deltas (%d bytes): %.1f ms (%.3f ms/delta); final message: %.1f ms; %d tool results: %.1f ms (%.3f ms each); %d lines\n',
  n, n * #chunk, (t1 - t0) / 1e6, (t1 - t0) / 1e6 / n, (t2 - t1) / 1e6, n, (t3 - t2) / 1e6, (t3 - t2) / 1e6 / n,
  vim.api.nvim_buf_line_count(v.bufnr)
))
