local approval = require('reika.approval')

local actions = { { title = 'Allow' }, { title = 'Allow for this session' }, { title = 'Deny' } }
local params = { type = 3, message = 'Allow bash: go test ./...?', actions = actions }

local real_select = vim.ui.select
local real_notify = vim.notify
local real_inputlist = approval.inputlist
local notes

t.before_each(function()
  notes = {}
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  approval.warned_async = false
end)
t.after_each(function()
  vim.ui.select = real_select
  vim.notify = real_notify
  approval.inputlist = real_inputlist
end)

t.describe('approval.handler', function()
  t.it('asks with vim.ui.select and returns the chosen action', function()
    local seen
    vim.ui.select = function(items, opts, on_choice)
      seen = {
        items = items,
        prompt = opts.prompt,
        kind = opts.kind,
        labels = vim.tbl_map(opts.format_item, items),
      }
      on_choice(items[2], 2)
    end
    local result = approval.handler(nil, params, { client_id = 1 })
    t.eq({ title = 'Allow for this session' }, result)
    t.eq('reika: Allow bash: go test ./...?', seen.prompt)
    t.eq('reika.approval', seen.kind)
    t.eq({ 'Allow', 'Allow for this session', 'Deny' }, seen.labels)
  end)

  t.it('answers null (deny) when the prompt is dismissed', function()
    vim.ui.select = function(_, _, on_choice)
      on_choice(nil, nil)
    end
    t.eq(vim.NIL, approval.handler(nil, params, {}))
  end)

  t.it('shows a request without actions as a message and answers null', function()
    vim.ui.select = function()
      error('must not prompt')
    end
    t.eq(vim.NIL, approval.handler(nil, { type = 2, message = 'careful' }, {}))
    t.eq({ { msg = 'reika: careful', level = vim.log.levels.WARN } }, notes)
  end)

  t.it('waits for an asynchronous vim.ui.select inside a coroutine (Neovim 0.9+)', function()
    vim.ui.select = function(items, _, on_choice)
      vim.defer_fn(function()
        on_choice(items[1], 1)
      end, 20)
    end
    local result, finished = nil, false
    -- Neovim 0.9+ runs server-request handlers like this.
    vim.schedule(coroutine.wrap(function()
      result = approval.handler(nil, params, {})
      finished = true
    end))
    t.wait('the handler to return', function()
      return finished
    end)
    t.eq({ title = 'Allow' }, result)
    t.eq({}, notes, 'no warning')
  end)

  t.it('falls back to the built-in prompt outside a coroutine (Neovim 0.7/0.8)', function()
    local late
    vim.ui.select = function(items, _, on_choice)
      late = function()
        on_choice(items[1], 1)
      end
    end
    local asked
    approval.inputlist = function(items, opts)
      asked = vim.tbl_map(opts.format_item, items)
      return items[3]
    end
    t.eq({ title = 'Deny' }, approval.handler(nil, params, {}))
    t.eq({ 'Allow', 'Allow for this session', 'Deny' }, asked)
    t.eq(1, #notes, 'one warning')
    t.matches('built%-in prompt', notes[1].msg)
    late() -- the picker answering afterwards is ignored
    -- The warning is shown once.
    t.eq({ title = 'Deny' }, approval.handler(nil, params, {}))
    t.eq(1, #notes, 'no second warning')
  end)
end)

-- The diff tab (reika.diffview) driven as Neovim 0.9+ drives the handler,
-- in a coroutine: this runs on 0.7 too, where the integration tests answer
-- with the list prompt.
t.describe('approval.diff_answer', function()
  local client = require('reika.client')
  local real_root_of = client.root_of
  local root
  local diff_msg = table.concat({
    'Reika wants to edit a.txt (1 hunk)',
    '',
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,2 +1,2 @@',
    '-one',
    '+ONE',
    ' two',
    '',
  }, '\n')

  t.before_each(function()
    root = vim.fn.tempname()
    vim.fn.mkdir(root, 'p')
    vim.fn.writefile({ 'one', 'two' }, root .. '/a.txt')
    client.root_of = function()
      return root
    end
  end)
  t.after_each(function()
    client.root_of = real_root_of
    approval.pending = {}
    vim.cmd('silent! tabonly')
    vim.fn.delete(root, 'rf')
  end)

  -- ask starts the handler for client 7 and waits for the diff tab.
  local function ask()
    local r = { finished = false }
    vim.schedule(coroutine.wrap(function()
      local p = { type = 3, message = diff_msg, actions = actions }
      r.result = approval.handler(nil, p, { client_id = 7 })
      r.finished = true
    end))
    t.wait('the diff tab', function()
      return #vim.api.nvim_list_tabpages() == 2
    end)
    return r
  end

  local function diff_buffers()
    return vim.tbl_filter(function(b)
      return vim.api.nvim_buf_get_name(b):match('^reika://diff/') ~= nil
    end, vim.api.nvim_list_bufs())
  end

  local keys = {
    { 'a', 'Allow' },
    { 's', 'Allow for this session' },
    { 'd', 'Deny' },
    { 'q', 'Deny' },
  }
  for _, k in ipairs(keys) do
    t.it('answers ' .. k[2] .. ' with ' .. k[1], function()
      local r = ask()
      vim.api.nvim_feedkeys(k[1], 'mx', false)
      t.wait('the handler to return', function()
        return r.finished
      end)
      t.eq({ title = k[2] }, r.result)
      t.wait('the diff tab to close', function()
        return #vim.api.nvim_list_tabpages() == 1 and #diff_buffers() == 0
      end)
    end)
  end

  t.it('closes the tab and its buffers when withdrawn, and says so once', function()
    local r = ask()
    t.eq(2, #diff_buffers())
    local before = vim.api.nvim_get_current_tabpage()
    approval.withdraw(7, 'the turn ended')
    t.eq(1, #vim.api.nvim_list_tabpages(), 'closed at once')
    t.eq({}, diff_buffers())
    t.truthy(vim.api.nvim_get_current_tabpage() ~= before)
    t.wait('the handler to return', function()
      return r.finished
    end)
    t.eq(vim.NIL, r.result)
    local line = 'reika: approval withdrawn (the turn ended): edit a.txt (1 hunk)'
    t.eq({ { msg = line, level = vim.log.levels.INFO } }, notes)
    approval.withdraw(7, 'again')
    t.eq(1, #notes, 'withdrawn once')
  end)

  t.it('withdraws only the given client\'s approvals', function()
    local r = ask()
    approval.withdraw(8, 'another client')
    t.eq(2, #vim.api.nvim_list_tabpages())
    vim.api.nvim_feedkeys('a', 'mx', false)
    t.wait('the handler to return', function()
      return r.finished
    end)
    t.eq({ title = 'Allow' }, r.result)
    t.eq({}, vim.tbl_keys(approval.pending[7] or {}), 'nothing left pending')
  end)
end)
