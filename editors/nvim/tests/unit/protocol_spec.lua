-- The names in lua/reika/protocol.lua must match the Go contracts.
local protocol = require('reika.protocol')

local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h:h:h')

local function read(rel)
  local f = assert(io.open(root .. '/' .. rel, 'r'), 'cannot read ' .. rel)
  local s = f:read('*a')
  f:close()
  return s
end

t.describe('protocol mirrors agent/settings.go', function()
  t.it('lists every setting, in the same order', function()
    local src = read('agent/settings.go')
    local block = src:match('var settingsTable = %[%]setting{(.-)\n}')
    t.truthy(block, 'settingsTable found in agent/settings.go')
    local go = {}
    for name in block:gmatch('{name: "([%w]+)",') do
      go[#go + 1] = name
    end
    t.truthy(#go >= 13, 'parsed the Go settings')
    t.eq(go, require('reika.config').setting_names())
  end)
end)

t.describe('protocol mirrors agent/api.go', function()
  local src = read('agent/api.go')
  local function go_const(name)
    return src:match('\n%s*' .. name .. '%s*=%s*"([^"]*)"')
  end
  t.it('has the transcript event kinds', function()
    local names = {
      user = 'EventUser',
      assistant = 'EventAssistant',
      reasoning = 'EventReasoning',
      tool_call = 'EventToolCall',
      tool_result = 'EventToolResult',
      note = 'EventNote',
      shed = 'EventShed',
      fold = 'EventFold',
      info = 'EventInfo',
      error = 'EventError',
    }
    for key, const in pairs(names) do
      t.eq(go_const(const), protocol.event[key], const)
    end
  end)
  t.it('has the status levels and ask statuses', function()
    t.eq(go_const('LevelOK'), protocol.level.ok)
    t.eq(go_const('LevelWarning'), protocol.level.warning)
    t.eq(go_const('LevelError'), protocol.level.error)
    t.eq(go_const('AskDone'), protocol.ask_status.done)
    t.eq(go_const('AskCancelled'), protocol.ask_status.cancelled)
    t.eq(go_const('AskError'), protocol.ask_status.error)
  end)
  t.it('uses the JSON field names of Status', function()
    for _, field in ipairs({
      'text',
      'tooltip',
      'level',
      'busy',
      'size',
      'window',
      'shedPoint',
      'percent',
      'windowSource',
      'model',
      'session',
    }) do
      t.matches('json:"' .. field .. '"', src, 'Status field ' .. field)
    end
  end)
end)
