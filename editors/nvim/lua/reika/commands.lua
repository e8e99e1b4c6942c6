-- Every :Reika* command, declared once: its name, arguments, what it does
-- and its description. plugin/reika.lua defines them from this table (it
-- loads nothing else), and the tests check :help reika and the README
-- against it. Handlers load the plugin on first use.
local M = {}

local function actions()
  return require('reika.actions')
end

-- list: { name, nargs, range?, complete?, desc, run(args) } in the order
-- the help lists them.
M.list = {
  {
    name = 'ReikaAsk',
    nargs = '*',
    range = true,
    desc = 'ask the agent (attaches a selection)',
    run = function(a)
      local o = { prompt = a.args }
      if a.range and a.range > 0 then
        o.selection = require('reika.util').visual_selection(0, a.line1, a.line2)
      end
      actions().ask(o)
    end,
  },
  {
    name = 'ReikaPrompt',
    nargs = 0,
    range = true,
    desc = 'write a prompt in a buffer (attaches a selection)',
    run = function(a)
      local o = {}
      if a.range and a.range > 0 then
        o.selection = require('reika.util').visual_selection(0, a.line1, a.line2)
      end
      require('reika.prompt').open(o)
    end,
  },
  {
    name = 'ReikaCompact',
    nargs = 0,
    desc = 'compact the context now',
    run = function()
      actions().compact()
    end,
  },
  {
    name = 'ReikaCancel',
    nargs = 0,
    desc = 'cancel the running turn',
    run = function()
      actions().cancel()
    end,
  },
  {
    name = 'ReikaSave',
    nargs = '?',
    complete = 'file',
    desc = 'save the conversation as Markdown',
    run = function(a)
      actions().save({ path = a.args })
    end,
  },
  {
    name = 'ReikaNew',
    nargs = 0,
    desc = 'start a new session',
    run = function()
      actions().new_session()
    end,
  },
  {
    name = 'ReikaTranscript',
    nargs = 0,
    desc = 'show the transcript',
    run = function()
      actions().transcript()
    end,
  },
  {
    name = 'ReikaStatus',
    nargs = 0,
    desc = 'show the context budget',
    run = function()
      actions().show_status()
    end,
  },
  {
    name = 'ReikaMode',
    nargs = 0,
    desc = 'choose the session mode (code, plan, ask, custom)',
    run = function()
      require('reika.pickers').mode()
    end,
  },
  {
    name = 'ReikaSessions',
    nargs = 0,
    desc = 'open, resume or delete a session of this workspace',
    run = function()
      require('reika.pickers').sessions()
    end,
  },
}

-- by_name returns the declaration of a command.
function M.by_name(name)
  for _, c in ipairs(M.list) do
    if c.name == name then
      return c
    end
  end
  return nil
end

-- define creates the user commands.
function M.define()
  for _, c in ipairs(M.list) do
    vim.api.nvim_create_user_command(c.name, function(a)
      c.run(a)
    end, {
      nargs = c.nargs,
      range = c.range,
      complete = c.complete,
      desc = 'reika: ' .. c.desc,
    })
  end
end

-- The keymap actions (setup({ keymaps = ... })): the keys of
-- config.default_keymaps.
M.keymap_actions = {
  ask = { n = '<cmd>ReikaAsk<cr>', x = ':ReikaAsk<cr>', desc = 'reika: ask' },
  prompt = { n = '<cmd>ReikaPrompt<cr>', x = ':ReikaPrompt<cr>', desc = 'reika: prompt buffer' },
  mode = { n = '<cmd>ReikaMode<cr>', desc = 'reika: choose the mode' },
  sessions = { n = '<cmd>ReikaSessions<cr>', desc = 'reika: sessions' },
  compact = { n = '<cmd>ReikaCompact<cr>', desc = 'reika: compact context' },
  cancel = { n = '<cmd>ReikaCancel<cr>', desc = 'reika: cancel the turn' },
  transcript = { n = '<cmd>ReikaTranscript<cr>', desc = 'reika: show the transcript' },
  new_session = { n = '<cmd>ReikaNew<cr>', desc = 'reika: new session' },
}

return M
