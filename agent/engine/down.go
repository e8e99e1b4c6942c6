package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// An engine that stops answering — restarted for another model, killed for
// its memory, a laptop waking — is usually back within a minute or two. A
// completion therefore waits for it instead of failing the turn:
// connection refused, a connection reset or closed before the response,
// and HTTP 502, 503 (other than "Loading model", waited for apart) and 504
// are asked again, 500ms doubling up to 5s apart, for at most
// Config.DownWait, from the request that was being sent. The wait is said
// once — a log line when it starts and one when it ends — and through the
// down hook (llm.DownWatcher), which the agent turns into its status; not
// once per try. A cancel ends it at once. Discovery (Info) does not wait:
// the agent asks it again in the background until the engine answers.

// DefaultDownWait bounds the wait for an engine that does not answer.
const DefaultDownWait = 2 * time.Minute

// downPoll bounds the pause between two tries of an engine that is down.
const downPoll = 5 * time.Second

var (
	_ llm.DownWatcher = (*Client)(nil)
	_ llm.Prober      = (*Client)(nil)
)

// WatchDown sets the function told when a request starts (true) and stops
// (false) waiting for the engine; see llm.DownWatcher.
func (c *Client) WatchDown(f func(down bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onDown = f
}

// engineDown reports whether err says the engine is not answering: it
// could not be reached, the connection broke before a whole response, or
// it (or a proxy before it) answered 502, 503 (not loading) or 504.
func engineDown(err error) bool {
	var (
		u    *llm.UnreachableError
		lost *connectionLostError
		a    *APIError
		s    *statusError
	)
	status := 0
	switch {
	case errors.As(err, &u), errors.As(err, &lost):
		return true
	case errors.As(err, &a):
		status = a.Status
	case errors.As(err, &s):
		status = s.status
	}
	switch status {
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	case http.StatusServiceUnavailable:
		return !isLoading(err)
	}
	return false
}

// setDown records whether a request waits for the engine, tells the hook
// and logs the change; err is why it went down.
func (c *Client) setDown(down bool, err error) {
	c.mu.Lock()
	f, was := c.onDown, c.down
	c.down = down
	if down {
		// The engine that comes back may serve another model or window:
		// the next Info asks it again.
		c.again = c.info != nil || c.again
	}
	c.mu.Unlock()
	if was == down {
		return
	}
	if down {
		c.logf("engine: %s: engine unreachable, retrying for up to %s (%v)", c.displayURL, c.cfg.DownWait.Round(time.Second), err)
	} else {
		c.logf("engine: %s: the wait for the engine is over", c.displayURL)
	}
	if f != nil {
		f(down)
	}
}

// whileDown runs op until it returns something other than an engine that
// is down (engineDown), waiting between tries for at most the configured
// DownWait; a negative DownWait runs op once.
func (c *Client) whileDown(ctx context.Context, op func() error) error {
	wait, waited := 500*time.Millisecond, time.Duration(0)
	for {
		err := op()
		if err == nil || c.cfg.DownWait < 0 || !engineDown(err) || ctx.Err() != nil {
			c.setDown(false, nil)
			return err
		}
		c.setDown(true, err)
		if waited >= c.cfg.DownWait {
			c.setDown(false, nil)
			return fmt.Errorf("%w (no answer for %s)", err, c.cfg.DownWait.Round(time.Second))
		}
		if err := c.sleep(ctx, wait); err != nil {
			c.setDown(false, nil)
			return err
		}
		waited += wait
		wait = min(2*wait, downPoll)
	}
}

// Probe asks the engine whether it answers, whatever is cached: one GET of
// the models list (every OpenAI-compatible engine has it). Any answer
// counts, a refusal of the API key or a 404 included, except those of an
// engine that is down (502, 503 other than loading, 504), and a connection
// dropped before any answer (something on the port that is not the engine
// yet). See llm.Prober.
func (c *Client) Probe(ctx context.Context) error {
	_, err := c.get(ctx, c.baseURL+"/models")
	if err == nil || !engineDown(err) && !isConnectionLost(err) {
		return nil
	}
	c.mu.Lock()
	c.again = c.info != nil || c.again
	c.mu.Unlock()
	var u *llm.UnreachableError
	if errors.As(err, &u) {
		return c.red.error(err)
	}
	return c.red.error(&llm.UnreachableError{URL: c.displayURL, Hint: c.unreachableHint(), Err: err})
}

// deltaOut passes a reply's streamed text on, and takes it back (a Retract
// delta) when the attempt that streamed it is abandoned for another, so
// that no broken text stays in the transcript.
type deltaOut struct {
	f    func(llm.Delta)
	sent int // deltas passed on since the last retract
}

// send passes d on.
func (o *deltaOut) send(d llm.Delta) {
	if o.f != nil {
		o.f(d)
		o.sent++
	}
}

// retract voids what was sent, if anything was.
func (o *deltaOut) retract() {
	if o.f != nil && o.sent > 0 {
		o.f(llm.Delta{Retract: true})
		o.sent = 0
	}
}
