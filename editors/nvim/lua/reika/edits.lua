-- workspace/applyEdit from reika-lsp. The server changes files through it
-- (label "Reika: write PATH"), loading those not open into buffers. Neovim's
-- handler leaves an edited buffer modified and
-- unsaved, so the commands the agent runs next (a build, the tests) would
-- not see the edit: after it applies, each document the edit changed is
-- saved when it had no unsaved changes before. One that had is left
-- unsaved (writing it would save the user's unfinished work too), and the
-- user is told once.
local M = {}

-- told[bufnr] is set once the user was told that an edit to bufnr is not
-- saved; it is cleared when the buffer is written.
M.told = {}

-- changed_uris lists the URIs of the documents whose text a WorkspaceEdit
-- changes, in its order (documentChanges wins over changes, as in Neovim's
-- own handler). File operations (create, rename, delete) are not listed.
function M.changed_uris(edit)
  local out, seen = {}, {}
  local function add(uri, edits)
    if type(uri) == 'string' and type(edits) == 'table' and #edits > 0 and not seen[uri] then
      seen[uri] = true
      out[#out + 1] = uri
    end
  end
  if type(edit) ~= 'table' then
    return out
  end
  if type(edit.documentChanges) == 'table' then
    for _, change in ipairs(edit.documentChanges) do
      -- A change with a kind is a file operation.
      local text_edit = type(change) == 'table' and change.kind == nil
      if text_edit and type(change.textDocument) == 'table' then
        add(change.textDocument.uri, change.edits)
      end
    end
    return out
  end
  if type(edit.changes) == 'table' then
    local uris = vim.tbl_keys(edit.changes)
    table.sort(uris)
    for _, uri in ipairs(uris) do
      add(uri, edit.changes[uri])
    end
  end
  return out
end

local function display_name(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and vim.fn.fnamemodify(name, ':~:.') or ('buffer ' .. bufnr)
end

-- join lists names as "a", "a and b", "a, b and c".
local function join(names)
  if #names <= 1 then
    return names[1] or ''
  end
  return table.concat(names, ', ', 1, #names - 1) .. ' and ' .. names[#names]
end

-- save writes bufnr; returns nil or the error.
local function save(bufnr)
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd('silent lockmarks write')
  end)
  if not ok then
    return tostring(err)
  end
  return nil
end

-- before records, for each document the edit changes, its buffer and
-- whether it had unsaved changes (a buffer not loaded has none).
function M.before(edit)
  local docs = {}
  for _, uri in ipairs(M.changed_uris(edit)) do
    local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
    if ok then
      docs[#docs + 1] = {
        bufnr = bufnr,
        unsaved = vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified,
      }
    end
  end
  return docs
end

-- after saves the documents of an applied edit that had no unsaved
-- changes, and tells the user (once per buffer until it is written) about
-- those that had. notify(msg, level) shows a message.
function M.after(docs, notify)
  local unsaved, failed = {}, {}
  for _, d in ipairs(docs) do
    local b = d.bufnr
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_is_loaded(b) then
      if d.unsaved then
        if not M.told[b] then
          M.told[b] = true
          vim.api.nvim_create_autocmd('BufWritePost', {
            buffer = b,
            once = true,
            desc = 'reika: tell again about unsaved edits once written',
            callback = function()
              M.told[b] = nil
            end,
          })
          unsaved[#unsaved + 1] = display_name(b)
        end
      elseif vim.bo[b].modified then
        local err = save(b)
        if err then
          failed[#failed + 1] = { name = display_name(b), err = err }
        end
      end
    end
  end
  if #unsaved == 1 then
    notify(
      string.format(
        'the agent edited %s, which has unsaved changes: save it so commands see the edit',
        unsaved[1]
      ),
      vim.log.levels.WARN
    )
  elseif #unsaved > 1 then
    notify(
      string.format(
        'the agent edited %s, which have unsaved changes: save them so commands see the edits',
        join(unsaved)
      ),
      vim.log.levels.WARN
    )
  end
  for _, f in ipairs(failed) do
    notify(
      string.format(
        'the agent edited %s, but saving it failed (%s): commands do not see the edit',
        f.name,
        f.err
      ),
      vim.log.levels.WARN
    )
  end
end

-- handler returns the client's workspace/applyEdit handler: Neovim's (as
-- vim.lsp.handlers has it when the request comes), then the saves.
function M.handler(notify)
  return function(err, params, ctx, config)
    local docs = M.before(type(params) == 'table' and params.edit or nil)
    local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
    if type(result) == 'table' and result.applied then
      M.after(docs, notify)
    end
    return result
  end
end

return M
