-- The plugin's side of docs/protocol.md, against reika-lsp's server over a
-- scripted agent (lsp/lsptest/cmd/scriptedlsp: its script says what each
-- prompt does): settings, approvals, cancel, selections, save, new
-- session, code action filters, messages, progress, a crashing server and
-- :checkhealth.
local H = require('helpers')

local server = H.need(t, 'REIKA_TEST_SCRIPTED')
if not server then
  return
end
local reika = require('reika')
local client = require('reika.client')
local levels = vim.log.levels

local notes
local real_select = vim.ui.select

t.before_each(function()
  notes = H.capture_notify()
  vim.ui.select = real_select
end)

-- fresh sets the plugin up and opens a new workspace; returns root, client
-- once the server has built its agent.
local function fresh(settings, extra)
  local o = vim.tbl_extend('force', { cmd = { server }, settings = settings or {} }, extra or {})
  reika.setup(o)
  local root = H.workspace({ ['main.txt'] = { 'alpha beta', 'gamma délta', 'end' } })
  local c = H.open(t, root, 'main.txt')
  H.agent_ready(t, c)
  return root, c
end

-- ask runs require('reika').ask and waits for its result.
local function ask(prompt, o)
  local done, result, err = false, nil, nil
  reika.ask(vim.tbl_extend('force', {
    prompt = prompt,
    on_done = function(r, e)
      done, result, err = true, r, e
    end,
  }, o or {}))
  t.wait('reika.ask to answer', function()
    return done
  end)
  return result, err
end

t.describe('settings', function()
  t.it('starts the server with no settings, which it takes without complaint', function()
    local _, c = fresh({})
    t.matches('editor settings: none$', H.status(c).tooltip)
    t.eq(nil, H.find(notes, 'settings', levels.ERROR), vim.inspect(notes))
  end)

  t.it('sends the settings as initializationOptions.reika', function()
    local _, c = fresh({ model = 'qwen3-coder', contextWindow = 24000 })
    t.matches('editor settings: contextWindow, model$', H.status(c).tooltip)
    t.eq('qwen3-coder', H.status(c).model)
    t.eq(24000, H.status(c).window)
  end)

  t.it('sends new settings to running servers when setup runs again', function()
    local _, c = fresh({ model = 'first' })
    reika.setup({ cmd = { server }, settings = { model = 'second' } })
    t.wait('the server to pull the new settings', function()
      return H.status(c).model == 'second'
    end)
  end)

  t.it('sends cacheReuse, which the server takes; it refuses what setup refuses', function()
    local _, c = fresh({ cacheReuse = 64 })
    t.matches('editor settings: cacheReuse$', H.status(c).tooltip)
    reika.setup({ cmd = { server }, settings = { cacheReuse = 'off', model = 'second' } })
    t.wait('the server to pull the new settings', function()
      return H.status(c).model == 'second'
    end)
    t.matches('editor settings: cacheReuse, model$', H.status(c).tooltip)
    t.eq(nil, H.find(notes, 'settings', levels.ERROR), vim.inspect(notes))
    -- A value setup() refuses, sent past it: the server's own error.
    local _, err = require('reika.config').resolve({ settings = { cacheReuse = 'never' } })
    t.matches('settings%.cacheReuse', err)
    require('reika.compat').notify(c, 'workspace/didChangeConfiguration', {
      settings = { reika = { cacheReuse = 'never' } },
    })
    t.wait("the server's settings error", function()
      return H.find(notes, 'cacheReuse: want auto, off or a chunk size', levels.ERROR)
    end)
  end)

  t.it('attaches the open file (didOpen, didChange): the server reads the buffer', function()
    local root, c = fresh()
    local got
    reika.show_status({
      on_done = function(s)
        got = s
      end,
    })
    t.wait('reika.status', function()
      return got ~= nil
    end)
    t.eq(got, H.status(c), 'the pulled status is stored too')
    vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'unsaved' })
    ask('[read]main.txt')
    t.truthy(
      H.has_line(
        H.transcript(root),
        '^%[info%] read main%.txt: "alpha beta\\ngamma délta\\nend\\nunsaved\\n"$'
      ),
      vim.inspect(H.transcript(root))
    )
  end)
end)

