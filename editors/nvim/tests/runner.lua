-- A tiny test runner for headless Neovim: describe/it, assertions, and a
-- summary line. run.sh starts one Neovim per spec file:
--
--   nvim --headless -u NONE -i NONE -n \
--     -c "lua dofile('tests/runner.lua').main('tests/unit/x_spec.lua')"
--
-- Neovim exits 0 when every test passed, 1 when one failed and 77 when the
-- file asked to be skipped as a whole (t.skip_file).
local R = {}

local tests = {}
local prefix = {}
local befores = {}
local afters = {}

local SKIP = {}

function R.describe(name, fn)
  table.insert(prefix, name)
  local nb, na = #befores, #afters
  fn()
  for i = #befores, nb + 1, -1 do
    befores[i] = nil
  end
  for i = #afters, na + 1, -1 do
    afters[i] = nil
  end
  table.remove(prefix)
end

function R.it(name, fn)
  local full = table.concat(prefix, ' ') .. (#prefix > 0 and ' ' or '') .. name
  tests[#tests + 1] = {
    name = full,
    fn = fn,
    before = vim.list_extend({}, befores),
    after = vim.list_extend({}, afters),
  }
end

function R.before_each(fn)
  befores[#befores + 1] = fn
end

function R.after_each(fn)
  afters[#afters + 1] = fn
end

local function fail(msg, level)
  error(msg, (level or 1) + 1)
end

function R.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    fail(
      string.format(
        '%sexpected %s\n     got %s',
        what and (what .. ': ') or '',
        vim.inspect(expected),
        vim.inspect(actual)
      ),
      2
    )
  end
end

function R.neq(unexpected, actual, what)
  if vim.deep_equal(unexpected, actual) then
    fail(
      string.format('%sdid not expect %s', what and (what .. ': ') or '', vim.inspect(actual)),
      2
    )
  end
end

function R.truthy(v, what)
  if not v then
    fail((what or 'expected a true value') .. ', got ' .. vim.inspect(v), 2)
  end
end

function R.falsy(v, what)
  if v then
    fail((what or 'expected a false value') .. ', got ' .. vim.inspect(v), 2)
  end
end

function R.matches(pattern, s, what)
  if type(s) ~= 'string' or not s:find(pattern) then
    fail(
      string.format(
        '%sexpected a match for %q in %s',
        what and (what .. ': ') or '',
        pattern,
        vim.inspect(s)
      ),
      2
    )
  end
end

-- errors checks that fn raises an error whose message matches pattern.
function R.errors(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then
    fail('expected an error matching ' .. vim.inspect(pattern), 2)
  end
  if not tostring(err):find(pattern) then
    fail(string.format('expected an error matching %q, got %q', pattern, tostring(err)), 2)
  end
end

-- contains checks that list holds an element equal to v.
function R.contains(list, v, what)
  for _, x in ipairs(list or {}) do
    if vim.deep_equal(x, v) then
      return
    end
  end
  fail(
    string.format(
      '%s%s not in %s',
      what and (what .. ': ') or '',
      vim.inspect(v),
      vim.inspect(list)
    ),
    2
  )
end

-- wait processes events until cond() is true. timeout_ms is a hang guard:
-- running out fails the test with what was awaited, it is not a deadline
-- the code under test must meet.
function R.wait(what, cond, timeout_ms)
  local ok = vim.wait(timeout_ms or 20000, cond, 10)
  if not ok then
    fail('gave up waiting for ' .. what, 2)
  end
end

-- skip ends the current test as skipped.
function R.skip(reason)
  error({ [SKIP] = true, reason = reason }, 0)
end

-- skip_file skips the whole file (exit status 77).
function R.skip_file(reason)
  R.file_skipped = reason
end

local function run_test(t)
  local ok, err = true, nil
  local function call(fn)
    local o, e = xpcall(fn, function(e)
      if type(e) == 'table' and e[SKIP] then
        return e
      end
      return debug.traceback(tostring(e), 2)
    end)
    if not o and ok then
      ok, err = false, e
    end
  end
  for _, b in ipairs(t.before) do
    call(b)
  end
  if ok then
    call(t.fn)
  end
  for _, a in ipairs(t.after) do
    call(a)
  end
  return ok, err
end

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- main loads one spec file, runs its tests and exits Neovim.
function R.main(file)
  local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)')
  package.path = here .. '?.lua;' .. package.path
  _G.t = R
  local passed, failed, skipped = 0, 0, 0
  local ok, err = xpcall(function()
    dofile(file)
  end, debug.traceback)
  if not ok then
    out('FAIL ' .. file .. ' (loading)\n' .. tostring(err))
    failed = failed + 1
  elseif R.file_skipped then
    out('SKIP ' .. file .. ': ' .. R.file_skipped)
    vim.cmd('cquit 77')
    return
  else
    for _, test in ipairs(tests) do
      local tok, terr = run_test(test)
      if tok then
        passed = passed + 1
        out('ok   ' .. test.name)
      elseif type(terr) == 'table' and terr[SKIP] then
        skipped = skipped + 1
        out('skip ' .. test.name .. ': ' .. tostring(terr.reason))
      else
        failed = failed + 1
        out('FAIL ' .. test.name .. '\n' .. tostring(terr))
      end
    end
  end
  out(
    string.format(
      '%s: %d passed, %d failed, %d skipped',
      vim.fn.fnamemodify(file, ':t'),
      passed,
      failed,
      skipped
    )
  )
  if failed > 0 then
    vim.cmd('cquit 1')
  elseif passed == 0 then
    out('no test ran in ' .. file)
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

return R
