package ctxwin

// Result kinds: the shape of a tool result decides what a shed keeps.
const (
	KindRead     = "read"
	KindWrite    = "write"
	KindEdit     = "edit" // a unified diff
	KindBash     = "bash"
	KindGrep     = "grep"
	KindGlob     = "glob"
	KindFetch    = "fetch_url"
	KindSubagent = "subagent"
)

// Result is one tool result in the history. Text is never changed: the
// transcript and reika.save keep it whole. What the model sees is Shown().
type Result struct {
	CallID  string `json:"callId"`
	Tool    string `json:"tool"`
	Kind    string `json:"kind,omitempty"`
	Text    string `json:"text"`
	IsError bool   `json:"isError,omitempty"`
	// Summary is the one line the result collapses to when shed.
	Summary string `json:"summary,omitempty"`
	// Path, StartLine, EndLine and TotalLines describe a read, write or edit.
	Path       string `json:"path,omitempty"`
	StartLine  int    `json:"startLine,omitempty"`
	EndLine    int    `json:"endLine,omitempty"`
	TotalLines int    `json:"totalLines,omitempty"`
	// SavedTo is the temp file holding the whole output of a long result.
	SavedTo string `json:"savedTo,omitempty"`
	// URL is the page a fetch fetched; Query the pattern a grep or glob ran.
	URL   string `json:"url,omitempty"`
	Query string `json:"query,omitempty"`
	// Task marks the payload that defined the task: it is never shed, and
	// goes first when a round's results share the room.
	Task bool `json:"task,omitempty"`

	// Cut and Shed say what happened to the result; View is then what the
	// model sees instead of Text. Entry is what the message of the event
	// that shed it says of it (event.go).
	Cut   bool   `json:"cut,omitempty"`
	Shed  bool   `json:"shed,omitempty"`
	View  string `json:"view,omitempty"`
	Entry string `json:"entry,omitempty"`

	// Source is the file a read read, kept in memory for its outline.
	Source []byte `json:"-"`
}

// message is the result's tool message as the model sees it.
func (r *Result) message() Message {
	return Message{Role: RoleTool, ToolCallID: r.CallID, Content: r.Shown()}
}

// Shown is the result as the model sees it.
func (r *Result) Shown() string {
	if r.Cut || r.Shed {
		return r.View
	}
	return r.Text
}

// Item is one unit of the conversation: a turn's prompt, or a round (one
// model reply with the results of its tool calls). A round is never split:
// a tool call and its result stay together.
type Item struct {
	Turn  int `json:"turn"`
	Round int `json:"round,omitempty"` // global round number; 0 for a prompt
	// Prompt is the user's message that opens a turn (prompt items).
	Prompt string `json:"prompt,omitempty"`
	// Assistant is the model's reply (round items).
	Assistant Message   `json:"assistant,omitzero"`
	Results   []*Result `json:"results,omitempty"`
	// Notice is a context notice rendered after the item: the shed notice
	// of session logs written before events appended their message (After).
	Notice string `json:"notice,omitempty"`
	// ReasoningShed drops the reply's reasoning from what the model sees.
	ReasoningShed bool `json:"reasoningShed,omitempty"`
	// Calls, when set, are the reply's tool calls as the model sees them
	// (long string arguments cut short inside the string); Assistant keeps
	// the originals.
	Calls []ToolCall `json:"calls,omitempty"`
	// Pinned is the turn for which a fold passed over the item and left it
	// in view, 0 for none: the prompt of the turn in progress, a round
	// holding a result that defines its task, or an item just before them
	// that keeps what stays between deletions long enough for the engine to
	// reuse (fold.go). Later folds of that turn leave it in view too.
	Pinned int `json:"pinned,omitempty"`
	// After is the message a shrink event appended after this item, the
	// newest when it happened (event.go). It stays in view when a shed
	// takes the item out of view (Dropped), until a fold absorbs it.
	After *Aside `json:"after,omitempty"`
	// Dropped says a shed took the round out of view whole: all its
	// results were shed.
	Dropped bool `json:"dropped,omitempty"`
}

