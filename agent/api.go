package agent

import (
	"context"
	"encoding/json"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
)

// Transcript event kinds (docs/protocol.md, reika/transcript).
const (
	EventUser       = "user"
	EventAssistant  = "assistant"
	EventReasoning  = "reasoning"
	EventToolCall   = "tool_call"
	EventToolResult = "tool_result"
	EventNote       = "note"
	EventShed       = "shed"
	EventFold       = "fold"
	EventInfo       = "info"
	EventError      = "error"
)

// Event is one transcript event. Its JSON is the params of the
// reika/transcript notification. Streamed text comes as Delta events of
// one round and kind, ended by the final (Delta false) event of that round
// and kind, whose text replaces what streamed. A final event with empty
// text after streamed text retracts it: the attempt that streamed it broke
// off, and the next attempt streams anew (into a new block).
type Event struct {
	Session string          `json:"session"`
	Turn    int             `json:"turn"`
	Round   int             `json:"round"`
	Kind    string          `json:"kind"`
	Text    string          `json:"text"`
	Delta   bool            `json:"delta"`
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Tokens  int             `json:"tokens,omitempty"`
}

// Status levels.
const (
	LevelOK      = "ok"
	LevelWarning = "warning"
	LevelError   = "error"
)

// Status is the state behind the status item. Its JSON is the params of the
// reika/status notification and the result of reika.status. Window,
// ShedPoint and Percent are null when no window is known.
type Status struct {
	Text         string `json:"text"`
	Tooltip      string `json:"tooltip"`
	Level        string `json:"level"`
	Busy         bool   `json:"busy"`
	Size         int    `json:"size"`
	Window       *int   `json:"window"`
	ShedPoint    *int   `json:"shedPoint"`
	Percent      *int   `json:"percent"`
	WindowSource string `json:"windowSource"`
	Model        string `json:"model"`
	Session      string `json:"session"`
	// Mode is the session's mode when it is not code (modes.go); empty
	// for code.
	Mode string `json:"mode,omitempty"`
}

// LevelInfo is the level of an informational notice.
const LevelInfo = "info"

// Notice is a one-line message for window/showMessage. The agent sends each
// once while its condition holds.
type Notice struct {
	Level string // "info", "warning" or "error"
	Text  string
}

// Progress is one round's progress report of a running turn.
type Progress struct {
	Turn  int
	Round int
	// Text is the report message, e.g. "round 3 · read src/a.go · ctx 12k/24k (61% of 20k)".
	Text string
}

// Events receives what the agent has to show. Calls come from the agent's
// goroutines, one turn at a time; implementations must not block for long.
type Events interface {
	Transcript(Event)
	Status(Status)
	Notice(Notice)
	Progress(Progress)
}

// Decision is the user's answer to an approval request.
type Decision int

// Decisions, in the order of the showMessageRequest actions.
const (
	Deny Decision = iota
	Allow
	AllowSession
	// Never answers the question whether to start a workspace's MCP
	// servers, and only it: no, remembered until its .mcp.json changes
	// (Allow is the remembered yes, AllowSession a yes this time, Deny a
	// no this time).
	Never
)

// Approver asks the user to approve a tool call. No answer means Deny.
type Approver interface {
	Approve(ctx context.Context, a approval.Request) Decision
}

// Workspace is the project the agent works in.
type Workspace interface {
	tools.Files
	// Root is the workspace root directory (absolute).
	Root() string
}

// AskParams is one user request.
type AskParams struct {
	Prompt string
	// Attachment is the editor selection attached to the task, if any.
	Attachment *Attachment
	// Retry, with no prompt, answers the session's last prompt again when
	// the model never answered it (the engine was down): no new prompt is
	// added. With nothing to retry the ask fails, saying so.
	Retry bool
}

// Attachment is a piece of a file the user attached to a request.
type Attachment struct {
	Path      string // workspace-relative when inside the workspace
	StartLine int    // 1-based
	EndLine   int
	Text      string
}

// Ask statuses (docs/protocol.md, reika.ask).
const (
	AskDone      = "done"
	AskCancelled = "cancelled"
	AskError     = "error"
)

// AskResult is the outcome of a turn.
type AskResult struct {
	Session string `json:"session"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// CompactResult is the outcome of reika.compact.
type CompactResult struct {
	Folded      bool   `json:"folded"`
	RecapTokens int    `json:"recapTokens,omitempty"`
	Message     string `json:"message"`
}

// Service is one workspace's agent as a front end (the language server,
// `reika-lsp run`) drives it. Methods may be called from any goroutine.
type Service interface {
	// Ask runs one turn and returns when it ends. Cancelling ctx stops the
	// turn (status "cancelled"). A second Ask while a turn runs returns at
	// once with status "error" and a message saying a turn is running.
	Ask(ctx context.Context, p AskParams) AskResult
	// Compact runs the note round and a fold now; with nothing to fold it
	// says so ("Nothing to fold").
	Compact(ctx context.Context) CompactResult
	// Cancel stops the running turn; false when none runs.
	Cancel() bool
	// Status is the current status item.
	Status() Status
	// Save writes the whole conversation, unshed, as Markdown to path ("" =
	// a file in the state directory) and returns the path written.
	Save(path string) (string, error)
	// NewSession starts a fresh session and returns its id.
	NewSession() (string, error)
	// HasTurns reports whether the session has at least one turn.
	HasTurns() bool
	// Transcript is the session's transcript rebuilt from its log: the
	// newest events within maxChars characters (transcript.go).
	Transcript(maxChars int) (TranscriptPage, error)
	// Sessions, OpenSession, ResumeSession, RenameSession and
	// DeleteSession are the workspace's session history (history.go).
	Sessions() ([]SessionInfo, error)
	OpenSession(id string, maxChars int) (TranscriptPage, error)
	ResumeSession(id string) error
	RenameSession(id, title string) error
	DeleteSession(id string) error
	// UpdateSettings applies changed settings.
	UpdateSettings(Settings) error
	// Close cancels a running turn and releases the session.
	Close() error
}

// Options are what an agent is built from.
type Options struct {
	Workspace Workspace
	Model     llm.Model
	Approver  Approver
	Events    Events
	Settings  Settings
	// StateDir holds session logs; "" means $XDG_STATE_HOME/reika.
	StateDir string
	// SessionsDir holds the workspace's session logs and their saved
	// results; "" means StateDir/sessions/NAME-HASH of the workspace root.
	SessionsDir string
	// NewSessionID names a new session; nil means the time and three
	// random bytes. The bench names its sessions itself: the name is in
	// the path of every saved result the model is shown, and its runs
	// must send the same requests token for token.
	NewSessionID func() string
	// Logf writes a log line (to stderr, never stdout); nil discards.
	Logf func(format string, args ...any)
	// Resume picks up the workspace's last session on the first turn.
	Resume bool
	// NewModel, when set, builds a model for changed endpoint settings.
	NewModel func(Settings) (llm.Model, error)
	// MCPConfig is the config file whose [mcp.servers.NAME] are started
	// (ConfigFilePath() in the front ends); "" starts none of the user's.
	// The workspace's .mcp.json is read in any case.
	MCPConfig string
}
