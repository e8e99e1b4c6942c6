local progress = require('reika.progress')
local compat = require('reika.compat')

local real_has = compat.has
t.after_each(function()
  compat.has = real_has
end)

local function ours(id)
  return id == 1
end
-- Client 1 has a record (reika.state), which holds its entries.
require('reika.state').add(1, '/tmp/progress')

-- The LspProgress data as Neovim 0.10+ hands it over. On 0.10 itself
-- progress.get reads these entries for real; on 0.7.2 compat.has is made to
-- say 0.10 (client/double_spec.lua sees both versions' real paths).
t.describe('progress from LspProgress (Neovim 0.10+)', function()
  t.it('follows begin, report and end, with params or result', function()
    if not real_has('0.10') then
      compat.has = function(v)
        return v ~= '0.11' and v ~= '0.12'
      end
    end
    local changes = 0
    local function changed()
      changes = changes + 1
    end
    progress.on_lsp_progress({
      client_id = 1,
      params = {
        token = 'a',
        value = { kind = 'begin', title = 'Reika', message = 'fix it' },
      },
    }, ours, changed)
    t.eq('Reika: fix it', progress.get(1))
    -- 0.10.0 calls the field `result`.
    progress.on_lsp_progress({
      client_id = 1,
      result = {
        token = 'a',
        value = { kind = 'report', message = 'round 2 · read a.go' },
      },
    }, ours, changed)
    t.eq('Reika: round 2 · read a.go', progress.get(1))
    progress.on_lsp_progress(
      { client_id = 2, params = { token = 'b', value = { kind = 'begin', title = 'Other' } } },
      ours,
      changed
    )
    t.eq('Reika: round 2 · read a.go', progress.get(1), 'other clients ignored')
    progress.on_lsp_progress(
      { client_id = 1, params = { token = 'a', value = { kind = 'end' } } },
      ours,
      changed
    )
    t.eq('', progress.get(1))
    t.eq(3, changes)
  end)
end)

t.describe('progress before 0.10', function()
  t.it('reads client.messages.progress', function()
    t.eq('', progress.get(nil))
    t.eq('', progress.get(12345), 'no such client')
  end)
end)
