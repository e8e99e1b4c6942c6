-- reika.diffview: an approval's unified diff applied to the current text,
-- and nothing when it cannot be.
local dv = require('reika.diffview')

local msg = table.concat({
  'Reika wants to edit a.go (2 hunks)',
  '',
  '--- a/a.go',
  '+++ b/a.go',
  '@@ -1,2 +1,2 @@',
  '-one',
  '+ONE',
  ' two',
  '@@ -5,0 +6,1 @@',
  '+six',
  '',
}, '\n')

t.describe('diffview', function()
  t.it('applies the hunks to the current text', function()
    local p = dv.parse(msg)
    t.eq('a.go', p.path)
    t.eq(2, #p.hunks)
    t.eq({ 'ONE', 'two', 'three', 'four', 'five', 'six', 'seven' }, dv.apply({ 'one', 'two', 'three', 'four', 'five', 'seven' }, p))
  end)

  t.it('builds nothing from a diff cut short or a file that changed', function()
    t.eq(nil, dv.parse(msg:sub(1, 60) .. '…'))
    t.eq(nil, dv.parse('Reika wants to run `ls`\n\nls'))
    t.eq(nil, dv.apply({ 'uno', 'two' }, dv.parse(msg)))
  end)

  t.it('reads a new file', function()
    local p = dv.parse('Reika wants to write n.txt (new)\n\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n')
    t.eq(true, p.new_file)
    t.eq({ 'a', 'b' }, dv.apply({}, p))
  end)
end)
