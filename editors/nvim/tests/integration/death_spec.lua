-- A server death always shows (issue 16): the real reika-lsp
-- ($REIKA_LSP_BIN, with the fake engine) killed with SIGKILL and with
-- SIGTERM turns the chip to the red stopped state with a message, the ask
-- in flight ends, buffer switches do not restart it, and the next command
-- does: the server resumes the workspace's last session. A stop that was
-- asked for, even one that ends with SIGTERM, shows nothing.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

local reika = require('reika')
local client = require('reika.client')
local compat = require('reika.compat')
local levels = vim.log.levels

local url = nil
local notes
-- The vim.notify Neovim has, before a test replaces it.
local real_notify = vim.notify

t.before_each(function()
  notes = H.capture_notify()
  url = url or H.fake_engine(t, 'death-script.json')
end)

-- Each test starts with no server and no buffer of an earlier one (setup
-- attaches the buffers already loaded).
t.after_each(function()
  H.stop_servers(t)
  vim.cmd('silent! %bwipeout!')
end)

-- start sets the plugin up for a new workspace, runs one turn and returns
-- the root, the client and the session id.
-- start_in is start in a given state directory and workspace.
local function start_in(state, root)
  H.setup_real(state, url)
  local c = H.open(t, root, 'main.txt', 60000)
  local done = H.ask(t, 'say hello', 60000)
  t.eq('done', done.result and done.result.status, vim.inspect(done))
  local session = done.result.session
  t.truthy(type(session) == 'string' and session ~= '', 'a session id')
  return root, c, session, state
end

local function start()
  local state = H.tmpdir()
  local root = H.workspace({ ['main.txt'] = { 'hello' }, ['other.txt'] = { 'other' } })
  return start_in(state, root)
end

-- stop stops a client as a user would (force: through the plugin, which
-- knows its SIGTERM was asked for) and waits for its server to exit.
local function stop(c, force)
  if force then
    reika.stop(nil, true)
  else
    compat.stop(c)
  end
  t.wait('the server to exit', function()
    return client.state.get(c.id) == nil
  end)
end

