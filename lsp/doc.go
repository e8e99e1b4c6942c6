// Package lsp is the language server: it exposes one workspace's agent to
// an editor as docs/protocol.md describes, over go.lsp.dev/jsonrpc2 v1.0.1 with
// go.lsp.dev/protocol v1.0.1 types.
//
// The files follow the protocol, one feature each: protocol.go holds the
// names docs/protocol.md fixes; handler.go the table of requests and
// notifications and the handler chain; lifecycle.go initialize,
// initialized, shutdown and exit; agent.go the agent's lifetime;
// settings.go the editor's settings; command.go the table of commands,
// each in a file named for it (ask.go, compact.go, cancel.go, status.go,
// save.go, newsession.go, transcript.go, sessions.go), with attachment.go for the
// selection an ask attaches; codeaction.go the Compact context code
// action; errors.go every JSON-RPC error; serve.go, stream.go and wire.go
// the connection, its framing and what goes over it.
//
// Serve runs one connection. After initialize and initialized it builds
// the agent with Config.NewAgent, handing it this package's implementations
// of the agent's front-end interfaces:
//
//   - agent.Workspace (workspace.go over documents.go): reads see the
//     editor's unsaved buffers, kept in sync by didOpen/didChange/didClose
//     (incremental, UTF-16 positions; position.go is the one byte-offset to
//     UTF-16 mapper); writes go through workspace/applyEdit when the client
//     supports it, else atomically to disk.
//   - agent.Approver (approver.go): window/showMessageRequest with Allow /
//     Allow for this session / Deny; no answer or no support is Deny.
//   - agent.Events (events.go, progress.go): reika/transcript, reika/status,
//     window/showMessage, and $/progress for the running turn.
//
// The commands are reika.ask, reika.compact, reika.cancel, reika.status,
// reika.save and reika.newSession; the Compact context code action runs
// reika.compact. reika.transcript (transcript.go) gives a
// client that starts again (a reloaded window) the session's transcript:
//
//	arguments: [{"maxChars"?: number}]   (or [] / none: 1 MiB, at most 8 MiB)
//	result:    {"session": string, "events": [event...], "omitted": number}
//
// events are the params of the reika/transcript notifications the session's
// turns sent, oldest first, rebuilt from the session log: the full events
// (never the streamed chunks, which they replace), the newest whose text and
// arguments fit in maxChars; omitted counts the older ones left out. With no
// session yet, session is "" and events is empty. Before its first turn a
// server that resumes answers with the session it will resume.
//
// reika.sessions (sessions.go) is the workspace's session history: list,
// open (a reika.transcript result for another session), resume, rename
// and delete, as docs/protocol.md §3.9 says.
//
// # Concurrency
//
// Notifications run inline on the connection's read loop, in order;
// requests run on their own goroutines (jsonrpc2.Async), so a turn never
// holds up a status request or a code action. $/cancelRequest is handled
// ahead of the queue by a Preempter. Everything the server starts is tied
// to a lifetime context that shutdown, exit and the end of the connection
// cancel, and is tracked so that Serve returns only when it has all ended.
// handler.go lists the go.lsp.dev sharp edges this design answers (docs/design.md
// §7); sharpedges_test.go has a test for each.
//
// # Robustness
//
// The framing (stream.go) skips malformed headers and answers malformed
// messages instead of dropping the connection; params are decoded
// leniently (wire.go) because Neovim sends [] for empty objects; panics in
// handlers and in the agent are logged and answered with an error.
//
// Package lsptest is a scriptable client for tests of the server, in
// process or against the binary; lsptest/scripted a scripted agent.Service
// to serve over; lsptest/cmd/scriptedlsp the server over that agent as a
// binary, for the editors' tests.
package lsp
