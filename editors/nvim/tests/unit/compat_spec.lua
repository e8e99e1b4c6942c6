-- The version branches of reika.compat that this Neovim does not take,
-- walked with stubs (the suite runs on 0.7.2 and 0.10, so the 0.11 branch
-- only runs this way). The branch this Neovim takes is tested for real:
-- here where no server is needed, in client/compat_spec.lua where one is.
local compat = require('reika.compat')

local real_has = compat.has

-- other runs a test only when this Neovim does not take the branch for
-- versions from..before (before nil: no upper bound).
local function other(name, from, before, fn)
  local takes = real_has(from) and (before == nil or not real_has(before))
  if not takes then
    t.it(name, fn)
  end
end
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

  other('0.7 uses start_client and buf_attach_client', '0.7', '0.8', function()
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

  other(
    '0.8-0.10 use vim.lsp.start in the buffer, start_client without one',
    '0.8',
    '0.11',
    function()
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
    end
  )

  other('0.11 registers with vim.lsp.config and starts with vim.lsp.start', '0.11', nil, function()
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

  other('uses dot calls before 0.11', '0.7', '0.11', function()
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

  other('uses method calls on 0.11', '0.11', nil, function()
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
  local lsp_progress = { event = 'LspProgress' }
  local user_update = { event = 'User', pattern = 'LspProgressUpdate' }
  t.it('is the event this Neovim fires on $/progress', function()
    local want = real_has('0.10') and lsp_progress or user_update
    t.eq(want, compat.progress_event())
    -- Neovim knows it: the autocmd can be made, and fires.
    local fired = false
    local id = vim.api.nvim_create_autocmd(want.event, {
      pattern = want.pattern,
      callback = function()
        fired = true
      end,
    })
    vim.api.nvim_exec_autocmds(want.event, { pattern = want.pattern, modeline = false })
    vim.api.nvim_del_autocmd(id)
    t.truthy(fired)
  end)
  other('is LspProgress on 0.10+', '0.10', nil, function()
    version('0.10')
    t.eq(lsp_progress, compat.progress_event())
  end)
  other('is User LspProgressUpdate before', '0.7', '0.10', function()
    version('0.9')
    t.eq(user_update, compat.progress_event())
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
  t.it('reads reverse and bold for the GUI and the terminal apart', function()
    vim.api.nvim_set_hl(0, 'ReikaTestRev', { reverse = true, cterm = { bold = true } })
    t.eq({ reverse = true, cterm_bold = true }, compat.get_hl('ReikaTestRev'))
    vim.api.nvim_set_hl(0, 'ReikaTestRev', { bold = true, cterm = { reverse = true } })
    t.eq({ bold = true, cterm_reverse = true }, compat.get_hl('ReikaTestRev'))
    t.eq({}, compat.get_hl('ReikaTestNoSuchGroup'))
  end)
end)

t.describe('compat.get_clients', function()
  t.it('lists clients with the API this Neovim has', function()
    t.eq('table', type(compat.get_clients()))
  end)
end)
