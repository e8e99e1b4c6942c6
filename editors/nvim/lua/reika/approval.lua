-- window/showMessageRequest (the server's approvals: Allow / Allow for this
-- session / Deny) shown with vim.ui.select.
--
-- Neovim 0.9+ runs server-request handlers in a coroutine, so an
-- asynchronous vim.ui.select (telescope, dressing, snacks) can answer later:
-- the handler yields until the choice is made. Neovim 0.7 and 0.8 need the
-- answer before the handler returns; the built-in vim.ui.select answers at
-- once, and when a replacement does not, the built-in prompt (inputlist)
-- asks instead.
local M = {}

local message_levels = {
  [1] = vim.log.levels.ERROR,
  [2] = vim.log.levels.WARN,
  [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG,
}

M.warned_async = false

-- inputlist is the synchronous fallback prompt.
function M.inputlist(items, opts)
  local choices = { opts.prompt }
  for i, item in ipairs(items) do
    choices[#choices + 1] = string.format('%d: %s', i, opts.format_item(item))
  end
  local n = vim.fn.inputlist(choices)
  return items[n]
end

-- pend makes withdraw one of client id's pending approvals (M.pending),
-- until the returned function is called.
local function pend(id, withdraw)
  M.pending[id] = M.pending[id] or {}
  M.pending[id][withdraw] = true
  return function()
    if M.pending[id] then
      M.pending[id][withdraw] = nil
    end
  end
end

-- say_withdrawn is the one line saying an approval was withdrawn, and why.
local function say_withdrawn(why, what)
  require('reika.client').notify(string.format('approval withdrawn (%s): %s', why, what), vim.log.levels.INFO)
end

-- select asks with vim.ui.select and returns the chosen item or nil. It
-- must run in the server-request handler (see the module comment). While a
-- picker that answers later is open, the question is client_id's pending
-- approval: withdrawn (M.withdraw), it says so in one line and an answer
-- picked after that counts for nothing (the picker itself cannot be
-- closed from here).
function M.select(items, opts, client_id, what)
  local co, is_main = coroutine.running()
  local can_yield = co ~= nil and not is_main
  local done, choice, waiting = false, nil, false
  local function resume()
    if waiting then
      waiting = false
      vim.schedule(function()
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify('reika: approval: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end
  end
  vim.ui.select(items, opts, function(item)
    if done then
      return
    end
    done, choice = true, item
    resume()
  end)
  if done then
    return choice
  end
  if can_yield then
    local id = client_id or 0
    local function withdraw(why)
      if done then
        return
      end
      done, choice = true, nil
      say_withdrawn(why, what or 'the question')
      resume()
    end
    local unpend = pend(id, withdraw)
    waiting = true
    coroutine.yield()
    unpend()
    return choice
  end
  -- Neovim < 0.9: the answer is due now. Stop the late callback from
  -- counting and ask with the built-in prompt.
  done = true
  if not M.warned_async then
    M.warned_async = true
    vim.notify(
      'reika: this Neovim needs an answer at once, and vim.ui.select did not give one;'
        .. ' asking with the built-in prompt (Neovim 0.9+ waits for asynchronous pickers)',
      vim.log.levels.WARN
    )
  end
  return M.inputlist(items, opts)
end

-- wait_for runs start(done) and returns what done was called with: the
-- handler yields until then on Neovim 0.9+; before, the answer is due at
-- once and ask_now() gives it (the diff stays shown meanwhile).
local function wait_for(start, ask_now)
  local co, is_main = coroutine.running()
  local done, value, waiting = false, nil, false
  local _, close = start(function(v)
    if done then
      return
    end
    done, value = true, v
    if waiting then
      waiting = false
      vim.schedule(function()
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify('reika: approval: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end
  end)
  if not done and co ~= nil and not is_main then
    waiting = true
    coroutine.yield()
    return value
  end
  if done then
    return value
  end
  done = true
  value = ask_now()
  close()
  return value
end

-- pending holds the approvals waiting for an answer (diff tabs, and list
-- prompts whose picker answers later), by client id: a set of withdraw
-- functions.
M.pending = {}

-- withdraw closes the diff tabs of client_id's pending approvals and says
-- so in one line each, naming why (a few words): their requests are gone.
-- The server cancels a request ($/cancelRequest) only when it gives up on
-- it: the turn was cancelled or the server is stopping (docs/protocol.md
-- §3.1, §10), which takes every approval of the turn; Neovim does not tell
-- a handler its request's id, so all of the client's pending ones go. The
-- end of a turn (its ask answered) or of the server takes them all too.
function M.withdraw(client_id, why)
  local set = M.pending[client_id]
  M.pending[client_id] = nil
  for w in pairs(set or {}) do
    w(why)
  end
end

-- diff_answer asks about an edit with the diff tab (reika.diffview) and
-- returns the chosen action, nil when denied or withdrawn, false when the
-- diff cannot be built.
function M.diff_answer(params, actions, ctx, select_opts)
  local client = require('reika.client')
  if not client.options().diff_approvals then
    return false
  end
  local diffview = require('reika.diffview')
  local ok, d = pcall(diffview.build, params.message, ctx and client.root_of(ctx.client_id))
  if not ok or not d then
    return false
  end
  local id = ctx and ctx.client_id or 0
  local withdrawn, unpend = false, nil
  local title = wait_for(function(done)
    local tab, close = diffview.open(d, done)
    unpend = pend(id, function(why)
      withdrawn = true
      done(nil)
      close()
      say_withdrawn(why, (d.title:gsub('^Reika wants to ', '')))
    end)
    return tab, close
  end, function()
    local item = M.inputlist(actions, select_opts)
    return item and select_opts.format_item(item) or nil
  end)
  if unpend then
    unpend()
  end
  if withdrawn then
    return nil
  end
  for _, action in ipairs(actions) do
    if type(action) == 'table' and action.title == title then
      return action
    end
  end
  return nil
end

-- handler is the client's window/showMessageRequest handler. It returns
-- the chosen MessageActionItem, or vim.NIL (JSON null: no answer, which
-- the server takes as Deny).
function M.handler(_, params, ctx)
  params = params or {}
  local message = type(params.message) == 'string' and params.message or ''
  local actions = params.actions
  if type(actions) ~= 'table' or #actions == 0 then
    vim.notify('reika: ' .. message, message_levels[params.type] or vim.log.levels.INFO)
    return vim.NIL
  end
  local opts = {
    prompt = 'reika: ' .. message,
    kind = 'reika.approval',
    format_item = function(action)
      return type(action) == 'table' and tostring(action.title) or tostring(action)
    end,
  }
  local choice = M.diff_answer(params, actions, ctx, opts)
  if choice == false then
    choice = M.select(actions, opts, ctx and ctx.client_id, (message:gsub('^Reika wants to ', ''):gsub('\n.*', '')))
  end
  if choice == nil then
    return vim.NIL
  end
  return choice
end

M.message_levels = message_levels
return M
