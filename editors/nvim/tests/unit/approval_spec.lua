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
