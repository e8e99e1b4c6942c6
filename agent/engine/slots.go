package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// One slot per session. llama-server runs several slots (4 unless -np
// says otherwise), each keeping one cached prompt. A request that names no
// slot goes to the idle slot whose cached prompt shares the largest
// fraction of it, when that is at least --slot-prompt-similarity (0.1),
// else to the least recently used one; after a shed or fold on a large
// window a session's request shares less than a tenth with its own slot
// and lands on another, reusing nothing. So on llama.cpp with two slots or
// more every request names its slot (id_slot):
//
//   - The session (a Client's own requests) takes one slot at its first
//     request and keeps it: the lowest-numbered slot that no other
//     reika-lsp process holds, idle ones (GET /slots is_processing) first.
//     A slot is held by an exclusive lock on the file slot-N.lock in a
//     directory per server URL under the cache directory
//     (<cacheDir>/slots/<host_port>-<hash>/); the file also names the
//     holder's pid. The lock goes with the process, so a crashed window's
//     slot is free again and the pid it left is ignored.
//   - When every slot is held, the session shares one (its pid modulo the
//     slots) and the log says so and with whom: each of the two then
//     evicts the other's prompt, which the host-memory prompt cache
//     (--cache-ram) may restore.
//   - A subagent takes, for each request, a slot no one holds, other than
//     the session's (the one it used last first, else the highest free),
//     holding it while the request runs; when there is none it shares the
//     session's slot, whose prompt the host-memory cache restores after it.
//
// Engines other than llama.cpp, and a llama-server with one slot or whose
// slots are unknown, are sent no id_slot.

// slotPin is the slot the Client's session holds.
type slotPin struct {
	mu      sync.Mutex
	claimed bool
	session int
	shared  bool
	file    *os.File // the lock of the session's slot; nil when shared
	sub     int      // the slot the last subagent request used; -1 none
	// other says another task ran since the session's last request (a
	// subagent's; or the session's last request could not follow its
	// prompt to the slot that served it).
	other bool
	// lastTask is the newest task on the server after the session's last
	// request (GET /slots id_task); -1 unknown.
	lastTask int
}

// sessionSlot is the id_slot of the session's requests, and whether to
// send one.
func (c *Client) sessionSlot(ctx context.Context, info llm.ModelInfo) (int, bool) {
	if info.Engine != EngineLlamaCpp {
		return 0, false
	}
	n := c.slotCount(ctx)
	if n < 2 {
		return 0, false
	}
	p := &c.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.claimed {
		c.claimSession(ctx, n)
	}
	return p.session, true
}

// sessionRequest is the id_slot of a session's request, whether to send
// one, and what to call when it is done. A request after another task ran
// on the server (a subagent's, another window's: GET /slots shows a newer
// task than the session's last) names no slot: where the slots share one
// KV cache (llama-server's default, -kvu) that task saved the session's
// slot to host memory and cleared it, and a request naming an empty slot
// is not restored from there (0.7.0), while one that names none is. When
// it is done, the session's pin follows it to the slot that served it
// (the idle slot of the newest task), unless another window holds that
// one; then the next request names none again.
func (c *Client) sessionRequest(ctx context.Context, info llm.ModelInfo) (int, bool, func()) {
	slot, ok := c.sessionSlot(ctx, info)
	if !ok {
		return 0, false, func() {}
	}
	p := &c.pin
	p.mu.Lock()
	other, last := p.other, p.lastTask
	p.mu.Unlock()
	if !other && last >= 0 {
		if _, newest, ok := c.newestTask(ctx); ok && newest != last {
			other = true
		}
	}
	after := func() { c.afterSession(context.WithoutCancel(ctx), other) }
	if other {
		return 0, false, after
	}
	return slot, true, after
}

// afterSession notes the newest task on the server (the session's request
// just served) and, when the request named no slot, moves the session's
// pin to the slot that served it.
func (c *Client) afterSession(ctx context.Context, follow bool) {
	at, task, ok := c.newestTask(ctx)
	p := &c.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastTask = -1
	if !ok {
		return
	}
	p.lastTask = task
	if !follow {
		return
	}
	p.other = false
	if at == p.session || p.shared {
		return
	}
	dir, err := c.slotDir()
	if err != nil {
		return
	}
	f, ok := lockSlot(dir, at)
	if !ok {
		p.other = true // another window's slot: name none next time too
		return
	}
	if p.file != nil {
		p.file.Close()
	}
	p.session, p.file = at, f
	runtime.AddCleanup(c, func(f *os.File) { f.Close() }, f)
	c.logf("engine: after another task, the server served the session's request from slot %d; its requests go there now", at)
}

// newestTask is the idle slot of the newest task GET /slots shows, and
// that task's id; false when /slots does not say.
func (c *Client) newestTask(ctx context.Context) (slot, task int, ok bool) {
	b, err := c.get(ctx, c.rootURL+"/slots")
	if err != nil {
		return 0, 0, false
	}
	var slots []struct {
		ID           *int `json:"id"`
		Task         *int `json:"id_task"`
		IsProcessing bool `json:"is_processing"`
	}
	if json.Unmarshal(b, &slots) != nil {
		return 0, 0, false
	}
	slot, task = -1, -1
	for _, s := range slots {
		if s.ID != nil && s.Task != nil && !s.IsProcessing && *s.Task > task {
			slot, task = *s.ID, *s.Task
		}
	}
	return slot, task, slot >= 0
}

