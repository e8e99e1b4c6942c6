-- reika.edits.changed_uris: which documents a WorkspaceEdit changes.
local edits = require('reika.edits')

local e = { range = {}, newText = 'x' }

t.describe('changed_uris', function()
  t.it('lists the documents of a changes map in order', function()
    t.eq(
      { 'file:///a', 'file:///b' },
      edits.changed_uris({ changes = { ['file:///b'] = { e }, ['file:///a'] = { e, e } } })
    )
  end)

  t.it('lists text document edits of documentChanges once each, in order', function()
    t.eq(
      { 'file:///b', 'file:///a' },
      edits.changed_uris({
        documentChanges = {
          { textDocument = { uri = 'file:///b', version = 3 }, edits = { e } },
          { textDocument = { uri = 'file:///a' }, edits = { e } },
          { textDocument = { uri = 'file:///b', version = 4 }, edits = { e } },
        },
      })
    )
  end)

  t.it('prefers documentChanges to changes, as Neovim applies them', function()
    t.eq(
      { 'file:///a' },
      edits.changed_uris({
        changes = { ['file:///c'] = { e } },
        documentChanges = { { textDocument = { uri = 'file:///a' }, edits = { e } } },
      })
    )
  end)

  t.it('leaves out file operations and documents without edits', function()
    t.eq(
      {},
      edits.changed_uris({
        documentChanges = {
          { kind = 'create', uri = 'file:///n' },
          { kind = 'rename', oldUri = 'file:///o', newUri = 'file:///p' },
          { textDocument = { uri = 'file:///a' }, edits = {} },
        },
      })
    )
    t.eq({}, edits.changed_uris({ changes = { ['file:///a'] = {} } }))
  end)

  t.it('takes anything else as no edit', function()
    t.eq({}, edits.changed_uris(nil))
    t.eq({}, edits.changed_uris(vim.NIL))
    t.eq({}, edits.changed_uris({}))
    t.eq({}, edits.changed_uris({ changes = 'x', documentChanges = vim.NIL }))
  end)
end)

-- reika.edits.after: one edit naming several documents with unsaved
-- changes (reika-lsp edits one file per workspace/applyEdit, but a
-- WorkspaceEdit may name several) tells about them in one message.
t.describe('after', function()
  t.it('names every document with unsaved changes in one message', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    local docs = {}
    for _, name in ipairs({ 'b.txt', 'c.txt' }) do
      vim.fn.writefile({ name }, dir .. '/' .. name)
      local buf = vim.fn.bufadd(dir .. '/' .. name)
      vim.fn.bufload(buf)
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'mine' })
      docs[#docs + 1] = { bufnr = buf, unsaved = true }
    end
    local told = {}
    edits.after(docs, function(msg, level)
      told[#told + 1] = { msg = msg, level = level }
    end)
    t.eq(1, #told, vim.inspect(told))
    t.eq(vim.log.levels.WARN, told[1].level)
    t.matches(
      '^the agent edited .*b%.txt and .*c%.txt, which have unsaved changes: '
        .. 'save them so commands see the edits$',
      told[1].msg
    )
    t.eq({ 'c.txt' }, vim.fn.readfile(dir .. '/c.txt'), 'not saved')
    vim.fn.delete(dir, 'rf')
  end)
end)
