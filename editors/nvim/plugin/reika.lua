-- reika-lsp: the :Reika* commands. Everything else loads on first use;
-- call require('reika').setup() to start the server with your workspaces.
if vim.g.loaded_reika or vim.fn.has('nvim-0.7') == 0 then
  return
end
vim.g.loaded_reika = true

local function define(name, opts)
  opts.desc = 'reika: ' .. opts.desc
  vim.api.nvim_create_user_command(name, function(a)
    require('reika.commands').user[name](a)
  end, opts)
end

define('ReikaAsk', { nargs = '*', range = true, desc = 'ask the agent (attaches a selection)' })
define('ReikaCompact', { nargs = 0, desc = 'compact the context now' })
define('ReikaCancel', { nargs = 0, desc = 'cancel the running turn' })
define('ReikaSave', { nargs = '?', complete = 'file', desc = 'save the conversation as Markdown' })
define('ReikaNew', { nargs = 0, desc = 'start a new session' })
define('ReikaTranscript', { nargs = 0, desc = 'show the transcript' })
define('ReikaStatus', { nargs = 0, desc = 'show the context budget' })
