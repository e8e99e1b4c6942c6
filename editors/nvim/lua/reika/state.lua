-- What the plugin knows of its workspaces and their clients: one record
-- per workspace (kept across its servers) and one per client, each holding
-- everything about it, instead of maps keyed by client id.
--
--   workspace = { root, view, client = record|nil, failed, dead = record|nil }
--   record    = { id, root, workspace, pending = {fn}, inflight = {[req] = cb},
--                 messages = {{seq, type, message}}, stopping,
--                 status (its last reika/status, reika.status),
--                 progress = {[token] = {title, message}} (reika.progress) }
local M = {}

M.workspaces = {} -- root -> workspace
M.records = {} -- client id -> record (a running client, or one whose exit is being handled)
M.message_seq = 0 -- orders window/showMessage across clients

-- workspace returns the record of a root, creating it.
function M.workspace(root)
  local ws = M.workspaces[root]
  if not ws then
    ws = { root = root }
    M.workspaces[root] = ws
  end
  return ws
end

-- add makes the record of a new client of root: the workspace's client
-- from now on.
function M.add(id, root)
  local ws = M.workspace(root)
  local rec = {
    id = id,
    root = root,
    workspace = ws,
    pending = {},
    inflight = {},
    messages = {},
    stopping = false,
    progress = {},
  }
  M.records[id] = rec
  ws.client = rec
  return rec
end

-- get returns the record of a client id, nil for another plugin's client
-- or one that has exited.
function M.get(id)
  return id ~= nil and M.records[id] or nil
end

-- find returns the record of a client id: a running one, or the one whose
-- death its workspace shows (workspace.dead).
function M.find(id)
  local rec = M.get(id)
  if rec then
    return rec
  end
  for _, ws in pairs(M.workspaces) do
    if ws.dead and ws.dead.id == id then
      return ws.dead
    end
  end
  return nil
end

-- each calls fn(record) for the running clients and the dead ones shown.
function M.each(fn)
  for _, rec in pairs(M.records) do
    fn(rec)
  end
  for _, ws in pairs(M.workspaces) do
    if ws.dead and M.records[ws.dead.id] == nil then
      fn(ws.dead)
    end
  end
end

-- remove forgets a client that exited; its workspace stays.
function M.remove(rec)
  M.records[rec.id] = nil
  if rec.workspace.client == rec then
    rec.workspace.client = nil
  end
end

-- root_of returns the workspace root of a client id.
function M.root_of(id)
  local rec = M.get(id)
  return rec and rec.root or nil
end

-- client_id returns the id of the running client of root.
function M.client_id(root)
  local ws = M.workspaces[root]
  return ws and ws.client and ws.client.id or nil
end

-- ids lists the ids of the clients with a record, in order.
function M.ids()
  local out = {}
  for id in pairs(M.records) do
    out[#out + 1] = id
  end
  table.sort(out)
  return out
end

-- reset forgets everything (tests).
function M.reset()
  M.workspaces = {}
  M.records = {}
  M.message_seq = 0
end

return M
