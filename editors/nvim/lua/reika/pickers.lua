-- Choices made with vim.ui.select (telescope, fzf-lua, snacks and dressing
-- users get their picker): the session mode (:ReikaMode) and the
-- workspace's sessions (:ReikaSessions, reika.sessions: docs/protocol.md
-- §3.9).
local client = require('reika.client')
local format = require('reika.format')
local protocol = require('reika.protocol')

local M = {}

local levels = vim.log.levels

local function tell(msg, level)
  client.notify(format.user_words(msg), level or levels.INFO)
end

local function failed(what, err)
  if type(err) == 'table' and err.stopped then
    return
  end
  local msg = type(err) == 'table' and tostring(err.message or vim.inspect(err)) or tostring(err)
  tell(what .. ' failed: ' .. msg, levels.ERROR)
end

local function with_client(o, fn)
  local c, err = client.current(o.bufnr, true)
  if not c then
    tell(err or 'reika-lsp is not running', levels.ERROR)
    return
  end
  fn(c)
end

-- parse_modes reads the /mode listing ("Modes (switch with /mode NAME):",
-- then "* code — every tool" with * on the current one) into
-- { {name, description, current} }.
function M.parse_modes(text)
  local out = {}
  for line in tostring(text or ''):gmatch('[^\n]+') do
    local mark, name, desc = line:match('^([* ]) (%S+) — (.*)$')
    if name then
      out[#out + 1] = { name = name, description = desc, current = mark == '*' }
    end
  end
  return out
end

-- slash sends a slash prompt with reika.ask and calls cb(result) when it
-- answers done.
local function slash(c, prompt, what, cb)
  client.execute(c, protocol.command.ask, { { prompt = prompt } }, function(err, result)
    if err then
      failed(what, err)
    elseif type(result) ~= 'table' or result.status ~= protocol.ask_status.done then
      failed(what, type(result) == 'table' and (result.message or result.status) or 'no answer')
    else
      cb(result)
    end
  end)
end

-- mode lists the modes (the server's /mode) and switches to the one
-- chosen (/mode NAME). o: bufnr, on_done(name|nil).
function M.mode(o)
  o = o or {}
  local done = o.on_done or function() end
  with_client(o, function(c)
    slash(c, '/mode', 'mode', function(result)
      local modes = M.parse_modes(result.message)
      if #modes == 0 then
        tell('the server listed no modes', levels.WARN)
        return done(nil)
      end
      vim.ui.select(modes, {
        prompt = 'reika: mode',
        kind = 'reika.mode',
        format_item = function(m)
          return (m.current and '* ' or '  ') .. m.name .. ' — ' .. m.description
        end,
      }, function(m)
        if not m or m.current then
          return done(m and m.name or nil)
        end
        slash(c, '/mode ' .. m.name, 'mode', function()
          done(m.name)
        end)
      end)
    end)
  end)
end

-- session_label is one line of the sessions picker: "* title · 3 turns ·
-- 2026-12-03 13:05", * on the current session.
function M.session_label(s)
  local when = tostring(s.updated or s.started or ''):gsub('T', ' '):gsub(':%d%d[%.%d]*Z?[+-]?[%d:]*$', '')
  local turns = tonumber(s.turns) or 0
  return string.format(
    '%s%s · %d turn%s · %s',
    s.current and '* ' or '  ',
    (s.title and s.title ~= '' and s.title) or tostring(s.id),
    turns,
    turns == 1 and '' or 's',
    when
  )
end

local function sessions_call(c, arg, what, cb)
  client.execute(c, protocol.command.sessions, { arg }, function(err, result)
    if err then
      failed(what, err)
      return
    end
    cb(type(result) == 'table' and result or {})
  end)
end

-- open_session shows a session's transcript read-only in a scratch buffer.
local function open_session(c, s, done)
  sessions_call(c, { action = 'open', id = s.id }, 'open session', function(page)
    local view = require('reika.transcript_buffer').new(
      client.root_of(c.id) .. '/session/' .. s.id,
      client.options().transcript
    )
    for _, ev in ipairs(type(page.events) == 'table' and page.events or {}) do
      view.model:apply(ev)
    end
    view:open(client.options().transcript.open)
    done('open', s)
  end)
end

-- session_actions asks what to do with the chosen session.
local function session_actions(c, s, done)
  local acts = { 'open', 'resume', 'rename', 'delete' }
  vim.ui.select(acts, { prompt = 'reika: ' .. M.session_label(s), kind = 'reika.session' }, function(a)
    if a == 'open' then
      open_session(c, s, done)
    elseif a == 'resume' then
      sessions_call(c, { action = 'resume', id = s.id }, 'resume', function()
        tell('resumed session ' .. tostring(s.id))
        -- The workspace's transcript goes on with that session's
        -- conversation.
        client.load_transcript(c, {
          resumed = true,
          on_done = function()
            done('resume', s)
          end,
        })
      end)
    elseif a == 'rename' then
      vim.ui.input({ prompt = 'reika: title: ', default = s.title or '' }, function(title)
        if not title or title:match('^%s*$') then
          return done(nil, s)
        end
        sessions_call(c, { action = 'rename', id = s.id, title = title }, 'rename', function()
          done('rename', s)
        end)
      end)
    elseif a == 'delete' then
      sessions_call(c, { action = 'delete', id = s.id }, 'delete', function()
        tell('deleted session ' .. tostring(s.id))
        done('delete', s)
      end)
    else
      done(nil, s)
    end
  end)
end

-- sessions lists the workspace's sessions (reika.sessions) to open one
-- read-only, resume, rename or delete it. o: bufnr, on_done(action|nil, session).
function M.sessions(o)
  o = o or {}
  local done = o.on_done or function() end
  with_client(o, function(c)
    sessions_call(c, { action = 'list' }, 'sessions', function(result)
      local list = type(result.sessions) == 'table' and result.sessions or {}
      if #list == 0 then
        tell('no sessions in this workspace yet')
        return done(nil, nil)
      end
      vim.ui.select(list, {
        prompt = 'reika: sessions',
        kind = 'reika.sessions',
        format_item = M.session_label,
      }, function(s)
        if not s then
          return done(nil, nil)
        end
        session_actions(c, s, done)
      end)
    end)
  end)
end

return M
