package lsp

import (
	"context"

	"github.com/reika-lsp/reika-lsp/agent"
)

// CmdCommands is reika.commands: the slash commands a prompt of reika.ask
// may start with, with their descriptions, for the editors' completion.
// The agent runs them (a slash prompt reaches it through reika.ask like
// any other).
const CmdCommands = "reika.commands"

// commandLister is an agent that lists its slash commands.
type commandLister interface {
	Commands() []agent.Command
}

// cmdCommands answers reika.commands: {"commands": [{name, description,
// argumentHint?, source?}]}, names without the slash.
func (s *server) cmdCommands(ctx context.Context, _ *executeCommandParams) (any, error) {
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	cmds := []agent.Command{}
	if l, ok := svc.(commandLister); ok {
		cmds = l.Commands()
	}
	return jsonResult(struct {
		Commands []agent.Command `json:"commands"`
	}{cmds})
}
