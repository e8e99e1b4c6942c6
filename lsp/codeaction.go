package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"go.lsp.dev/protocol"
)

// codeAction offers Compact context once the session has a turn.
func (s *server) codeAction(_ context.Context, raw json.RawMessage) (any, error) {
	var p codeActionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, invalidParams("textDocument/codeAction: %v", err)
	}
	actions := []protocol.CodeAction{}
	svc := s.currentAgent()
	if svc != nil && kindRequested(p.Context.Only, KindCompactContext) && svc.HasTurns() {
		kind := protocol.CodeActionKind(KindCompactContext)
		actions = append(actions, protocol.CodeAction{
			Title:   TitleCompactContext,
			Kind:    &kind,
			Command: protocol.Command{Title: TitleCompactContext, Command: CmdCompact},
		})
	}
	return actions, nil
}

// kindRequested applies a code action request's context.only: a kind is
// wanted when it or one of its parents ("source" for
// "source.compactContext") is listed, or when nothing is.
func kindRequested(only []string, kind string) bool {
	if len(only) == 0 {
		return true
	}
	for _, k := range only {
		if k == kind || strings.HasPrefix(kind, k+".") {
			return true
		}
	}
	return false
}