t.describe('ask', function()
  t.it('shows approvals with vim.ui.select and sends the answer', function()
    local root = fresh()
    local prompts = H.select_by({ ['reika.approval'] = 'Allow for this session' })
    local result = ask('run the tests [approve]')
    t.eq('done', result.status)
    t.eq(1, #prompts)
    t.eq('reika: Reika wants to run `go test ./...`\n\ngo test ./...', prompts[1].prompt)
    t.eq({ 'Allow', 'Allow for this session', 'Deny' }, prompts[1].labels)
    t.truthy(H.has_line(H.transcript(root), '^%[info%] approval: Allow for this session$'))
  end)

  t.it('takes the answer of a picker that answers later as this Neovim can', function()
    local root = fresh()
    vim.ui.select = function(items, _, on_choice)
      vim.defer_fn(function()
        on_choice(items[2], 2)
      end, 10)
    end
    local approval = require('reika.approval')
    local real_inputlist = approval.inputlist
    local fallback
    approval.inputlist = function(items)
      fallback = true
      return items[1]
    end
    local result = ask('[approve]')
    approval.inputlist = real_inputlist
    t.eq('done', result.status)
    if vim.fn.has('nvim-0.9') == 1 then
      -- The request handler runs in a coroutine and waits for the picker.
      t.truthy(H.has_line(H.transcript(root), '^%[info%] approval: Allow for this session$'))
      t.falsy(fallback, 'no built-in prompt')
    else
      -- The answer is due at once: the built-in prompt asks instead.
      t.truthy(fallback, 'the built-in prompt')
      t.truthy(H.has_line(H.transcript(root), '^%[info%] approval: Allow$'))
      t.truthy(H.find(notes, 'built%-in prompt', levels.WARN), 'said once')
    end
  end)

  t.it('sends no answer (deny) when the approval is dismissed', function()
    local root = fresh()
    H.select_by({})
    ask('[approve]')
    t.truthy(H.has_line(H.transcript(root), '^%[info%] approval: Deny$'))
  end)

  t.it('is cancelled by :ReikaCancel and shows progress meanwhile', function()
    local root, c = fresh()
    local done, result = false, nil
    reika.ask({
      prompt = 'wait for me [wait]',
      on_done = function(r)
        done, result = true, r
      end,
    })
    t.wait('the turn to start', function()
      return H.status(c).busy == true
    end)
    t.wait('the progress message', function()
      return reika.progress() ~= ''
    end)
    t.eq('Reika: wait for me [wait]', reika.progress())
    -- It came the way this Neovim delivers $/progress: LspProgress into the
    -- plugin's entries on 0.10+, the client's own messages before.
    if vim.fn.has('nvim-0.10') == 1 then
      t.truthy(next(require('reika.state').get(c.id).progress), 'LspProgress entries')
    else
      t.truthy(next(c.messages.progress), 'client.messages.progress')
    end
    -- A second ask while one runs is refused with the server's message,
    -- which names the user command rather than the protocol's.
    local second = ask('another')
    t.eq('error', second.status)
    local refusal = H.find(notes, 'a turn is already running', levels.ERROR)
    t.truthy(refusal, 'refusal shown')
    t.matches('cancel it %(:ReikaCancel%)$', refusal.msg)
    vim.cmd('ReikaCancel')
    t.wait('the turn to end', function()
      return done
    end)
    t.eq('cancelled', result.status)
    t.truthy(H.find(notes, 'reika: turn cancelled', levels.INFO))
    t.truthy(H.has_line(H.transcript(root), '^%[info%] Turn cancelled$'))
    t.wait('the progress to end', function()
      return reika.progress() == ''
    end)
  end)

  t.it('waits for the server to be ready when asked right after it starts', function()
    reika.setup({ cmd = { server } })
    local root = H.workspace({ ['main.txt'] = { 'x' } })
    vim.cmd('edit ' .. root .. '/main.txt')
    local c = H.client(root)
    t.truthy(c, 'started')
    t.falsy(c.initialized, 'not initialized yet')
    local result = ask('early question')
    t.eq('done', result.status)
  end)

  t.it('says so when :ReikaCancel finds no turn', function()
    fresh()
    vim.cmd('ReikaCancel')
    t.wait('the answer', function()
      return H.find(notes, 'no turn is running') ~= nil
    end)
  end)

  t.it('attaches a visual selection as uri and range (UTF-16)', function()
    local root = fresh()
    -- Select from "beta" on line 1 to "dé" on line 2, charwise.
    vim.api.nvim_win_set_cursor(0, { 1, 6 })
    vim.cmd('normal! v')
    vim.api.nvim_win_set_cursor(0, { 2, 7 })
    vim.cmd('normal! \27')
    vim.cmd("'<,'>ReikaAsk explain this")
    t.wait('the selection in the transcript', function()
      return H.has_line(H.transcript(root), '^> %[selection main.txt') ~= nil
    end)
    -- "gamma dé": é is one UTF-16 unit, so the end is character 8, and
    -- the server cuts the text there.
    t.truthy(
      H.has_line(H.transcript(root), '^> %[selection main%.txt lines 1%-2: "beta\\ngamma dé"%]$'),
      vim.inspect(H.transcript(root))
    )
    t.truthy(H.has_line(H.transcript(root), '^> explain this$'))
  end)

  t.it('says in the prompt which selection is attached', function()
    local root = fresh()
    local cwd = vim.fn.getcwd()
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
    local real_input = vim.ui.input
    local prompts = {}
    vim.ui.input = function(opts, on_confirm)
      prompts[#prompts + 1] = opts.prompt
      -- Answer the first; dismiss the second, so one turn runs.
      on_confirm(#prompts == 1 and 'what is this?' or nil)
    end
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd('normal! Vj')
    vim.cmd('normal! \27')
    vim.cmd("'<,'>ReikaAsk")
    vim.cmd('2ReikaAsk')
    vim.ui.input = real_input
    vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
    t.eq({ 'Ask reika about main.txt lines 1-2: ', 'Ask reika about main.txt line 2: ' }, prompts)
    t.wait('the selection in the transcript', function()
      return H.has_line(
        H.transcript(root),
        '^> %[selection main%.txt lines 1%-2: "alpha beta\\ngamma délta"%]$'
      ) ~= nil
    end)
  end)

  t.it('asks for the prompt with vim.ui.input when none is given', function()
    local root = fresh()
    local real_input = vim.ui.input
    vim.ui.input = function(opts, on_confirm)
      t.eq('Ask reika: ', opts.prompt)
      on_confirm('typed prompt')
    end
    vim.cmd('ReikaAsk')
    vim.ui.input = real_input
    t.wait('the prompt in the transcript', function()
      return H.has_line(H.transcript(root), '^> typed prompt$') ~= nil
    end)
  end)

  t.it('opens the transcript without moving the cursor', function()
    vim.cmd('silent! only')
    local root = fresh()
    local win = vim.api.nvim_get_current_win()
    ask('hello')
    t.eq(win, vim.api.nvim_get_current_win())
    t.truthy(client.view(root):visible())
  end)
end)

t.describe('commands', function()
  t.it(':ReikaSave writes the conversation where asked', function()
    fresh()
    ask('hello')
    local path = H.tmpdir() .. '/conversation.md'
    vim.cmd('ReikaSave ' .. vim.fn.fnameescape(path))
    t.wait('the save message', function()
      return H.find(notes, 'saved the conversation to') ~= nil
    end)
    t.eq('reika: saved the conversation to ' .. path, H.find(notes, 'saved the').msg)
    t.eq('# Session s1', vim.fn.readfile(path)[1])
  end)

  t.it(':ReikaNew starts a new session, marked in the transcript', function()
    local root = fresh()
    ask('first')
    vim.cmd('ReikaNew')
    t.wait('the new session', function()
      return H.find(notes, 'new session s2') ~= nil
    end)
    ask('second')
    t.truthy(H.has_line(H.transcript(root), '^=== session s2 ===$'))
  end)

  t.it(':ReikaCompact with nothing to fold says so once', function()
    fresh()
    vim.cmd('ReikaCompact')
    t.wait('the message', function()
      return H.find(notes, 'Nothing to fold') ~= nil
    end)
    vim.wait(200) -- a late duplicate would arrive by now (not a deadline)
    t.eq(1, H.count(notes, 'Nothing to fold'))
  end)

  t.it(':ReikaStatus shows the chip and the breakdown', function()
    fresh()
    vim.cmd('ReikaStatus')
    t.wait('the status message', function()
      return H.find(notes, 'window 16000') ~= nil
    end)
    t.matches('^reika: ctx 1%.2k/16k', H.find(notes, 'window 16000').msg)
  end)

  t.it(':ReikaTranscript opens and focuses the transcript', function()
    vim.cmd('silent! only')
    local root = fresh()
    vim.cmd('ReikaTranscript')
    t.eq(client.view(root).bufnr, vim.api.nvim_get_current_buf())
  end)
end)

t.describe('code action', function()
  t.it("works through Neovim's own workspace/executeCommand too", function()
    -- Without the plugin's client-side command (as with a hand-made
    -- vim.lsp config), Neovim 0.7.2 sends workspace/executeCommand itself.
    local root, c = fresh()
    ask('hello')
    c.commands['reika.compact'] = nil
    H.select_by({ codeaction = 'Compact context' })
    vim.lsp.buf.code_action()
    t.wait('the fold line', function()
      return H.has_line(H.transcript(root), '^Folded 1 round') ~= nil
    end)
  end)

  t.it('is not offered before a turn, and respects context.only', function()
    fresh()
    t.eq({}, H.code_actions(t))
    ask('hello')
    t.eq(1, #H.code_actions(t))
    t.eq(1, #H.code_actions(t, { 'source' }))
    t.eq(0, #H.code_actions(t, { 'quickfix' }))
  end)
end)

t.describe('server messages', function()
  t.it('shows window/showMessage once, with its level', function()
    fresh()
    ask('fill the window')
    t.truthy(H.find(notes, '^reika: Context at 88%% of the shed point$', levels.WARN))
  end)

  t.it('shows a crashed server in the statusline', function()
    local _, c = fresh()
    reika.ask({ prompt = '[crash]' })
    t.wait('the server to exit', function()
      return vim.lsp.get_client_by_id(c.id) == nil
    end)
    t.wait('the error chip', function()
      return reika.statusline() == 'reika-lsp stopped'
    end)
    t.eq('error', reika.statusline_level())
    t.truthy(
      H.find(notes, '^reika: server exited with code 3;', levels.ERROR),
      vim.inspect(notes)
    )
    t.falsy(H.find(notes, 'ask failed'), 'one message, not one more for the ask')
  end)

  t.it('does not restart a failed server on every buffer switch, but a command does', function()
    local _, c = fresh()
    local root = client.root_of(c.id)
    reika.ask({ prompt = '[crash]' })
    t.wait('the server to exit', function()
      return vim.lsp.get_client_by_id(c.id) == nil
    end)
    t.wait('the exit to be handled', function()
      return client.state.client_id(root) == nil
    end)
    vim.cmd('edit ' .. root .. '/other.txt')
    vim.cmd('edit ' .. root .. '/main.txt')
    t.eq(nil, client.state.client_id(root), 'no autostart after a crash')
    vim.cmd('ReikaStatus')
    t.wait('the command to start it again', function()
      local id = client.state.client_id(root)
      local again = id and vim.lsp.get_client_by_id(id)
      return again ~= nil and again.initialized
    end)
  end)

  t.it('reports a missing binary clearly', function()
    reika.setup({ cmd = { 'reika-lsp-not-installed-5e2f' } })
    local root = H.workspace({ ['a.txt'] = { 'a' } })
    vim.cmd('edit ' .. root .. '/a.txt')
    t.truthy(H.find(notes, 'is not an executable', levels.ERROR), vim.inspect(notes))
  end)
end)

t.describe(':checkhealth reika', function()
  t.it('reports the binary, its version, the engine and the window source', function()
    fresh()
    vim.cmd('checkhealth reika')
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    t.matches('binary: ' .. vim.pesc(server), text)
    t.matches('version: scriptedlsp', text)
    t.matches('engine: reachable, model scripted%-model', text)
    t.matches('context window: 16000 %(from setting%)', text)
    -- What this Neovim has of the plugin, and what it does instead.
    if vim.fn.has('nvim-0.10') == 1 then
      t.matches('transcript: Markdown highlighted with the treesitter markdown parser', text)
      t.matches('approvals: asynchronous pickers', text)
    elseif vim.fn.has('nvim-0.8') == 0 then
      t.matches('transcript: Markdown highlighted with the markdown syntax', text)
      t.matches('approvals: Neovim before 0.9 needs the answer at once', text)
      t.matches('diff tab of an edit is answered', text)
    end
    t.falsy(text:find('ERROR'), text)
    t.falsy(text:find('WARNING'), text)
  end)

  t.it(
    'checks the server of the buffer it ran from, and warns past 80% of the shed point',
    function()
      local root, c = fresh()
      ask('fill the window')
      vim.cmd('checkhealth reika')
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
      t.matches('server running for ' .. vim.pesc(root) .. ' %(client ' .. c.id .. '%)', text)
      t.matches('WARNING:? status: ctx [%d.]+k/16k %(88%% of 13k%)', text)
      t.matches(':ReikaCompact', text)
    end
  )
end)
