package agent

import (
	"context"
	"errors"
	"sync"
)

// turnState is the run claim and what the editor may ask of the turn that
// holds it (see Agent). Guarded by Agent.mu.
type turnState struct {
	busy   bool               // the run claim is held
	brief  bool               // a change is being applied to the idle session (updateIdle)
	idle   *sync.Cond         // signalled when brief ends; uses Agent.mu
	cancel context.CancelFunc // stops the running turn
	done   chan struct{}      // closed when the running turn ends
	count  int                // turns in the session
	// starting is the session the claim's holder is starting (newSession,
	// resumeSessionID), fed the agent's changes as the agent's session is
	// (outdatedLocked) until it becomes it (setSessionLocked). One that
	// failed to start stays here, unused, until the next one starts.
	starting *session
}

// waitBrief waits while a change is being applied to the idle session.
// Agent.mu is held.
func (t *turnState) waitBrief() {
	for t.brief {
		t.idle.Wait()
	}
}

// begin takes the run claim for a turn, a compact or a new session: it is
// refused while another holds it. end releases it.
func (a *Agent) begin(ctx context.Context) (context.Context, func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turn.waitBrief()
	if a.closed {
		return nil, nil, errors.New("the agent is shut down")
	}
	if a.turn.busy {
		return nil, nil, errors.New("a turn is already running; wait for it to end or cancel it")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.turn.busy, a.turn.cancel, a.turn.done = true, cancel, done
	a.told.status.Busy = true
	var once sync.Once
	end := func() {
		once.Do(func() {
			cancel()
			a.mu.Lock()
			a.turn.busy, a.turn.cancel = false, nil
			// A status published meanwhile by another goroutine (discovery)
			// may still say busy; the claim's end is what counts.
			a.told.status.Busy = false
			close(done)
			a.mu.Unlock()
		})
	}
	return ctx, end, nil
}

// Cancel stops the running turn.
func (a *Agent) Cancel() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.turn.cancel == nil {
		return false
	}
	a.turn.cancel()
	return true
}

// HasTurns reports whether the session has a turn.
func (a *Agent) HasTurns() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turn.count > 0
}
