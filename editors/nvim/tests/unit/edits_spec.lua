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
