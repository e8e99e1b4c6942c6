package engine

import (
	"context"
	"encoding/json"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// A llama-server with several slots (-np) keeps one cached prompt in each.
// The server gives a request the idle slot whose prompt it resembles most,
// else the one used least recently, so the session's requests keep to the
// slot holding its prefix. A subagent's prompt resembles nothing the
// session sent; so that it never lands on the session's slot, its requests
// are pinned (id_slot) to the server's last slot. The session is not
// pinned: the server's choice keeps it on its own slot, and other clients
// of the server keep theirs. With one slot there is nothing to choose, and
// the server's host-memory prompt cache (--cache-ram) brings the session's
// prompt back after a subagent.

// subagentSlot is the id_slot for a subagent's request, and whether to
// send one: on llama.cpp with at least two slots.
func (c *Client) subagentSlot(ctx context.Context, info llm.ModelInfo) (int, bool) {
	if info.Engine != EngineLlamaCpp {
		return 0, false
	}
	n := c.slotCount(ctx)
	if n < 2 {
		return 0, false
	}
	return n - 1, true
}

// slotCount is llama-server's number of slots, asked once: /props
// total_slots, else the length of /slots; 0 when neither answers.
func (c *Client) slotCount(ctx context.Context) int {
	c.mu.Lock()
	n, known := c.slots, c.slotsKnown
	c.mu.Unlock()
	if known {
		return n
	}
	n, where := 0, ""
	if b, err := c.get(ctx, c.rootURL+"/props"); err == nil {
		if m, ok := parseTotalSlots(b); ok {
			n, where = m, "GET /props total_slots"
		}
	}
	if n == 0 {
		if b, err := c.get(ctx, c.rootURL+"/slots"); err == nil {
			var slots []json.RawMessage
			if json.Unmarshal(b, &slots) == nil && len(slots) > 0 {
				n, where = len(slots), "GET /slots"
			}
		}
	}
	if ctx.Err() != nil {
		return n // ask again next time
	}
	switch {
	case n >= 2:
		c.logf("engine: the server has %d slots (%s); subagents use slot %d, so the session's cached prompt stays in its own", n, where, n-1)
	case n == 1:
		c.logf("engine: the server has one slot (%s); after a subagent its prompt cache (--cache-ram) restores the session's prompt", where)
	default:
		c.logf("engine: the server's slots are unknown (GET /props and /slots said nothing); subagents share the session's slot")
	}
	c.mu.Lock()
	c.slots, c.slotsKnown = n, true
	c.mu.Unlock()
	return n
}

// parseTotalSlots reads llama.cpp's /props total_slots.
func parseTotalSlots(body []byte) (int, bool) {
	var p struct {
		TotalSlots optInt `json:"total_slots"`
	}
	if !lenient(body, &p) {
		return 0, false
	}
	return p.TotalSlots.pos()
}
