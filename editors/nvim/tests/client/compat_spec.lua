-- The branch of reika.compat that this Neovim takes, for real, with
-- reika-lsp's server over a scripted agent (scriptedlsp) as the server:
-- starting (and attaching the buffer asked for, not the current one),
-- requests, notifications and stopping. The other branches are walked with
-- stubs in unit/compat_spec.lua.
local H = require('helpers')
local compat = require('reika.compat')

local server = H.need(t, 'REIKA_TEST_SCRIPTED')
if not server then
  return
end

local version = vim.version()
local this = string.format('%d.%d.%d', version.major, version.minor, version.patch)

local function config(root)
  return {
    name = 'reika-compat-test',
    cmd = { server },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = { reika = vim.empty_dict() },
  }
end

local function reuse(client, conf)
  return client.name == conf.name and client.config.root_dir == conf.root_dir
end

local function ready(c)
  t.wait('the client to initialize', function()
    return c.initialized
  end)
end

local function stop(c)
  compat.stop(c)
  t.wait('the server to exit', function()
    return vim.lsp.get_client_by_id(c.id) == nil
  end)
end

t.it('starts a client on Neovim ' .. this .. ' and attaches the buffer asked for', function()
  local root = H.workspace({ ['a.txt'] = { 'a' }, ['b.txt'] = { 'b' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/a.txt'))
  local current = vim.api.nvim_get_current_buf()
  local other = vim.fn.bufadd(root .. '/b.txt')
  vim.fn.bufload(other)
  local id = compat.start(config(root), other, reuse)
  t.truthy(id, 'a client id')
  local c = vim.lsp.get_client_by_id(id)
  ready(c)
  t.truthy(c.attached_buffers[other], 'the buffer asked for is attached')
  t.falsy(c.attached_buffers[current], 'the current buffer is not')
  t.eq(current, vim.api.nvim_get_current_buf(), 'the current buffer did not change')
  t.truthy(
    vim.tbl_contains(
      vim.tbl_map(function(x)
        return x.id
      end, compat.get_clients()),
      id
    ),
    'listed by get_clients'
  )
  stop(c)
end)

t.it('starts a client with no buffer on Neovim ' .. this, function()
  local root = H.workspace({})
  local id = compat.start(config(root), nil, reuse)
  t.truthy(id, 'a client id')
  local c = vim.lsp.get_client_by_id(id)
  ready(c)
  t.eq({}, vim.tbl_keys(c.attached_buffers or {}), 'no buffer attached')
  stop(c)
end)

-- model_now asks the server for its status (reika.status) and returns
-- the model it names.
local function model_now(c)
  local r = compat.request_sync(c, 'workspace/executeCommand', {
    command = 'reika.status',
    arguments = {},
  }, 5000)
  return r and r.result and r.result.model
end

t.it('sends requests and notifications, and stops, on Neovim ' .. this, function()
  local root = H.workspace({})
  local c = vim.lsp.get_client_by_id(compat.start(config(root), nil, reuse))
  ready(c)
  t.falsy(compat.is_stopped(c))
  local got
  local ok, req = compat.request(c, 'workspace/executeCommand', {
    command = 'reika.status',
    arguments = {},
  }, function(err, result)
    got = { err = err, result = result }
  end)
  t.truthy(ok, 'request sent')
  t.eq('number', type(req), 'a request id')
  t.wait('the answer', function()
    return got ~= nil
  end)
  t.eq(nil, got.err)
  t.matches('^ctx ', got.result.text, 'a status')
  -- The server answers with a placeholder until its agent is built.
  t.wait('the status of the agent', function()
    return model_now(c) == 'scripted-model'
  end)
  -- A notification the server acts on: new settings, which it takes from
  -- the notification (it would pull them with workspace/configuration
  -- were there no "reika" object in it).
  c.config.settings = { reika = { model = 'via-notify' } }
  c.settings = c.config.settings
  compat.notify(c, 'workspace/didChangeConfiguration', { settings = c.config.settings })
  t.wait('the new settings to reach the server', function()
    return model_now(c) == 'via-notify'
  end)
  compat.stop(c)
  t.wait('the server to exit', function()
    return vim.lsp.get_client_by_id(c.id) == nil
  end)
  t.truthy(compat.is_stopped(c), 'stopped')
end)
