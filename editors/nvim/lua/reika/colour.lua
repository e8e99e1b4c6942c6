-- Pure colour arithmetic on 0xRRGGBB numbers: contrast (WCAG 2) and
-- keeping a text colour readable on a background.
local M = {}

local function channels(c)
  return math.floor(c / 65536) % 256, math.floor(c / 256) % 256, c % 256
end

local function linear(v)
  v = v / 255
  if v <= 0.03928 then
    return v / 12.92
  end
  return ((v + 0.055) / 1.055) ^ 2.4
end

-- luminance is the relative luminance of c, 0 (black) to 1 (white).
function M.luminance(c)
  local r, g, b = channels(c)
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
end

-- contrast is the contrast ratio of two colours, 1 to 21.
function M.contrast(a, b)
  local la, lb = M.luminance(a), M.luminance(b)
  if la < lb then
    la, lb = lb, la
  end
  return (la + 0.05) / (lb + 0.05)
end

-- mix is a + (b - a) * t, channel by channel.
function M.mix(a, b, t)
  local ar, ag, ab = channels(a)
  local br, bg, bb = channels(b)
  local function ch(x, y)
    return math.floor(x + (y - x) * t + 0.5)
  end
  return ch(ar, br) * 65536 + ch(ag, bg) * 256 + ch(ab, bb)
end

-- The contrast readable returns at least: WCAG's minimum for large or bold
-- text, which the chip is.
M.min_contrast = 3

-- readable returns fg, moved towards the colour toward (the text colour
-- that the background was made for) in tenths until it reaches
-- min_contrast against bg; fg itself when it already does, toward when
-- nothing short of it does.
function M.readable(fg, bg, toward)
  for i = 0, 9 do
    local c = M.mix(fg, toward, i / 10)
    if M.contrast(c, bg) >= M.min_contrast then
      return c
    end
  end
  return toward
end

return M