// IsRound reports whether the item is a round rather than a prompt.
func (it *Item) IsRound() bool { return it.Round > 0 }

// messages renders the item.
func (it *Item) messages(dst []Message) []Message {
	if !it.IsRound() {
		dst = append(dst, Message{Role: RoleUser, Content: it.Prompt})
	} else {
		a := it.Assistant
		a.Role = RoleAssistant
		if it.ReasoningShed {
			a.Reasoning = ""
		}
		if it.Calls != nil {
			a.ToolCalls = it.Calls
		}
		dst = append(dst, a)
		for _, r := range it.Results {
			dst = append(dst, r.message())
		}
	}
	return it.asides(dst)
}

// asides renders what events appended after the item.
func (it *Item) asides(dst []Message) []Message {
	if it.Notice != "" {
		dst = append(dst, Message{Role: RoleUser, Content: it.Notice})
	}
	if it.After != nil {
		dst = it.After.messages(dst)
	}
	return dst
}

// shows reports whether the request shows something of item i: the item,
// or, for a round sheds took out of view, what events appended after it.
func (h *History) shows(i int) bool {
	return h.InView(i) || i >= h.Folded && h.Items[i].Dropped
}

// InView reports whether item i is rendered: not folded nor dropped, or
// pinned.
func (h *History) InView(i int) bool {
	it := h.Items[i]
	return i >= h.Folded && !it.Dropped || it.Pinned > 0
}

// History is the conversation as the model sees it: the fixed prefix, the
// recap of folded items, and the items since. It renders the next request
// and keeps the rendering append-only between shrink events: work on the
// append path is in proportion to what is appended. Not safe for concurrent
// use.
type History struct {
	// System is the system message: system prompt and bootstrap context.
	System string `json:"system"`
	// Tools are the tool definitions; fixed for the session.
	Tools []ToolSpec `json:"tools"`
	Items []*Item    `json:"items"`
	// Folded is how many leading items folds have taken out of view (but
	// the pinned ones); Recap is the newest fold's recap, which the message
	// of its event carries. RecapFirst renders it right after the system
	// message instead, as session logs written before events appended
	// their message have it.
	Folded     int    `json:"folded,omitempty"`
	Recap      *Recap `json:"recap,omitempty"`
	RecapFirst bool   `json:"recapFirst,omitempty"`
	// Events counts the events that appended a message; the next one's
	// message opens with contextMark(Events+1).
	Events int `json:"events,omitempty"`

	// The rendering cache. msgs holds the system message, the recap, the
	// messages of Items[Folded:frozen] and, from tailStart on (when
	// tailStart > 0), the last rendering of Items[frozen]. owner maps each
	// message to its item (-1 system, -2 recap); hashes, chars, carried and
	// tokens hold its hash, its size, whether a sent request carried it,
	// and what the engine counted for it (-1: nothing). sumChars sums every
	// message's size; the messages with a count are summed apart
	// (sumCounted tokens, sumCountedChars bytes), and of the others
	// sumCarried sums the carried bytes and uncounted counts them. Slices
	// returned by Messages share msgs, so slots once returned are never
	// overwritten.
	msgs            []Message
	owner           []int
	hashes          []uint64
	chars           []int
	carried         []bool
	tokens          []int
	sumChars        int
	sumCarried      int
	sumCounted      int
	sumCountedChars int
	uncounted       int
	frozen          int
	tailStart       int
	valid           bool
	// Every cached message before sentUpTo is carried.
	sentUpTo int
	// unsettled lists, in order, the cached messages whose cost the engine
	// has not settled (count.go): the only ones its next report changes.
	unsettled []int
	// sentTools says a request carried the tool definitions.
	sentTools bool
	// est decides which messages earlier requests carried.
	est *Estimator
}

// NewHistory starts a history with its fixed prefix.
func NewHistory(system string, tools []ToolSpec) *History {
	return &History{System: system, Tools: tools}
}

// Turns is the number of the last turn, 0 before the first.
func (h *History) Turns() int {
	if len(h.Items) == 0 {
		return 0
	}
	return h.Items[len(h.Items)-1].Turn
}

