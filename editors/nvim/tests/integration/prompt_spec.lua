-- The prompt buffer against the real reika-lsp ($REIKA_LSP_BIN) and the
-- fake engine: a multi-line prompt sent with its keys, recalled, the
-- selection attached, and slash commands completed from reika.commands.
local H = require('helpers')

if not H.need(t, 'REIKA_LSP_BIN', 'REIKA_TEST_FAKEENGINE') then
  return
end

local reika = require('reika')
local client = require('reika.client')
local prompt = require('reika.prompt')

local url

t.before_each(function()
  H.capture_notify()
  url = url or H.fake_engine(t, 'death-script.json')
end)

t.after_each(function()
  client.stop_all()
  t.wait('every server to exit', function()
    return next(client.state.records) == nil
  end)
  vim.cmd('silent! only')
  vim.cmd('silent! %bwipeout!')
end)

local function start()
  local state = H.tmpdir()
  local root = H.workspace({ ['main.txt'] = { 'alpha', 'beta', 'gamma' } })
  reika.setup({
    cmd = { os.getenv('REIKA_LSP_BIN') },
    cmd_env = { XDG_STATE_HOME = state .. '/state', XDG_CONFIG_HOME = state .. '/config' },
    settings = { baseUrl = url },
    transcript = { open_on_ask = false },
  })
  return root, H.open(t, root, 'main.txt', 60000)
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

local function turns(root)
  return H.count_lines(H.transcript(root), '^%-%-%- turn %d+ %-%-%-$')
end

t.it('sends a multi-line prompt with <CR> in normal mode and recalls it', function()
  local root = start()
  vim.cmd('ReikaPrompt')
  vim.cmd('stopinsert')
  local b = vim.api.nvim_get_current_buf()
  t.eq('reika://prompt', vim.api.nvim_buf_get_name(b))
  t.eq(2, #vim.api.nvim_tabpage_list_wins(0), 'a split')
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { 'say hello', 'in two lines' })
  feed('<CR>')
  t.eq({ '' }, vim.api.nvim_buf_get_lines(b, 0, -1, false), 'the buffer empties')
  t.wait('the prompt in the transcript', function()
    return H.has_line(H.transcript(root), '^> in two lines$')
  end, 60000)
  t.truthy(H.has_line(H.transcript(root), '^> say hello$'), vim.inspect(H.transcript(root)))
  t.wait('the turn to end', function()
    return not H.status(H.client(root)).busy
  end, 60000)
  feed('<C-p>')
  t.eq({ 'say hello', 'in two lines' }, vim.api.nvim_buf_get_lines(b, 0, -1, false), 'recalled')
  feed('<C-n>')
  t.eq({ '' }, vim.api.nvim_buf_get_lines(b, 0, -1, false), 'past the newest')
  -- <C-s> sends from Insert mode too.
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { 'say hello once more' })
  feed('i<C-s>')
  t.wait('the second prompt', function()
    return H.has_line(H.transcript(root), '^> say hello once more$')
  end, 60000)
  t.eq(2, turns(root))
end)

t.it('attaches the selection it was opened from', function()
  local root = start()
  vim.cmd('2,3ReikaPrompt')
  vim.cmd('stopinsert')
  t.matches('about .*main%.txt lines 2%-3', vim.wo.statusline)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'what is this' })
  local done
  prompt.send({
    on_done = function(r)
      done = r
    end,
  })
  t.wait('the answer', function()
    return done ~= nil
  end, 60000)
  local lines = H.transcript(root)
  t.truthy(H.has_line(lines, '^> what is this$'), vim.inspect(lines))
  t.truthy(H.has_line(lines, 'main%.txt'), 'the selection in the prompt: ' .. vim.inspect(lines))
  t.truthy(H.has_line(lines, 'beta'), 'its text: ' .. vim.inspect(lines))
end)

t.it('completes slash commands from the server', function()
  start()
  vim.cmd('ReikaPrompt')
  vim.cmd('stopinsert')
  t.wait('the commands', function()
    return prompt.commands ~= nil
  end, 30000)
  local names = vim.tbl_map(function(c)
    return c.name
  end, prompt.commands)
  t.eq({ 'compact', 'new', 'save', 'mode', 'skills', 'help' }, vim.list_slice(names, 1, 6))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/sa' })
  vim.api.nvim_win_set_cursor(0, { 1, 3 })
  t.eq(0, prompt.omnifunc(1, ''))
  local items = prompt.omnifunc(0, '/sa')
  t.eq(1, #items, vim.inspect(items))
  t.eq('/save', items[1].word)
  t.truthy(items[1].info and items[1].info ~= '', 'a description')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'not /sa' })
  vim.api.nvim_win_set_cursor(0, { 1, 7 })
  t.eq(-3, prompt.omnifunc(1, ''), 'only at the start of the prompt')
end)
