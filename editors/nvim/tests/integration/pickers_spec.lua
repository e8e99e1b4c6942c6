-- :ReikaMode and :ReikaSessions against the real reika-lsp ($REIKA_LSP_BIN)
-- and the fake engine: the choices go through vim.ui.select (replaced here
-- as telescope or fzf-lua would replace it), and what is chosen reaches the
-- server (the chip, the session the next ask continues).
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

local reika = require('reika')
local client = require('reika.client')
local pickers = require('reika.pickers')

local url
-- picks[i] chooses from the i-th vim.ui.select: a function(items) -> item.
local picks, shown, restore

t.before_each(function()
  H.capture_notify()
  url = url or H.fake_engine(t, 'death-script.json')
  picks = {}
  shown, restore = H.stub_select(function(items)
    local pick = table.remove(picks, 1)
    return pick and pick(items) or nil
  end)
end)

t.after_each(function()
  restore()
  H.stop_servers(t)
  vim.cmd('silent! %bwipeout!')
end)

local function start()
  local state = H.tmpdir()
  local root = H.workspace({ ['main.txt'] = { 'hello' } })
  H.setup_real(state, url)
  return root, H.open(t, root, 'main.txt', 60000)
end

local function named(name)
  return function(items)
    for _, it in ipairs(items) do
      if it == name or (type(it) == 'table' and it.name == name) then
        return it
      end
    end
  end
end

t.it(':ReikaMode lists the server\'s modes and the chip shows the one chosen', function()
  local _, c = start()
  picks = { named('plan') }
  local chosen
  pickers.mode({
    on_done = function(name)
      chosen = name or false
    end,
  })
  t.wait('the mode switch', function()
    return chosen ~= nil
  end, 30000)
  t.eq('plan', chosen)
  t.eq('reika: mode', shown[1].prompt)
  t.contains(shown[1].labels, '* code — ' .. (shown[1].labels[1]:match(' — (.*)$') or ''))
  t.truthy(H.has_line(shown[1].labels, '^  plan — '), vim.inspect(shown[1].labels))
  t.truthy(H.has_line(shown[1].labels, '^  ask — '), vim.inspect(shown[1].labels))
  t.wait('the mode in the status and the chip', function()
    local s = H.status(c)
    return s and s.mode == 'plan' and reika.statusline():find('^plan · ctx') ~= nil
  end, 30000)
  -- The list marks the new mode as the current one.
  picks = { function() end }
  chosen = nil
  vim.cmd('ReikaMode')
  t.wait('the second listing', function()
    return #shown == 2
  end, 30000)
  t.truthy(H.has_line(shown[2].labels, '^%* plan — '), vim.inspect(shown[2].labels))
end)

t.it('parses the /mode listing', function()
  local modes = pickers.parse_modes('Modes (switch with /mode NAME):\n* code — all\n  plan — read\n  not used: x')
  t.eq({
    { name = 'code', description = 'all', current = true },
    { name = 'plan', description = 'read', current = false },
  }, modes)
end)

-- has_sessions reports whether the server knows reika.sessions.
local function has_sessions(c)
  local answer
  client.execute(c, 'reika.sessions', { { action = 'list' } }, function(err, result)
    answer = { err = err, result = result }
  end)
  t.wait('the sessions list', function()
    return answer ~= nil
  end, 30000)
  return answer.err == nil, answer
end

t.it(':ReikaSessions opens a session read-only, resumes, renames and deletes one', function()
  local root, c = start()
  local ok, answer = has_sessions(c)
  if not ok then
    t.skip('this reika-lsp has no reika.sessions: ' .. vim.inspect(answer.err))
  end
  local first = H.ask(t, 'say hello', 60000).result.session
  local second
  reika.new_session({
    on_done = function(r)
      second = r.session
    end,
  })
  t.wait('the new session', function()
    return second ~= nil
  end, 30000)
  H.ask(t, 'say hello again', 60000)
  local function run(pick_session, action)
    local done
    picks = { pick_session, named(action) }
    for i = #shown, 1, -1 do -- the stub records into this table
      shown[i] = nil
    end
    pickers.sessions({
      on_done = function(a)
        done = a or false
      end,
    })
    t.wait(action .. ' of a session', function()
      return done ~= nil
    end, 30000)
    return done
  end
  local function id_is(id)
    return function(items)
      for _, s in ipairs(items) do
        if s.id == id then
          return s
        end
      end
    end
  end
  t.eq('open', run(id_is(first), 'open'))
  t.eq(2, #shown[1].labels, vim.inspect(shown))
  t.matches('^%* say hello again · 1 turn · ', shown[1].labels[1])
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.truthy(H.has_line(lines, '^> say hello$'), vim.inspect(lines))
  t.falsy(vim.bo.modifiable, 'read-only')
  t.eq('resume', run(id_is(first), 'resume'))
  t.wait('the resumed session in the status', function()
    return H.status(c).session == first
  end, 30000)
  -- The transcript goes on with the resumed session's conversation.
  local tr = H.transcript(root)
  local header
  for i, l in ipairs(tr) do
    if l:find('^=== session ') then
      header = i
    end
  end
  t.eq('=== session ' .. first .. ' ===', tr[header], vim.inspect(tr))
  t.truthy(H.has_line(vim.list_slice(tr, header), '^> say hello$'), vim.inspect(tr))
  local real_input = vim.ui.input
  vim.ui.input = function(_, on_confirm)
    on_confirm('the first one')
  end
  t.eq('rename', run(id_is(first), 'rename'))
  vim.ui.input = real_input
  t.eq('the first one', id_is(first)(select(2, has_sessions(c)).result.sessions).title)
  t.eq('delete', run(id_is(second), 'delete'))
  local _, after = has_sessions(c)
  t.eq(nil, id_is(second)(after.result.sessions), 'the deleted session is gone')
  t.truthy(id_is(first)(after.result.sessions), 'the other stays')
  t.truthy(root)
end)