// Rounds is the number of the last round, 0 before the first.
func (h *History) Rounds() int {
	for i := len(h.Items) - 1; i >= 0; i-- {
		if h.Items[i].IsRound() {
			return h.Items[i].Round
		}
	}
	return h.foldedRounds()
}

func (h *History) foldedRounds() int {
	if h.Recap != nil {
		return h.Recap.LastRound
	}
	return 0
}

// Last is the newest item, nil when there is none.
func (h *History) Last() *Item {
	if len(h.Items) == 0 {
		return nil
	}
	return h.Items[len(h.Items)-1]
}

// StartTurn opens a turn with the user's prompt.
func (h *History) StartTurn(prompt string) *Item {
	it := &Item{Turn: h.Turns() + 1, Prompt: prompt}
	h.add(it)
	return it
}

// AddRound appends the model's reply as a new round of the current turn.
func (h *History) AddRound(reply Message) *Item {
	turn := max(h.Turns(), 1)
	reply.Role = RoleAssistant
	it := &Item{Turn: turn, Round: h.Rounds() + 1, Assistant: reply}
	h.add(it)
	return it
}

// AddResult appends a tool result to the newest round.
func (h *History) AddResult(r *Result) {
	last := h.Last()
	if last == nil || !last.IsRound() {
		panic("ctxwin: AddResult without a round")
	}
	last.Results = append(last.Results, r)
}

// add appends an item. The previous newest item can no longer change on
// the append path, so its messages join the cache.
func (h *History) add(it *Item) {
	h.Items = append(h.Items, it)
	if !h.valid || h.frozen != len(h.Items)-2 {
		h.invalidate()
		return
	}
	h.renderTail()
	h.frozen++
	h.tailStart = 0
}

// push appends one message of item owner to the cache.
func (h *History) push(m Message, owner int) {
	hash := m.hash()
	n := m.Chars()
	c := h.est != nil && h.est.carried(hash)
	h.msgs = append(h.msgs, m)
	h.owner = append(h.owner, owner)
	h.hashes = append(h.hashes, hash)
	h.chars = append(h.chars, n)
	h.carried = append(h.carried, c)
	h.tokens = append(h.tokens, -1)
	h.sumChars += n
	h.setTokens(len(h.msgs)-1, h.est.countOf(hash), +1)
	if !h.est.settled(hash) {
		h.unsettled = append(h.unsettled, len(h.msgs)-1)
	}
}

// setTokens accounts message i with a count of t tokens (-1: none) into
// the sums (sign +1), or takes it out of them (sign -1).
func (h *History) setTokens(i, t, sign int) {
	if sign > 0 {
		h.tokens[i] = t
	}
	switch {
	case h.tokens[i] >= 0:
		h.sumCounted += sign * h.tokens[i]
		h.sumCountedChars += sign * h.chars[i]
	case h.carried[i]:
		h.sumCarried += sign * h.chars[i]
		h.uncounted += sign
	default:
		h.uncounted += sign
	}
}

// recount takes up what the engine counted since the messages were
// cached. Only unsettled messages can have changed.
func (h *History) recount() {
	if !h.valid {
		return
	}
	still := h.unsettled[:0]
	for _, i := range h.unsettled {
		hash := h.hashes[i]
		if t := h.est.countOf(hash); t != h.tokens[i] {
			h.setTokens(i, 0, -1)
			h.setTokens(i, t, +1)
		}
		if !h.est.settled(hash) {
			still = append(still, i)
		}
	}
	h.unsettled = still
}

// renderTail renders Items[frozen] at the end of the cache, reusing the
// previous rendering when it has not changed.
func (h *History) renderTail() {
	fresh := h.Items[h.frozen].messages(nil)
	if h.tailStart > 0 {
		if sameMessages(h.msgs[h.tailStart:], fresh) {
			return
		}
		// Move to a new array rather than overwrite returned slots.
		n := h.tailStart
		for i := n; i < len(h.msgs); i++ {
			h.sumChars -= h.chars[i]
			h.setTokens(i, 0, -1)
		}
		msgs := make([]Message, n, max(2*n, 16))
		copy(msgs, h.msgs[:n])
		h.msgs = msgs
		h.owner = h.owner[:n]
		h.hashes = h.hashes[:n]
		h.chars = h.chars[:n]
		h.carried = h.carried[:n]
		h.tokens = h.tokens[:n]
		k := len(h.unsettled)
		for k > 0 && h.unsettled[k-1] >= n {
			k--
		}
		h.unsettled = h.unsettled[:k]
		h.sentUpTo = min(h.sentUpTo, n)
	}
	h.tailStart = len(h.msgs)
	for _, m := range fresh {
		h.push(m, h.frozen)
	}
}

