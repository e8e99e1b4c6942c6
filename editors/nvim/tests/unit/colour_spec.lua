local colour = require('reika.colour')

local function near(want, got, what)
  t.truthy(math.abs(want - got) < 0.01, string.format('%s: want %.3f, got %.3f', what, want, got))
end

t.describe('colour.contrast', function()
  t.it('is 21 for black on white and 1 for a colour on itself', function()
    near(21, colour.contrast(0x000000, 0xffffff), 'black on white')
    near(21, colour.contrast(0xffffff, 0x000000), 'either order')
    near(1, colour.contrast(0x808080, 0x808080), 'itself')
  end)
  t.it('matches WCAG examples', function()
    -- #777777 on white is the classic 4.48:1.
    near(4.48, colour.contrast(0x777777, 0xffffff), '#777 on white')
    near(1.32, colour.contrast(0xfce094, 0xc4c6cd), 'NvimLightYellow on NvimLightGrey3')
  end)
end)

t.describe('colour.mix', function()
  t.it('goes from a to b', function()
    t.eq(0x000000, colour.mix(0x000000, 0xffffff, 0))
    t.eq(0xffffff, colour.mix(0x000000, 0xffffff, 1))
    t.eq(0x808080, colour.mix(0x000000, 0xffffff, 0.5))
    t.eq(0x804080, colour.mix(0xff0000, 0x0080ff, 0.5), 'halves round up')
  end)
end)

t.describe('colour.readable', function()
  t.it('keeps a colour that reads', function()
    t.eq(0xfce094, colour.readable(0xfce094, 0x2c2e33, 0xe0e2ea))
  end)
  t.it('moves one that does not towards the text colour until it reads', function()
    local c = colour.readable(0xfce094, 0xc4c6cd, 0x2c2e33)
    t.truthy(colour.contrast(c, 0xc4c6cd) >= 3)
    t.neq(0x2c2e33, c, 'still a colour of its own')
    -- The first tenth that reads: the one before it does not.
    local step
    for i = 1, 9 do
      if colour.mix(0xfce094, 0x2c2e33, i / 10) == c then
        step = i
      end
    end
    t.truthy(step, 'a tenth of the way')
    t.truthy(colour.contrast(colour.mix(0xfce094, 0x2c2e33, (step - 1) / 10), 0xc4c6cd) < 3)
  end)
  t.it('ends at the text colour when nothing short of it reads', function()
    -- #ddd on #eee is 1.17:1.
    t.eq(0xdddddd, colour.readable(0xffffff, 0xeeeeee, 0xdddddd))
  end)
end)
