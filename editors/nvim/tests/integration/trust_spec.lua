-- Issue 32's trust question in Neovim, against the real reika-lsp
-- ($REIKA_LSP_BIN), the fake engine and the test MCP server over stdio
-- ($REIKA_TEST_MCPSERVER): a workspace's .mcp.json runs commands, so the
-- server asks (window/showMessageRequest with its own three actions) before
-- it starts them. The question reaches the user through vim.ui.select
-- (replaced here as a picker plugin would), and the answer decides whether
-- the server's tools are there, remembered for the next start.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE', 'REIKA_TEST_MCPSERVER') then
  return
end

local client = require('reika.client')

local url
-- answer is the title chosen at the next question; shown what was asked.
local answer, shown, restore

t.before_each(function()
  H.capture_notify()
  url = url or H.fake_engine(t, 'death-script.json')
  shown, restore = H.stub_select(function(items)
    for _, it in ipairs(items) do
      if type(it) == 'table' and it.title == answer then
        return it
      end
    end
  end)
end)

t.after_each(function()
  restore()
  H.stop_servers(t)
  vim.cmd('silent! %bwipeout!')
end)

-- workspace is a workspace whose .mcp.json names the test server as
-- "probe", and a state directory for it that outlives one server.
local function workspace()
  local mcp = string.format('{"mcpServers": {"probe": {"command": %q}}}', os.getenv('REIKA_TEST_MCPSERVER'))
  return H.workspace({ ['main.txt'] = { 'hello' }, ['.mcp.json'] = { mcp } }), H.tmpdir()
end

-- start serves root, asks once, and returns the status after the answer.
local function start(root, state)
  H.setup_real(state, url)
  local c = H.open(t, root, 'main.txt', 60000)
  local done = H.ask(t, 'say hello', 60000)
  t.eq(nil, done.err)
  -- The status as the server has it now (the servers start before the
  -- turn's first request).
  local st
  client.execute(c, 'reika.status', {}, function(err, result)
    st = { err = err, result = result }
  end)
  t.wait('the status', function()
    return st ~= nil
  end, 30000)
  t.eq(nil, st.err)
  t.eq('string', type(st.result.tooltip), vim.inspect(st.result))
  return st.result
end

t.it('asks before starting a workspace\'s MCP servers; Start servers starts them and is remembered', function()
  local root, state = workspace()
  answer = 'Start servers'
  local st = start(root, state)
  t.eq(1, #shown, vim.inspect(shown))
  t.eq({ 'Start servers', 'Not now', 'Never for this workspace' }, shown[1].labels)
  t.matches("start the MCP servers of this workspace's %.mcp%.json %(probe%)", shown[1].prompt)
  t.matches('probe %(workspace%): %d+ tools', st.tooltip)
  H.stop_servers(t)
  -- The next start asks nothing and starts the server.
  answer = nil
  st = start(root, state)
  t.eq(1, #shown, 'asked again: ' .. vim.inspect(shown))
  t.matches('probe %(workspace%): %d+ tools', st.tooltip)
end)

t.it('Not now leaves the servers out and asks again; Never is remembered', function()
  local root, state = workspace()
  answer = 'Not now'
  local st = start(root, state)
  t.eq(1, #shown, vim.inspect(shown))
  t.falsy(st.tooltip:find('probe (workspace): ', 1, true), st.tooltip)
  H.stop_servers(t)
  answer = 'Never for this workspace'
  st = start(root, state)
  t.eq(2, #shown, 'not asked again after Not now: ' .. vim.inspect(shown))
  t.falsy(st.tooltip:find('probe (workspace): ', 1, true), st.tooltip)
  H.stop_servers(t)
  answer = 'Start servers'
  st = start(root, state)
  t.eq(2, #shown, 'asked again after Never: ' .. vim.inspect(shown))
  t.falsy(st.tooltip:find('probe (workspace): ', 1, true), st.tooltip)
end)
