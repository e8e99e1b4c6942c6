-- Pure formatting: the statusline chip, highlight groups, token sizes and
-- progress text. Nothing here touches editor state.
local protocol = require('reika.protocol')

local M = {}

-- Highlight groups of the statusline chip, by status level.
M.highlight = {
  [protocol.level.ok] = 'ReikaStatus',
  [protocol.level.warning] = 'ReikaStatusWarn',
  [protocol.level.error] = 'ReikaStatusError',
}

-- tokens prints a token count as the chip does (docs/design.md §3.10): whole k
-- from 10000, one decimal from 1000, the number below.
function M.tokens(n)
  if type(n) ~= 'number' then
    return ''
  end
  if n >= 10000 then
    return string.format('%dk', math.floor(n / 1000 + 0.5))
  end
  if n >= 1000 then
    return string.format('%.1fk', math.floor(n / 100 + 0.5) / 10)
  end
  return tostring(math.floor(n))
end

-- level returns the status level, defaulting to ok for anything unknown.
function M.level(status)
  if type(status) ~= 'table' then
    return nil
  end
  local l = status.level
  if l == protocol.level.warning or l == protocol.level.error then
    return l
  end
  return protocol.level.ok
end

-- chip is the statusline text of a status: the server's `text`, '' before
-- the first status.
function M.chip(status)
  if type(status) ~= 'table' or type(status.text) ~= 'string' then
    return ''
  end
  return status.text
end

-- hl_group is the highlight group for a status (ReikaStatus before the
-- first one); with inactive, the one for statuslines of windows other than
-- the current (ReikaStatusNC, ReikaStatusWarnNC, ReikaStatusErrorNC).
function M.hl_group(status, inactive)
  return M.highlight[M.level(status) or protocol.level.ok] .. (inactive and 'NC' or '')
end

-- escape_statusline doubles % so text shows literally in 'statusline'.
function M.escape_statusline(s)
  return (s:gsub('%%', '%%%%'))
end

-- statusline_item is text (the chip) wrapped in the status's highlight
-- group for use with %{% ... %} or %!, or '' when text is empty. inactive
-- as for hl_group.
function M.statusline_item(status, text, inactive)
  if text == nil or text == '' then
    return ''
  end
  return '%#' .. M.hl_group(status, inactive) .. '#' .. M.escape_statusline(text) .. '%*'
end

-- busy_chip is the chip with the busy sign (frame) before it while the
-- status says a turn runs: "⠋ ctx 3.1k/24k (16% of 20k)".
function M.busy_chip(status, frame)
  local text = M.chip(status)
  if text ~= '' and status.busy == true and frame and frame ~= '' then
    return frame .. ' ' .. text
  end
  return text
end

-- without_chip drops the chip that the server ends a round's report with
-- ("round 3 · read a.go · ctx 12k/24k (61% of 20k)" -> "round 3 · read
-- a.go"), so that progress beside the chip does not repeat it.
function M.without_chip(message)
  local sep = ' · ctx '
  local last
  local from = 1
  while true do
    local i = message:find(sep, from, true)
    if not i then
      break
    end
    last, from = i, i + 1
  end
  if last then
    return message:sub(1, last - 1)
  end
  return message
end

-- progress_text joins the messages of the running work-done progress
-- entries ({title, message, done}) in token order, without the chip:
-- "Reika: round 3 · read a.go".
function M.progress_text(entries)
  local tokens = {}
  for token, e in pairs(entries or {}) do
    if type(e) == 'table' and not e.done and (e.title or e.message) then
      tokens[#tokens + 1] = token
    end
  end
  table.sort(tokens, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local parts = {}
  for _, token in ipairs(tokens) do
    local e = entries[token]
    local message = type(e.message) == 'string' and M.without_chip(e.message) or nil
    if e.title and message and message ~= '' then
      parts[#parts + 1] = e.title .. ': ' .. message
    else
      parts[#parts + 1] = e.title or message
    end
  end
  return table.concat(parts, ', ')
end

-- The user commands of the protocol's commands (plugin/reika.lua).
M.user_commands = {
  [protocol.command.ask] = ':ReikaAsk',
  [protocol.command.compact] = ':ReikaCompact',
  [protocol.command.cancel] = ':ReikaCancel',
  [protocol.command.status] = ':ReikaStatus',
  [protocol.command.save] = ':ReikaSave',
  [protocol.command.new_session] = ':ReikaNew',
}

-- user_words names the user commands where a message from the server
-- names protocol commands ("cancel it (reika.cancel)" -> "cancel it
-- (:ReikaCancel)"). A name inside a word or a path (myreika.cancel,
-- /tmp/reika.save.md) is left alone.
function M.user_words(message)
  return (
    message:gsub('()reika%.(%a+)()', function(from, name, to)
      local before = message:sub(from - 1, from - 1)
      local after, beyond = message:sub(to, to), message:sub(to + 1, to + 1)
      if before:match('[%w._/-]') or after:match('[%w_/-]') then
        return nil
      end
      if after == '.' and beyond ~= '' and not beyond:match('%s') then
        return nil
      end
      return M.user_commands['reika.' .. name]
    end)
  )
end

-- selection_label names a selection for the prompt: "main.go line 3",
-- "main.go lines 3-7" (rows 1-based, either order).
function M.selection_label(name, first, last)
  if last < first then
    first, last = last, first
  end
  if first == last then
    return string.format('%s line %d', name, first)
  end
  return string.format('%s lines %d-%d', name, first, last)
end

-- first_line returns the first line of s and how many lines follow it.
function M.first_line(s)
  s = s or ''
  local nl = s:find('\n', 1, true)
  if not nl then
    return s, 0
  end
  local _, rest = s:sub(nl + 1):gsub('\n', '')
  local tail = s:sub(nl + 1)
  local more = rest + ((tail ~= '' and tail:sub(-1) ~= '\n') and 1 or 0)
  return s:sub(1, nl - 1), more
end

return M
