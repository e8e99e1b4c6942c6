-- Helpers for the tests that run the plugin against a server.
local H = {}

-- Neovim runs with -u NONE: load the plugin/ file as startup would.
vim.cmd('runtime plugin/reika.lua')

-- here is the tests/ directory.
H.here = debug.getinfo(1, 'S').source:sub(2):match('(.*)/') or '.'

-- need returns the values of environment variables naming executables
-- (tests/run.sh sets them). When one is missing the spec file is skipped,
-- and under REIKA_TEST_STRICT=1 (CI) it fails instead.
function H.need(t, ...)
  local values, missing = {}, {}
  for i, name in ipairs({ ... }) do
    local v = os.getenv(name)
    if v == nil or v == '' or vim.fn.executable(v) ~= 1 then
      missing[#missing + 1] = name
    end
    values[i] = v
  end
  if #missing == 0 then
    return unpack(values)
  end
  local why = 'needs '
    .. table.concat(missing, ' and ')
    .. ' set to executables (tests/run.sh sets them)'
  if os.getenv('REIKA_TEST_STRICT') == '1' then
    error(why .. '; REIKA_TEST_STRICT=1 does not allow skipping', 0)
  end
  t.skip_file(why)
  return nil
end

-- fake_engine starts the standalone fake engine ($REIKA_TEST_FAKEENGINE)
-- with the script tests/fixtures/NAME and window ctx (default 16000), and
-- returns its base URL. With -stdin it exits when this Neovim does.
function H.fake_engine(t, name, ctx)
  local bin = os.getenv('REIKA_TEST_FAKEENGINE')
  local cmd = {
    bin,
    '-addr',
    '127.0.0.1:0',
    '-ctx',
    tostring(ctx or 16000),
    '-script',
    H.here .. '/fixtures/' .. name,
    '-stdin',
  }
  local url, code, partial, errs = nil, nil, '', {}
  local job = vim.fn.jobstart(cmd, {
    on_stdout = function(_, data)
      if url then
        return
      end
      partial = partial .. data[1]
      if #data > 1 then
        url = partial
      end
    end,
    on_stderr = function(_, data)
      vim.list_extend(errs, data)
    end,
    on_exit = function(_, c)
      code = c
    end,
  })
  t.truthy(job > 0, 'the fake engine started: ' .. table.concat(cmd, ' '))
  t.wait('the fake engine to print its URL', function()
    return url ~= nil or code ~= nil
  end, 30000)
  if not url then
    error(string.format('the fake engine exited (%s): %s', code, table.concat(errs, '\n')), 0)
  end
  t.matches('^http://127%.0%.0%.1:%d+/v1$', url, 'the fake engine URL')
  return url, job
end

-- tmp is a directory run.sh removes afterwards.
function H.tmpdir()
  local base = os.getenv('REIKA_TEST_TMP')
  local dir
  if base and base ~= '' then
    dir = base .. '/ws-' .. tostring(vim.loop.hrtime())
  else
    dir = vim.fn.tempname()
  end
  vim.fn.mkdir(dir, 'p')
  return vim.loop.fs_realpath(dir)
end

-- workspace makes a project directory (with .git) holding files
-- { [relative path] = lines }.
function H.workspace(files)
  local dir = H.tmpdir()
  vim.fn.mkdir(dir .. '/.git', 'p')
  for rel, lines in pairs(files or {}) do
    local path = dir .. '/' .. rel
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    vim.fn.writefile(lines, path)
  end
  return dir
end

-- capture_notify records vim.notify calls; returns the list.
function H.capture_notify()
  local list = {}
  vim.notify = function(msg, level)
    list[#list + 1] = { msg = msg, level = level }
  end
  return list
end

function H.find(list, pattern, level)
  for _, n in ipairs(list) do
    if n.msg:find(pattern) and (level == nil or n.level == level) then
      return n
    end
  end
  return nil
end

function H.count(list, pattern)
  local n = 0
  for _, x in ipairs(list) do
    if x.msg:find(pattern) then
      n = n + 1
    end
  end
  return n
end

-- client returns the reika client of a root (or the only one).
function H.client(root)
  local client = require('reika.client')
  if root then
    local id = client.state.client_id(root)
    return id and vim.lsp.get_client_by_id(id)
  end
  return client.clients()[1]
end

-- start opens a file of the workspace and waits for its server's first
-- status.
function H.open(t, root, file, timeout)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. file))
  t.wait('reika-lsp to start for ' .. root, function()
    local c = H.client(root)
    return c ~= nil and c.initialized
  end, timeout)
  local c = H.client(root)
  t.wait('the first reika/status', function()
    return H.status(c) ~= nil
  end, timeout)
  return c
end

-- agent_ready waits until the server of client c has built its agent: the
-- server sends a placeholder status (no model) before that, and answers
-- reika.status with it.
function H.agent_ready(t, c, timeout)
  t.wait('the status of the agent', function()
    local s = H.status(c)
    return s ~= nil and type(s.model) == 'string' and s.model ~= ''
  end, timeout)
