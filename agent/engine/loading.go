package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// While llama-server loads its model it answers every route, /health
// included, with HTTP 503 {"error":{"message":"Loading model","type":
// "unavailable_error","code":503}}. A model of tens of gigabytes takes
// minutes to load, so the client waits for it — discovery and completions
// alike — instead of failing or retrying a bounded few times, and says so:
// a log line, and the loading hook (llm.LoadWatcher) that the agent turns
// into its status.

// DefaultLoadWait bounds the wait for an engine that is loading its model.
const DefaultLoadWait = 15 * time.Minute

// loadPoll bounds the pause between two looks at a loading engine.
const loadPoll = 5 * time.Second

var _ llm.LoadWatcher = (*Client)(nil)

// WatchLoading sets the function told when the engine starts (true) and
// stops (false) loading its model; see llm.LoadWatcher.
func (c *Client) WatchLoading(f func(loading bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onLoading = f
}

func (c *Client) setLoading(loading bool) {
	c.mu.Lock()
	f, was := c.onLoading, c.loading
	c.loading = loading
	c.mu.Unlock()
	if was == loading {
		return
	}
	if loading {
		c.logf("engine: %s is loading its model (HTTP 503 Loading model); waiting for it", c.displayURL)
	} else {
		c.logf("engine: %s has loaded its model", c.displayURL)
	}
	if f != nil {
		f(loading)
	}
}

// isLoading reports whether err is an engine's 503 that says it is loading
// its model.
func isLoading(err error) bool {
	status, msg := 0, ""
	var a *APIError
	var s *statusError
	switch {
	case errors.As(err, &a):
		status, msg = a.Status, a.Message
	case errors.As(err, &s):
		status, msg = s.status, s.body
	default:
		return false
	}
	return status == http.StatusServiceUnavailable && strings.Contains(strings.ToLower(msg), "loading")
}

// whileLoading runs op until it returns something other than the engine's
// "Loading model", waiting between tries (500ms, doubling up to 5s) for at
// most the configured LoadWait.
func (c *Client) whileLoading(ctx context.Context, op func() error) error {
	wait, waited := 500*time.Millisecond, time.Duration(0)
	for {
		err := op()
		if !isLoading(err) {
			c.setLoading(false)
			return err
		}
		c.setLoading(true)
		if waited >= c.cfg.LoadWait {
			c.setLoading(false)
			return fmt.Errorf("%s was still loading its model after %s: %w", c.displayURL, c.cfg.LoadWait.Round(time.Second), err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			c.setLoading(false)
			return err
		}
		waited += wait
		wait = min(2*wait, loadPoll)
	}
}
