package lsp

// The names docs/protocol.md fixes, which the server and both clients share
// (editors/vscode/src/protocol.ts and editors/nvim/lua/reika/protocol.lua
// mirror them). Changing one here changes all three.

// Command names (workspace/executeCommand).
const (
	CmdAsk        = "reika.ask"
	CmdCompact    = "reika.compact"
	CmdCancel     = "reika.cancel"
	CmdStatus     = "reika.status"
	CmdSave       = "reika.save"
	CmdNewSession = "reika.newSession"
	CmdTranscript = "reika.transcript"
)

// Commands lists the commands the server advertises, in docs/protocol.md's order.
var Commands = []string{CmdAsk, CmdCompact, CmdCancel, CmdStatus, CmdSave, CmdNewSession, CmdTranscript, CmdCommands, CmdSessions}

// Custom notifications and the code action.
const (
	MethodTranscript = "reika/transcript"
	MethodStatus     = "reika/status"
	// KindCompactContext is the kind of the Compact context code action.
	KindCompactContext = "source.compactContext"
	// TitleCompactContext is its title.
	TitleCompactContext = "Compact context"
)

// The actions of an approval request (window/showMessageRequest), in the
// order of agent.Decision.
const (
	ActionAllow        = "Allow"
	ActionAllowSession = "Allow for this session"
	ActionDeny         = "Deny"
)

// The actions of the question whether to start the MCP servers of a
// workspace's .mcp.json (window/showMessageRequest): start them, and
// remember it; not this time (asked again at the next start); never, and
// remember it. A yes or a never holds until .mcp.json changes.
const (
	ActionStartServers = "Start servers"
	ActionNotNow       = "Not now"
	ActionNever        = "Never for this workspace"
)

// progressTitle is the title of every work-done progress.
const progressTitle = "Reika"
