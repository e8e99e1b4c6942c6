-- reika-lsp: the :Reika* commands (declared in lua/reika/commands.lua,
-- which loads nothing else). Everything else loads on first use; call
-- require('reika').setup() to start the server with your workspaces.
if vim.g.loaded_reika or vim.fn.has('nvim-0.7') == 0 then
  return
end
vim.g.loaded_reika = true

require('reika.commands').define()