// invalidate makes the next Messages render everything afresh; every
// change other than an append or a change to the newest item calls it.
func (h *History) invalidate() {
	h.valid = false
	h.msgs, h.owner, h.hashes, h.chars, h.carried, h.tokens, h.unsettled = nil, nil, nil, nil, nil, nil, nil
	h.sumChars, h.sumCarried, h.sumCounted, h.sumCountedChars, h.uncounted = 0, 0, 0, 0, 0
	h.tailStart, h.sentUpTo = 0, 0
}

// Messages renders the next request's messages. The result must not be
// modified; appending to it copies.
func (h *History) Messages() []Message {
	if !h.valid {
		h.rebuild()
	}
	if h.frozen < len(h.Items) {
		h.renderTail()
	}
	return h.msgs[:len(h.msgs):len(h.msgs)]
}

// rebuild renders the system message, the recap and every item but the
// newest into the cache.
func (h *History) rebuild() {
	n := 2*(len(h.Items)-h.Folded) + 2
	h.msgs = make([]Message, 0, n)
	h.owner = make([]int, 0, n)
	h.hashes = make([]uint64, 0, n)
	h.chars = make([]int, 0, n)
	h.carried = make([]bool, 0, n)
	h.tokens = make([]int, 0, n)
	h.unsettled = nil
	h.sumChars, h.sumCarried, h.sumCounted, h.sumCountedChars, h.uncounted = 0, 0, 0, 0, 0
	h.push(Message{Role: RoleSystem, Content: h.System}, -1)
	if h.RecapFirst && h.Recap != nil && h.Folded > 0 {
		h.push(Message{Role: RoleUser, Content: h.Recap.Text}, -2)
	}
	h.frozen = max(h.Folded, len(h.Items)-1)
	var buf []Message
	for i := 0; i < h.frozen; i++ {
		it := h.Items[i]
		switch {
		case h.InView(i):
			buf = it.messages(buf[:0])
		case it.Dropped && i >= h.Folded:
			buf = it.asides(buf[:0]) // what an event appended after it stays
		case it.After != nil && it.After.Head:
			buf = it.After.messages(buf[:0]) // the opening a fold kept
		default:
			continue
		}
		for _, m := range buf {
			h.push(m, i)
		}
	}
	h.valid = true
	h.tailStart, h.sentUpTo = 0, 0
}

// markSent records that a request carried every message now rendered.
// Only messages not yet known to be carried are hashed.
func (h *History) markSent() {
	h.sentTools = true
	if h.est == nil {
		return
	}
	for i := h.sentUpTo; i < len(h.msgs); i++ {
		if !h.carried[i] {
			h.est.mark(h.hashes[i])
			h.setTokens(i, 0, -1)
			h.carried[i] = true
			h.setTokens(i, h.tokens[i], +1)
		}
	}
	h.sentUpTo = len(h.msgs)
}

// Owner is the item index of message i of the last Messages, -1 for the
// system message and -2 for a recap rendered first (RecapFirst).
func (h *History) Owner(i int) int {
	if i < 0 || i >= len(h.owner) {
		return -3
	}
	return h.owner[i]
}

func sameMessages(a, b []Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Equal reports whether two messages have the same bytes.
func (m Message) Equal(o Message) bool {
	if m.Role != o.Role || m.Content != o.Content || m.Reasoning != o.Reasoning ||
		m.ToolCallID != o.ToolCallID || len(m.ToolCalls) != len(o.ToolCalls) {
		return false
	}
	for i := range m.ToolCalls {
		if m.ToolCalls[i] != o.ToolCalls[i] {
			return false
		}
	}
	return true
}
