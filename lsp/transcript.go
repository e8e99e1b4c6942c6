package lsp

import (
	"context"
	"errors"

	"github.com/reika-lsp/reika-lsp/agent"
)

// transcriptArgs is the argument of reika.transcript.
type transcriptArgs struct {
	// MaxChars bounds the characters of event text and arguments in the
	// answer; 0 means agent.DefaultTranscriptChars.
	MaxChars int `json:"maxChars"`
}

// cmdTranscript answers reika.transcript: the session's transcript events,
// rebuilt from its log, for a client that starts again (a reloaded editor
// window) to show what it showed before. The result is an
// agent.TranscriptPage: {"session", "events", "omitted"}.
func (s *server) cmdTranscript(ctx context.Context, p *executeCommandParams) (any, error) {
	var a transcriptArgs
	if err := optionalObjectArg(p.Arguments, &a); errors.Is(err, errNotAnObject) {
		return nil, invalidParams(`reika.transcript: want [{"maxChars"?: number}]`)
	} else if err != nil {
		return nil, invalidParams("reika.transcript: %v", err)
	}
	if a.MaxChars < 0 {
		return nil, invalidParams("reika.transcript: maxChars must not be negative, got %d", a.MaxChars)
	}
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	page, err := svc.Transcript(a.MaxChars)
	if err != nil {
		return nil, requestFailed("reika.transcript: %v", err)
	}
	if page.Events == nil {
		page.Events = []agent.Event{}
	}
	return jsonResult(page)
}
