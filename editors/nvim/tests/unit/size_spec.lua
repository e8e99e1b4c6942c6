-- Sizes (as internal/deptest holds the Go code to them): no Lua file of the
-- plugin over 600 lines, no function over 80. A function runs from its
-- `function` line to the `end` at the same indentation (stylua's layout).
local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')

local function files()
  local out = vim.fn.glob(plugin .. '/lua/reika/*.lua', false, true)
  vim.list_extend(out, vim.fn.glob(plugin .. '/plugin/*.lua', false, true))
  return out
end

-- functions lists { line, length } of the functions in lines.
local function functions(lines)
  local out = {}
  for i, l in ipairs(lines) do
    local indent = l:match('^(%s*)local function ')
      or l:match('^(%s*)function ')
      or l:match('^(%s*).-= function%(')
      or l:match('^(%s*).-%(function%(')
    if indent and not l:match('end[,)]*$') then
      for j = i + 1, #lines do
        local e = lines[j]
        if e:sub(1, #indent + 3) == indent .. 'end' and not e:sub(#indent + 1, #indent + 1):match('%s') then
          out[#out + 1] = { line = i, length = j - i + 1 }
          break
        end
      end
    end
  end
  return out
end

t.describe('sizes', function()
  t.it('finds the functions it measures', function()
    local fns = functions({ 'local function a()', '  x()', 'end', 'M.b = function()', 'end' })
    t.eq({ { line = 1, length = 3 }, { line = 4, length = 2 } }, fns)
  end)

  t.it('keeps every file under 600 lines and every function under 80', function()
    local n = 0
    for _, f in ipairs(files()) do
      local lines = vim.fn.readfile(f)
      local name = vim.fn.fnamemodify(f, ':t')
      t.truthy(#lines <= 600, name .. ' has ' .. #lines .. ' lines')
      for _, fn in ipairs(functions(lines)) do
        n = n + 1
        t.truthy(fn.length <= 80, string.format('%s:%d: a function of %d lines', name, fn.line, fn.length))
      end
    end
    t.truthy(n > 100, 'measured the functions: ' .. n)
  end)
end)
