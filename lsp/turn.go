package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reika-lsp/reika-lsp/agent"
)

// The turn runner: every command whose work the user watches and may
// cancel — reika.ask, reika.compact, and any new one like them — runs it as
// a turn, and only this file touches the server's turn slot. A command
// runs a turn so:
//
//	t := s.beginTurn(ctx, svc, p.WorkDoneToken, "what the progress says")
//	if t == nil {
//		return <the command's answer that a turn is running (errTurnRunning)>
//	}
//	var res agent.Something
//	err := t.run(func(ctx context.Context) (endText string) {
//		res = svc.Something(ctx) // ctx is the turn's: honour its cancel
//		return "Done"            // the progress end message
//	})
//	switch {
//	case errors.Is(err, errCancelledEarly): // res is unset: cancelled before it started
//	case err != nil: // the work panicked: err is a *bug.Report, reported already
//	}
//
// run blocks until the work returns; reika.ask runs it on its own
// goroutine (s.goTracked) so that it can answer a cancelled turn without
// waiting for the agent.
//
// Under s.mu, beginTurn claims the one slot and registers the turn with
// its cancel and its progress token before the client hears of it (begin,
// or the create request for a server token); run ends the progress and
// frees the slot under the same lock before the command answers. So every
// cancel the client can send once it knows of the turn — reika.cancel,
// window/workDoneProgress/cancel on its token, $/cancelRequest on its
// request, shutdown — reaches it, and a turn cancelled before its work
// started never starts it.

// errTurnRunning answers an ask or a compact while the agent runs a turn.
const errTurnRunning = "a turn is already running: wait for it to end or cancel it (reika.cancel)"

// errCancelledEarly is run's error when the turn was cancelled before its
// work started.
var errCancelledEarly = errors.New("cancelled")

// cancelledText is the progress end message of a cancelled turn.
const cancelledText = "Cancelled"

// turn is a running turn: a reika.ask or reika.compact.
type turn struct {
	s      *server
	svc    agent.Service
	ctx    context.Context // the work's: cancelled by every cancel of the turn
	cancel context.CancelFunc
	stop   func() bool // ends cancelling the turn at shutdown
	// progress is set before the turn is registered and never changed
	// (nil: the client sees no progress).
	progress *workProgress
}

// beginTurn claims the turn slot for a turn on the agent svc, run under
// req (the request's context), with progress on token (the request's
// workDoneToken, or none) saying message (none for ""). It returns nil
// when a turn is running, in the server or in the agent.
func (s *server) beginTurn(req context.Context, svc agent.Service, token json.RawMessage, message string) *turn {
	// The agent is the last guard (it refuses a second turn), but asking it
	// first spares a refused command its progress.
	if svc.Status().Busy {
		return nil
	}
	ctx, cancel := context.WithCancel(req)
	t := &turn{s: s, svc: svc, ctx: ctx, cancel: cancel}
	t.stop = context.AfterFunc(s.life, cancel)
	s.mu.Lock()
	if s.running != nil {
		s.mu.Unlock()
		t.stop()
		cancel()
		return nil
	}
	if message != "" {
		t.progress = s.newProgressLocked(token, message)
	}
	s.running = t
	s.mu.Unlock()
	t.progress.start()
	return t
}

// outsideTurn runs work holding the turn slot, without progress: for a
// quick command that changes which session the next turn runs in
// (reika.sessions resume and delete). It refuses (errTurnRunning) while a
// turn runs, and sends the status after work.
func (s *server) outsideTurn(req context.Context, svc agent.Service, work func() error) error {
	t := s.beginTurn(req, svc, nil, "")
	if t == nil {
		return errors.New(errTurnRunning)
	}
	var werr error
	err := t.run(func(context.Context) string {
		werr = work()
		return ""
	})
	if err != nil {
		return err
	}
	return werr
}

// run runs work on the turn's context and ends the turn: it sends the
// progress end (work's end text), frees the slot and sends the status.
// It returns errCancelledEarly, without calling work, when the turn was
// cancelled before work could start, and the *bug.Report of a panic in
// work (told to the user and logged by reportBug).
func (t *turn) run(work func(ctx context.Context) (endText string)) error {
	endText, err := t.work(work)
	t.progress.end(endText)
	t.s.mu.Lock()
	if t.s.running == t {
		t.s.running = nil
	}
	t.s.mu.Unlock()
	t.stop()
	t.cancel()
	t.s.sendStatus(t.svc.Status(), true)
	return err
}

func (t *turn) work(work func(ctx context.Context) string) (endText string, err error) {
	if t.ctx.Err() != nil {
		return cancelledText, errCancelledEarly
	}
	defer func() {
		if v := recover(); v != nil {
			r := t.s.reportBug("running a turn", v)
			endText, err = "Failed: "+r.Error(), r
		}
	}()
	return work(t.ctx), nil
}

// cancelTurn cancels the running turn; false when none runs.
func (s *server) cancelTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return false
	}
	s.running.cancel()
	return true
}

// cancelTurnByProgress cancels the running turn if its progress token has
// the key.
func (s *server) cancelTurnByProgress(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.running; t != nil && t.progress != nil && t.progress.key == key {
		t.cancel()
	}
}

// reportProgress routes the agent's round report to the running turn.
func (s *server) reportProgress(text string) {
	s.mu.Lock()
	var p *workProgress
	if s.running != nil {
		p = s.running.progress
	}
	s.mu.Unlock()
	p.reportText(text)
}