local function died(name, signum)
  return function()
    local root, c, session = start()
    -- A turn is running when the server dies.
    local held
    reika.ask({
      prompt = '[hold] wait for me',
      on_done = function(r, e)
        held = { result = r, err = e }
      end,
    })
    t.wait('the held turn to start', function()
      return H.status(c).busy == true
    end)
    -- Asking again meanwhile is refused in words that name no protocol
    -- command (the server's message says reika.cancel).
    local second = H.ask(t, 'another').result
    t.eq('error', second.status)
    local refusal = H.find(notes, 'running', levels.ERROR)
    t.truthy(refusal, 'the refusal shown: ' .. vim.inspect(notes))
    t.falsy(refusal.msg:find('reika%.%a'), 'no protocol command in ' .. refusal.msg)
    local pid = H.server_pid(t, c)
    t.eq(0, (vim.loop.kill(pid, signum)), 'kill ' .. pid)

    t.wait('the red stopped chip', function()
      return reika.statusline() == 'reika-lsp stopped'
    end)
    t.eq('error', reika.statusline_level())
    t.eq('ReikaStatusError', reika.statusline_hl())
    local pattern = '^reika: server killed by ' .. name .. '; any :Reika command restarts it$'
    t.truthy(H.find(notes, pattern, levels.ERROR), 'the message in ' .. vim.inspect(notes))
    t.wait('the ask in flight to end', function()
      return held ~= nil
    end)
    t.truthy(held.err and held.err.stopped, 'the ask failed with the server: ' .. vim.inspect(held))
    t.falsy(H.find(notes, 'ask failed'), 'no second message for the ask')
    t.eq('', reika.progress(), 'no progress left')

    -- Entering buffers of the workspace does not restart it.
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/other.txt'))
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/main.txt'))
    t.eq(nil, client.state.client_id(root), 'no autostart after a death')
    t.eq('reika-lsp stopped', reika.statusline(), 'the chip stays red')

    -- The next command restarts it, and the server resumes the session.
    vim.cmd('ReikaStatus')
    local again
    t.wait('a new server for the workspace', function()
      local id = client.state.client_id(root)
      again = id and vim.lsp.get_client_by_id(id)
      return again ~= nil and again.initialized and H.status(again) ~= nil
    end, 60000)
    t.neq(c.id, again.id, 'a new client')
    t.wait('the resumed session in the status', function()
      return H.status(again).session == session
    end)
    t.neq('reika-lsp stopped', reika.statusline(), 'the red chip is gone')
    t.neq('error', reika.statusline_level())
    local done = H.ask(t, 'say hello again', 60000)
    t.eq(session, done.result and done.result.session, 'the turn ran in the resumed session')
    t.truthy(
      H.has_line(H.transcript(root), '^%-%-%- turn 3 %-%-%-$'),
      'the third turn of the session: ' .. vim.inspect(H.transcript(root))
    )
    stop(again)
  end
end

t.it('shows a server killed with SIGKILL, and the next command resumes it', died('SIGKILL', 9))
t.it('shows a server killed with SIGTERM, and the next command resumes it', died('SIGTERM', 15))

-- asked_stop stops the server as a user would (force: Neovim ends it with
-- SIGTERM) and checks that nothing shows.
local function asked_stop(force)
  return function()
    local _, c = start()
    local n = #notes
    stop(c, force)
    t.eq('', reika.statusline(), 'the chip is dropped')
    t.eq(nil, reika.statusline_level())
    local errors = vim.tbl_filter(function(x)
      return x.level == levels.ERROR
    end, vim.list_slice(notes, n + 1))
    t.eq({}, errors, 'no error shown')
  end
end

t.it('shows nothing when a stop was asked for', asked_stop(false))
t.it('shows nothing when a forced stop ends the server with SIGTERM', asked_stop(true))

-- What a user sees of a death with Neovim's own vim.notify: exactly one
-- line in :messages (Neovim's "Client reika quit with exit code 0 and
-- signal 9" is not shown beside the plugin's), narrower than the screen,
-- so nothing waits for ENTER (issue 31).
t.it('leaves one line in :messages when the server is killed', function()
  local _, c = start()
  vim.notify = real_notify
  vim.cmd('messages clear')
  local pid = H.server_pid(t, c)
  t.eq(0, (vim.loop.kill(pid, 9)), 'kill ' .. pid)
  t.wait('the red stopped chip', function()
    return reika.statusline() == 'reika-lsp stopped'
  end)
  -- Neovim's own line is scheduled after the plugin's: let a few turns of
  -- the event loop pass.
  vim.wait(300)
  -- The test runs inside nvim -c 'lua …', so an error message gets the
  -- header "Error detected while processing command line:" here; in an
  -- editor the death is handled from the event loop, where it gets none.
  local lines = vim.tbl_filter(function(l)
    return l ~= 'Error detected while processing command line:'
  end, vim.split(vim.api.nvim_exec('messages', true), '\n', { trimempty = true }))
  t.eq(1, #lines, 'one line in :messages: ' .. vim.inspect(lines))
  t.matches('^reika: server killed by SIGKILL; any :Reika command restarts it$', lines[1])
  t.truthy(vim.fn.strdisplaywidth(lines[1]) < vim.o.columns, 'fits the screen: ' .. lines[1])
  t.eq(real_notify, vim.notify, 'vim.notify is the user\'s again')
end)

-- A Neovim that starts again on a workspace whose session resumes shows
-- the earlier conversation in its transcript buffer: the plugin asks the
-- server for reika.transcript when its client starts (issue 31). The
-- plugin's modules are loaded anew, as a new Neovim would.
t.it('shows the resumed session\'s transcript after Neovim starts again', function()
  local root, c, session, state = start()
  stop(c)
  vim.cmd('silent! %bwipeout!')
  for name in pairs(package.loaded) do
    if name == 'reika' or vim.startswith(name, 'reika.') then
      package.loaded[name] = nil
    end
  end
  reika = require('reika')
  client = require('reika.client')
  compat = require('reika.compat')
  t.eq(nil, next(client.state.workspaces), 'no workspace yet')
  reika.setup({
    cmd = { os.getenv('REIKA_LSP_BIN') },
    cmd_env = { XDG_STATE_HOME = state .. '/state', XDG_CONFIG_HOME = state .. '/config' },
    settings = { baseUrl = url },
    transcript = { open_on_ask = false },
  })
  local again = H.open(t, root, 'main.txt', 60000)
  t.wait('the earlier conversation in the transcript', function()
    return H.has_line(H.transcript(root), '^> say hello$')
  end, 30000)
  local lines = H.transcript(root)
  t.truthy(H.has_line(lines, '^=== session ' .. vim.pesc(session) .. ' ===$'), vim.inspect(lines))
  t.truthy(H.has_line(lines, '^Hello%.$'), 'the reply: ' .. vim.inspect(lines))
  t.eq(1, H.count_lines(lines, '^> say hello$'), 'shown once: ' .. vim.inspect(lines))
  stop(again)
end)
