package engine

import (
	"context"
	"fmt"
	"time"
)

// Retry bounds retries. The zero value means the defaults.
type Retry struct {
	// Attempts is the most requests made for one call, the first included;
	// 0 means 3.
	Attempts int
	// Base is the first wait, doubled on each retry; 0 means 500ms.
	Base time.Duration
	// Max caps one wait. A Retry-After longer than Max ends the retries.
	// 0 means 30s.
	Max time.Duration
}

// retry runs op until it succeeds, fails for good, or the attempts run
// out. Each attempt gets a fresh capture.
func (c *Client) retry(ctx context.Context, op func(context.Context, *capture) error) error {
	r := c.cfg.Retry
	for attempt := 1; ; attempt++ {
		cp := &capture{}
		err := op(withCapture(ctx, cp), cp)
		if err == nil {
			return nil
		}
		if c.cfg.DownWait >= 0 && engineDown(err) {
			return err // waited for by whileDown, which says it once
		}
		again, after := retryableError(err)
		if !again || attempt >= r.Attempts {
			return err
		}
		wait := r.Base << (attempt - 1)
		if after > 0 {
			if after > r.Max {
				return fmt.Errorf("%w (the engine asks to wait %s; not retrying)", err, after.Round(time.Second))
			}
			wait = after
		}
		wait = min(wait, r.Max)
		c.logf("engine: %v; retrying in %s (attempt %d of %d)", err, wait, attempt+1, r.Attempts)
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// sleepCtx waits d, or until ctx ends (then it returns ctx.Err()).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
