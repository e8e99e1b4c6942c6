-- The busy sign: a spinner frame shown before the chip while a turn runs,
-- advanced by a timer that runs only then.
local M = {}

-- How often the frame advances.
M.interval_ms = 100

M.frames = { '*' }
M.index = 1
M.timer = nil

-- set_frames sets the frames (the option `spinner`).
function M.set_frames(frames)
  M.frames = frames
  M.index = 1
end

-- frame returns the frame to show now.
function M.frame()
  return M.frames[(M.index - 1) % #M.frames + 1]
end

-- running reports whether the timer runs.
function M.running()
  return M.timer ~= nil
end

-- follow starts the timer when busy (and there is more than one frame),
-- calling on_tick() at each frame, and stops it when not busy.
function M.follow(busy, on_tick)
  if busy and not M.timer and #M.frames > 1 then
    local uv = vim.uv or vim.loop
    M.timer = uv.new_timer()
    M.timer:start(
      M.interval_ms,
      M.interval_ms,
      vim.schedule_wrap(function()
        if not M.timer then
          return
        end
        M.index = M.index % #M.frames + 1
        on_tick()
      end)
    )
  elseif not busy and M.timer then
    M.timer:stop()
    M.timer:close()
    M.timer = nil
    M.index = 1
  end
end

return M