// subagentSlot is the id_slot for a subagent's request, whether to send
// one, and what to call when the request is done (it frees the slot).
func (c *Client) subagentSlot(ctx context.Context, info llm.ModelInfo) (int, bool, func()) {
	session, ok := c.sessionSlot(ctx, info)
	if !ok {
		return 0, false, func() {}
	}
	n := c.slotCount(ctx)
	p := &c.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	p.other = true
	dir, err := c.slotDir()
	var order []int
	if p.sub >= 0 && p.sub != session {
		order = append(order, p.sub)
	}
	for i := n - 1; i >= 0; i-- {
		if i != session && i != p.sub {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if err != nil {
			break
		}
		if f, ok := lockSlot(dir, i); ok {
			if p.sub != i {
				c.logf("engine: subagent requests go to slot %d (the session's is %d)", i, session)
			}
			p.sub = i
			return i, true, func() { f.Close() }
		}
	}
	if p.sub != session {
		c.logf("engine: every other slot is held, so subagent requests share the session's slot %d; after them the host-memory prompt cache (--cache-ram) restores the session's prompt", session)
		p.sub = session
	}
	return session, true, func() {}
}

// claimSession takes the session's slot: the lowest free one, idle ones
// first, else a shared one. Called with p.mu held.
func (c *Client) claimSession(ctx context.Context, n int) {
	p := &c.pin
	p.claimed = true
	idle := c.idleSlots(ctx, n)
	order := make([]int, 0, n)
	for pass := range 2 {
		for i := range n {
			if idle[i] == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	dir, err := c.slotDir()
	if err != nil {
		p.session = order[0]
		c.logf("engine: this session's requests go to slot %d of %d; other windows on this server are not known (%v)", p.session, n, err)
		return
	}
	for _, i := range order {
		if f, ok := lockSlot(dir, i); ok {
			p.session, p.file = i, f
			runtime.AddCleanup(c, func(f *os.File) { f.Close() }, f)
			c.logf("engine: this session's requests go to slot %d of %d (id_slot), so its cached prompt stays there", i, n)
			return
		}
	}
	p.session, p.shared = os.Getpid()%n, true
	c.logf("engine: all %d slots of %s are held by other reika-lsp sessions (%s); this session shares slot %d, so each evicts the other's cached prompt (start llama-server with more slots, -np, to give each its own)",
		n, c.displayURL, holders(dir, n), p.session)
}

// Close frees the session's slot for other windows. The Client stays
// usable; its next request takes a slot again.
func (c *Client) Close() error {
	p := &c.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file != nil {
		p.file.Close()
	}
	p.claimed, p.file, p.shared, p.sub, p.other, p.lastTask = false, nil, false, -1, false, -1
	return nil
}

// slotDir is the directory of the slot locks of this server, made when
// missing.
func (c *Client) slotDir() (string, error) {
	sum := sha256.Sum256([]byte(c.rootURL))
	host := strings.NewReplacer(":", "_", "[", "", "]", "").Replace(c.base.Host)
	dir := filepath.Join(c.cfg.CacheDir, "slots", host+"-"+hex.EncodeToString(sum[:4]))
	return dir, os.MkdirAll(dir, 0o755)
}

// lockSlot takes slot i's lock and writes this process's pid into it.
func lockSlot(dir string, i int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, "slot-"+strconv.Itoa(i)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if ok, err := tryLock(f); !ok || err != nil {
		f.Close()
		return nil, false
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, true
}

// holders says which pids hold the slots, as their lock files name them.
func holders(dir string, n int) string {
	var out []string
	for i := range n {
		b, _ := os.ReadFile(filepath.Join(dir, "slot-"+strconv.Itoa(i)+".lock"))
		if pid := strings.TrimSpace(string(b)); pid != "" {
			out = append(out, fmt.Sprintf("slot %d: pid %s", i, pid))
		}
	}
	return strings.Join(out, ", ")
}

// idleSlots says which of the n slots GET /slots reports idle; every slot
// counts as idle when /slots does not answer (--no-slots).
func (c *Client) idleSlots(ctx context.Context, n int) []bool {
	idle := make([]bool, n)
	for i := range idle {
		idle[i] = true
	}
	b, err := c.get(ctx, c.rootURL+"/slots")
	if err != nil {
		return idle
	}
	var slots []struct {
		ID           *int `json:"id"`
		IsProcessing bool `json:"is_processing"`
	}
	if json.Unmarshal(b, &slots) != nil {
		return idle
	}
	for _, s := range slots {
		if s.ID != nil && *s.ID >= 0 && *s.ID < n {
			idle[*s.ID] = !s.IsProcessing
		}
	}
	if !slices.Contains(idle, true) {
		for i := range idle {
			idle[i] = true
		}
	}
	return idle
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
	c.noteSlots(n, where)
	return n
}

// noteSlots records and logs the server's slot count, once.
func (c *Client) noteSlots(n int, where string) {
	c.mu.Lock()
	known := c.slotsKnown
	c.slots, c.slotsKnown = n, true
	c.mu.Unlock()
	if known {
		return
	}
	switch {
	case n >= 2:
		c.logf("engine: the server has %d slots (%s); each session's requests name one (id_slot), subagents another", n, where)
	case n == 1:
		c.logf("engine: the server has one slot (%s); subagents share it, and its prompt cache (--cache-ram) restores the session's prompt after them", where)
	default:
		c.logf("engine: the server's slots are unknown (GET /props and /slots said nothing); requests name no slot")
	}
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
