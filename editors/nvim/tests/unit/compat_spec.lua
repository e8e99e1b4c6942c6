-- The version branches of reika.compat, walked with stubs: this Neovim is
-- 0.7.2, so the 0.8+ and 0.11+ branches can only be checked this way.
local compat = require('reika.compat')

local real_has = compat.has
local saved = {}
local calls

local function stub(tbl, key, fn)
  saved[#saved + 1] = { tbl, key, tbl[key] }
  tbl[key] = fn
end

local function version(v)
  compat.has = function(want)
    local function parts(s)
      local a, b = s:match('(%d+)%.(%d+)')
      return tonumber(a), tonumber(b)
    end
    local ma, mi = parts(v)
    local wa, wi = parts(want)
    return ma > wa or (ma == wa and mi >= wi)
  end
end

t.before_each(function()
  calls = {}
end)
t.after_each(function()
  compat.has = real_has
  for i = #saved, 1, -1 do
    local s = saved[i]
    s[1][s[2]] = s[3]
  end
  saved = {}
end)

local function record(name, ret)
  return function(...)
    calls[#calls + 1] = { name, ... }
    return ret
  end
end

t.describe('compat.has', function()
  t.it('knows this Neovim', function()
    t.truthy(real_has('0.7'))
    t.eq(vim.fn.has('nvim-0.8') == 1, real_has('0.8'))
  end)
end)

t.describe('compat.start', function()
  local config = { name = 'reika', cmd = { 'reika-lsp' }, root_dir = '/w' }
  local reuse = function() end

  t.it('0.7 uses start_client and buf_attach_client', function()
    version('0.7')
    stub(vim.lsp, 'start_client', record('start_client', 7))
    stub(vim.lsp, 'buf_attach_client', record('buf_attach_client', true))
    stub(vim.lsp, 'start', record('start'))
    t.eq(7, compat.start(config, 3, reuse))
    t.eq({ { 'start_client', config }, { 'buf_attach_client', 3, 7 } }, calls)
    calls = {}
    t.eq(7, compat.start(config, nil, reuse))
    t.eq({ { 'start_client', config } }, calls)
  end)

  t.it('0.8-0.10 use vim.lsp.start in the buffer, start_client without one', function()
    version('0.10')
    stub(vim.lsp, 'start_client', record('start_client', 9))
    local in_buf
    stub(vim.lsp, 'start', function(cfg, opts)
      in_buf = vim.api.nvim_get_current_buf()
      calls[#calls + 1] = { 'start', cfg, opts }
      return 8
    end)
    local b = vim.api.nvim_create_buf(true, false)
    t.eq(8, compat.start(config, b, reuse))
    t.eq({ { 'start', config, { bufnr = b, reuse_client = reuse } } }, calls)
    t.eq(b, in_buf, '0.8 attaches the current buffer: run in the target buffer')
    calls = {}
    t.eq(9, compat.start(config, nil, reuse))
    t.eq({ { 'start_client', config } }, calls)
  end)

  t.it('0.11 registers with vim.lsp.config and starts with vim.lsp.start', function()
    version('0.11')
    local registered = {}
    local lsp_config = setmetatable({}, {
      __call = function(_, name, cfg)
        calls[#calls + 1] = { 'config', name }
        registered[name] = vim.tbl_extend('force', registered[name] or {}, cfg)
      end,
      __index = function(_, name)
        return registered[name]
      end,
    })
    stub(vim.lsp, 'config', lsp_config)
    stub(vim.lsp, 'start', record('start', 11))
    stub(vim.lsp, 'start_client', function()
      error('start_client is deprecated on 0.11')
    end)
    t.eq(11, compat.start(config, 4, reuse))
    t.eq({ 'config', 'reika' }, calls[1])
    t.eq('start', calls[2][1])
    t.eq(config.cmd, calls[2][2].cmd)
    t.eq({ bufnr = 4, attach = true, reuse_client = reuse }, calls[2][3])
    calls = {}
    compat.start(config, nil, reuse)
    t.eq(
      { bufnr = nil, attach = false, reuse_client = reuse },
      calls[2][3],
      'no buffer: attach = false'
    )
  end)
end)

t.describe('compat client calls', function()
  -- A client that tells dot calls (0.7-0.10) from method calls (0.11+).
  local function fake_client()
    local c = { calls = {} }
    for _, m in ipairs({ 'request', 'request_sync', 'notify', 'stop', 'is_stopped' }) do
      c[m] = function(first, ...)
        c.calls[#c.calls + 1] = {
          m,
          first == c and 'method' or 'dot',
          first == c and select(1, ...) or first,
        }
        return true, 5
      end
    end
    return c
  end

  t.it('uses dot calls before 0.11', function()
    version('0.10')
    local c = fake_client()
    compat.request(c, 'workspace/executeCommand', {}, function() end, 0)
    compat.request_sync(c, 'x', {}, 10)
    compat.notify(c, 'y', {})
    compat.stop(c)
    compat.is_stopped(c)
    t.eq({
      { 'request', 'dot', 'workspace/executeCommand' },
      { 'request_sync', 'dot', 'x' },
      { 'notify', 'dot', 'y' },
      { 'stop', 'dot', nil },
      { 'is_stopped', 'dot', nil },
    }, c.calls)
  end)

  t.it('uses method calls on 0.11', function()
    version('0.11')
    local c = fake_client()
    compat.request(c, 'workspace/executeCommand', {}, function() end, 0)
    compat.notify(c, 'y', {})
    compat.stop(c, true)
    t.eq({
      { 'request', 'method', 'workspace/executeCommand' },
      { 'notify', 'method', 'y' },
      { 'stop', 'method', true },
    }, c.calls)
  end)
end)

t.describe('compat.progress_event', function()
  t.it('is LspProgress on 0.10+', function()
    version('0.10')
    t.eq({ event = 'LspProgress' }, compat.progress_event())
  end)
  t.it('is User LspProgressUpdate before', function()
    version('0.9')
    t.eq({ event = 'User', pattern = 'LspProgressUpdate' }, compat.progress_event())
  end)
end)

t.describe('compat.health', function()
  t.it('gives the five reporters on this Neovim', function()
    local h = compat.health()
    for _, k in ipairs({ 'start', 'ok', 'info', 'warn', 'error' }) do
      t.eq('function', type(h[k]), k)
    end
  end)
end)

t.describe('compat.get_hl', function()
  t.it('reads colours through links', function()
    vim.api.nvim_set_hl(
      0,
      'ReikaTestBase',
      { fg = 0x112233, bg = 0x445566, ctermfg = 1, ctermbg = 2 }
    )
    vim.api.nvim_set_hl(0, 'ReikaTestLink', { link = 'ReikaTestBase' })
    t.eq({ fg = 0x112233, bg = 0x445566, ctermfg = 1, ctermbg = 2 }, compat.get_hl('ReikaTestLink'))
  end)
end)

t.describe('compat.get_clients', function()
  t.it('lists clients with the API this Neovim has', function()
    t.eq('table', type(compat.get_clients()))
  end)
end)
