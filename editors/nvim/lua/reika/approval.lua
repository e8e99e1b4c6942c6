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

-- select asks with vim.ui.select and returns the chosen item or nil. It
-- must run in the server-request handler (see the module comment).
function M.select(items, opts)
  local co, is_main = coroutine.running()
  local can_yield = co ~= nil and not is_main
  local done, choice, waiting = false, nil, false
  vim.ui.select(items, opts, function(item)
    if done then
      return
    end
    done, choice = true, item
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
  if done then
    return choice
  end
  if can_yield then
    waiting = true
    coroutine.yield()
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

-- handler is the client's window/showMessageRequest handler. It returns
-- the chosen MessageActionItem, or vim.NIL (JSON null: no answer, which
-- the server takes as Deny).
function M.handler(_, params, _)
  params = params or {}
  local message = type(params.message) == 'string' and params.message or ''
  local actions = params.actions
  if type(actions) ~= 'table' or #actions == 0 then
    vim.notify('reika: ' .. message, message_levels[params.type] or vim.log.levels.INFO)
    return vim.NIL
  end
  local choice = M.select(actions, {
    prompt = 'reika: ' .. message,
    kind = 'reika.approval',
    format_item = function(action)
      return type(action) == 'table' and tostring(action.title) or tostring(action)
    end,
  })
  if choice == nil then
    return vim.NIL
  end
  return choice
end

M.message_levels = message_levels
return M
