package lsp

import (
	"context"
	"encoding/json"
	"strings"
)

// command runs one reika.* command of workspace/executeCommand (one file
// each: ask.go, compact.go, cancel.go, status.go, save.go, newsession.go,
// transcript.go, sessions.go). It decodes its own arguments from p.
type command func(s *server, ctx context.Context, p *executeCommandParams) (any, error)

// commandTable has an entry for each of Commands.
var commandTable = map[string]command{
	CmdAsk:        (*server).cmdAsk,
	CmdCompact:    (*server).cmdCompact,
	CmdCancel:     (*server).cmdCancel,
	CmdStatus:     (*server).cmdStatus,
	CmdSave:       (*server).cmdSave,
	CmdNewSession: (*server).cmdNewSession,
	CmdTranscript: (*server).cmdTranscript,
	CmdCommands:   (*server).cmdCommands,
	CmdSessions:   (*server).cmdSessions,
}

// executeCommand runs the command workspace/executeCommand names.
func (s *server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p executeCommandParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %v", err)
	}
	run, ok := commandTable[p.Command]
	if !ok {
		return nil, invalidParams("unknown command %q (the server runs %s)", p.Command, strings.Join(Commands, ", "))
	}
	return run(s, ctx, &p)
}