end

-- server_pid returns the pid of a client's server process: client.rpc.pid
-- on Neovim 0.7-0.9, else the one child of this Neovim named like the
-- command's program.
function H.server_pid(t, c)
  if c.rpc and type(c.rpc.pid) == 'number' then
    return c.rpc.pid
  end
  local name = vim.fn.fnamemodify(c.config.cmd[1], ':t')
  local found = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local p = vim.api.nvim_get_proc(pid)
    if p and p.name == name then
      found[#found + 1] = pid
    end
  end
  t.eq(1, #found, 'one ' .. name .. ' process')
  return found[1]
end

-- ask runs require('reika').ask with prompt and waits for its answer;
-- returns { result = ..., err = ... }.
function H.ask(t, prompt, timeout)
  local done
  require('reika').ask({
    prompt = prompt,
    on_done = function(r, e)
      done = { result = r, err = e }
    end,
  })
  t.wait('the answer to ' .. prompt, function()
    return done ~= nil
  end, timeout)
  return done
end

-- status returns the last status of a client (its record's).
function H.status(c)
  local rec = require('reika.state').find(c.id)
  return rec and rec.status or nil
end

-- transcript returns the lines of a root's transcript buffer (creating it).
function H.transcript(root)
  local view = require('reika.client').view(root)
  return vim.api.nvim_buf_get_lines(view:buffer(), 0, -1, false)
end

function H.count_lines(lines, pattern)
  local n = 0
  for _, l in ipairs(lines) do
    if l:find(pattern) then
      n = n + 1
    end
  end
  return n
end

function H.has_line(lines, pattern)
  for _, l in ipairs(lines) do
    if l:find(pattern) then
      return l
    end
  end
  return nil
end

-- select_by stubs vim.ui.select: for each prompt kind, the label to pick
-- ({ ['reika.approval'] = 'Allow', codeaction = 'Compact context' }).
-- Records every prompt in the returned list.
function H.select_by(choices)
  local seen = {}
  vim.ui.select = function(items, opts, on_choice)
    local labels = {}
    for i, item in ipairs(items) do
      labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    seen[#seen + 1] = { kind = opts.kind, prompt = opts.prompt, labels = labels }
    local want = choices[opts.kind or '']
    for i, label in ipairs(labels) do
      if label == want then
        on_choice(items[i], i)
        return
      end
    end
    on_choice(nil, nil)
  end
  return seen
end

-- code_actions lists the code actions offered at the cursor.
function H.code_actions(t, only, timeout)
  local c = H.client()
  local params = vim.lsp.util.make_range_params(0, c and c.offset_encoding or 'utf-16')
  params.context = { diagnostics = {}, only = only }
  local res = vim.lsp.buf_request_sync(0, 'textDocument/codeAction', params, timeout or 20000)
  t.truthy(res, 'textDocument/codeAction answered')
  local out = {}
  for _, r in pairs(res) do
    for _, a in ipairs(r.result or {}) do
      out[#out + 1] = a
    end
  end
  return out
end

-- watch_status records {text, level, busy, status} at every User
-- ReikaStatus (status: the whole reika/status object).
function H.watch_status()
  local history = {}
  local reika = require('reika')
  vim.api.nvim_create_autocmd('User', {
    pattern = 'ReikaStatus',
    callback = function()
      local s = reika.status() or {}
      history[#history + 1] = {
        text = reika.statusline(),
        level = reika.statusline_level(),
        busy = s.busy,
        status = vim.deepcopy(s),
      }
    end,
  })
  return history
end

-- stop_servers stops every reika-lsp the plugin started and waits for them
-- to exit (the integration specs' after_each).
function H.stop_servers(t)
  local client = require('reika.client')
  client.stop_all()
  t.wait('every server to exit', function()
    return next(client.state.records) == nil
  end)
end

-- setup_real sets the plugin up to start the real reika-lsp
-- ($REIKA_LSP_BIN) on the engine at url, with its state and config under
-- the directory state; extra is merged into the options.
function H.setup_real(state, url, extra)
  require('reika').setup(vim.tbl_deep_extend('force', {
    cmd = { os.getenv('REIKA_LSP_BIN') },
    cmd_env = { XDG_STATE_HOME = state .. '/state', XDG_CONFIG_HOME = state .. '/config' },
    settings = { baseUrl = url },
    transcript = { open_on_ask = false },
  }, extra or {}))
end

-- stub_select replaces vim.ui.select as a picker plugin would: each call is
-- recorded in the returned list ({ prompt, labels }) and answered with
-- pick(items) (nil: dismissed). restore() puts the real one back.
function H.stub_select(pick)
  local shown, real = {}, vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local labels = {}
    for i, it in ipairs(items) do
      labels[i] = opts.format_item and opts.format_item(it) or tostring(it)
    end
    shown[#shown + 1] = { prompt = opts.prompt, labels = labels }
    on_choice(pick(items))
  end
  return shown, function()
    vim.ui.select = real
  end
end

return H
