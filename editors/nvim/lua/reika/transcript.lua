-- The transcript as lines: reika/transcript events in, buffer edits out.
-- Pure (no buffers): reika.transcript_buffer shows it in a scratch buffer.
--
-- Streamed events (delta = true) grow one block until the final, whole
-- event of the same session, turn, round and kind replaces it.
local format = require('reika.format')
local protocol = require('reika.protocol')

local kinds = protocol.event

local M = {}

local function split_lines(s)
  local out = {}
  if s == nil or s == '' then
    return out
  end
  s = s:gsub('\r\n', '\n')
  for line in (s .. '\n'):gmatch('(.-)\n') do
    out[#out + 1] = line
  end
  -- A trailing newline does not make an empty last line.
  if #out > 1 and out[#out] == '' then
    out[#out] = nil
  end
  return out
end
M.split_lines = split_lines

-- prefixed puts prefix before the first line and indent before the rest.
local function prefixed(lines, prefix, indent)
  local out = {}
  for i, l in ipairs(lines) do
    out[i] = (i == 1 and prefix or indent) .. l
  end
  if #out == 0 then
    out[1] = (prefix:gsub('%s+$', ''))
  end
  return out
end

local function short(s, max)
  s = s:gsub('\n', '\\n')
  if vim.fn.strchars(s) > max then
    return vim.fn.strcharpart(s, 0, max - 1) .. '…'
  end
  return s
end

-- format_args renders tool arguments (a table decoded from JSON) as
-- "k=v k=v" in key order, long values shortened.
function M.format_args(args)
  if type(args) ~= 'table' then
    if args == nil or args == vim.NIL then
      return ''
    end
    return short(tostring(args), 60)
  end
  local keys = {}
  for k in pairs(args) do
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = args[k]
    local s
    if type(v) == 'string' then
      if v == '' or v:find('[%s"\\]') then
        -- Quoted, with backslash escapes, each escaped once.
        local e = v:gsub('\\', '\\\\')
          :gsub('"', '\\"')
          :gsub('\n', '\\n')
          :gsub('\r', '\\r')
          :gsub('\t', '\\t')
        s = '"' .. short(e, 60) .. '"'
      else
        s = short(v, 60)
      end
    elseif type(v) == 'table' then
      s = short(vim.json.encode(v), 60)
    else
      s = tostring(v)
    end
    parts[#parts + 1] = tostring(k) .. '=' .. s
  end
  return table.concat(parts, ' ')
end

local function tokens_suffix(ev)
  if type(ev.tokens) == 'number' and ev.tokens > 0 then
    return ' (' .. format.tokens(ev.tokens) .. ' tokens)'
  end
  return ''
end

-- headings are the headings of the blocks of notes, sheds and folds.
local headings = {
  [kinds.note] = '### Note',
  [kinds.shed] = '### Shed',
  [kinds.fold] = '### Fold',
}
M.headings = headings

-- format_event renders one event (with `text` the whole text so far) as
-- lines. opts.result_lines bounds the lines shown of a tool result.
function M.format_event(ev, opts)
  opts = opts or {}
  local kind = ev.kind
  local text = type(ev.text) == 'string' and ev.text or ''
  if kind == kinds.user then
    local lines = { '', string.format('--- turn %s ---', tostring(ev.turn or '?')) }
    vim.list_extend(lines, prefixed(split_lines(text), '> ', '> '))
    return lines
  elseif kind == kinds.assistant then
    return split_lines(text)
  elseif kind == kinds.reasoning then
    return prefixed(split_lines(text), '| ', '| ')
  elseif kind == kinds.tool_call then
    local args = M.format_args(ev.args)
    local head = '-> ' .. (ev.tool or 'tool')
    if args ~= '' then
      head = head .. ' ' .. args
    elseif text ~= '' then
      head = head .. ' ' .. short(text, 80)
    end
    return { head }
  elseif kind == kinds.tool_result then
    local lines = split_lines(text)
    local head = '<- ' .. (ev.tool or 'result') .. ': ' .. (lines[1] or '') .. tokens_suffix(ev)
    local out = { head }
    local max = opts.result_lines or 3
    for i = 2, math.min(#lines, max + 1) do
      out[#out + 1] = '   ' .. lines[i]
    end
    local more = #lines - 1 - max
    if more > 0 then
      out[#out + 1] = string.format('   … %d more line%s', more, more == 1 and '' or 's')
    end
    return out
  elseif headings[kind] then
    -- Its own headed block: the text (a note is the model's Markdown)
    -- under a heading, after a blank line.
    local suffix = ''
    if kind ~= kinds.note and not text:find('token') then
      suffix = tokens_suffix(ev)
    end
    local out = { '', headings[kind] }
    vim.list_extend(out, split_lines(text .. suffix))
    return out
  else
    local tag = '[' .. tostring(kind or 'event') .. '] '
    return prefixed(split_lines(text .. tokens_suffix(ev)), tag, string.rep(' ', #tag))
  end
end

local Transcript = {}
Transcript.__index = Transcript

-- new makes an empty transcript. opts: result_lines.
function M.new(opts)
  return setmetatable({
    opts = opts or {},
    lines = {}, -- every line shown
    line_kinds = {}, -- the event kind of each line ('session' for headers)
    blocks = {}, -- { key, kind, start (0-based), count, text, open, ev }
    session = nil,
  }, Transcript)
end

local function key_of(ev)
  return table.concat({
    tostring(ev.session or ''),
    tostring(ev.turn or ''),
    tostring(ev.round or ''),
    tostring(ev.kind or ''),
  }, '\0')
end

-- splice replaces lines [first, last) (0-based) with new ones, shifts the
-- blocks after block number `index`, and returns the edit.
function Transcript:splice(first, last, new, kind, index)
  local old_n = #self.lines
  local delta = #new - (last - first)
  local tail, tail_kinds = {}, {}
  for i = last + 1, old_n do
    tail[#tail + 1] = self.lines[i]
    tail_kinds[#tail_kinds + 1] = self.line_kinds[i]
  end
  for i = old_n, first + 1, -1 do
    self.lines[i] = nil
    self.line_kinds[i] = nil
  end
  local kinds_out = {}
  for i, l in ipairs(new) do
    self.lines[#self.lines + 1] = l
    self.line_kinds[#self.line_kinds + 1] = kind
    kinds_out[i] = kind
  end
  for i, l in ipairs(tail) do
    self.lines[#self.lines + 1] = l
    self.line_kinds[#self.line_kinds + 1] = tail_kinds[i]
  end
  if delta ~= 0 then
    for i = index + 1, #self.blocks do
      self.blocks[i].start = self.blocks[i].start + delta
    end
  end
  return { first = first, last = last, lines = new, kinds = kinds_out }
end

function Transcript:append_block(b, lines)
  b.start = #self.lines
  b.count = #lines
  self.blocks[#self.blocks + 1] = b
  b.index = #self.blocks
  return self:splice(b.start, b.start, lines, b.kind, b.index)
end

function Transcript:render_block(b)
  local ev = vim.tbl_extend('force', b.ev, { text = b.text })
  return M.format_event(ev, self.opts)
end

-- find_open returns the open streamed block with key, looking back a few
-- blocks (a reasoning stream may interleave with an assistant stream).
function Transcript:find_open(key)
  for i = #self.blocks, math.max(1, #self.blocks - 8), -1 do
    local b = self.blocks[i]
    if b.open and b.key == key then
      return b
    end
  end
  return nil
end

-- apply adds one event and returns the edits to make to a buffer showing
-- the transcript, in order: { first, last, lines, kinds } with first/last
-- 0-based, end-exclusive, in the lines as they were before that edit.
function Transcript:apply(ev)
  if type(ev) ~= 'table' or type(ev.kind) ~= 'string' then
    return {}
  end
  local edits = {}
  if ev.session and ev.session ~= '' and ev.session ~= self.session then
    self.session = ev.session
    local header = { string.format('=== session %s ===', ev.session) }
    if #self.lines > 0 then
      table.insert(header, 1, '')
    end
    local b = { key = '', kind = 'session', ev = ev, text = '' }
    edits[#edits + 1] = self:append_block(b, header)
  end
  local key = key_of(ev)
  local text = type(ev.text) == 'string' and ev.text or ''
  local b = self:find_open(key)
  if ev.delta == true then
    if b then
      edits[#edits + 1] = self:grow(b, text)
      return edits
    end
    if text == '' then
      return edits
    end
    b = { key = key, kind = ev.kind, ev = ev, text = '', open = true, raw = { '' } }
    b.start, b.count = #self.lines, 0
    self.blocks[#self.blocks + 1] = b
    b.index = #self.blocks
    edits[#edits + 1] = self:grow(b, text)
    return edits
  end
  if not b then
    b = { key = key, kind = ev.kind, ev = ev, text = text, open = false }
    local lines = self:render_block(b)
    if #lines == 0 then
      return edits
    end
    edits[#edits + 1] = self:append_block(b, lines)
    return edits
  end
  -- The final event of a stream: render it whole, in place.
  b.text = text
  b.ev = ev
  b.open = false
  b.raw = nil
  local lines = self:render_block(b)
  local old = b.count
  b.count = #lines
  edits[#edits + 1] = self:splice(b.start, b.start + old, lines, b.kind, b.index)
  return edits
end

-- stream_line renders one line of a streamed block as format_event would.
local function stream_line(kind, line)
  if kind == kinds.reasoning then
    return '| ' .. line
  end
  return line
end

-- grow appends a streamed chunk to an open block. Only its last line and
-- the new ones change, so a long answer streams in constant time per
-- chunk. Returns the edit.
function Transcript:grow(b, text)
  text = text:gsub('\r', '')
  b.text = b.text .. text
  local raw = b.raw
  local from = #raw
  local first = true
  for piece in (text .. '\n'):gmatch('(.-)\n') do
    if first then
      raw[from] = raw[from] .. piece
      first = false
    else
      raw[#raw + 1] = piece
    end
  end
  local new = {}
  for i = from, #raw do
    new[#new + 1] = stream_line(b.kind, raw[i])
  end
  local old = b.count
  b.count = #raw
  local start = b.start + math.min(from - 1, old)
  return self:splice(start, b.start + old, new, b.kind, b.index)
end

-- get_lines returns a copy of every line.
function Transcript:get_lines()
  return vim.list_extend({}, self.lines)
end

-- kinds returns a copy of the kind of each line.
function Transcript:get_kinds()
  return vim.list_extend({}, self.line_kinds)
end

M.Transcript = Transcript
return M
