package ctxwin

// Divergence is how a request relates to the one before it, for the
// prefix-cache debug line (docs/design.md §3.11).
type Divergence struct {
	// Append is true when the request starts with every message of the
	// previous one, byte for byte.
	Append bool
	// Index is the first message that differs (when not an append).
	Index int
}

// Diverge compares a request with the previous one.
func Diverge(prev, next []Message) Divergence {
	n := min(len(prev), len(next))
	for i := 0; i < n; i++ {
		if !prev[i].Equal(next[i]) {
			return Divergence{Index: i}
		}
	}
	if len(next) < len(prev) {
		return Divergence{Index: n}
	}
	return Divergence{Append: true, Index: len(prev)}
}

// Replaced is the request a shrink replaced, rebuilt from the requests
// around it: prev, the last request sent before the shrink; reply, the
// model's answer to it; next, the first request after it. A shrink never
// touches the newest item (the round reply opened, or a turn's prompt), and
// what follows that item is the shrink's own, so the request the shrink
// replaced is prev, the reply, and the newest item of next.
func Replaced(prev []Message, reply Message, next []Message) []Message {
	start, end := NewestItem(next)
	out := append(prev[:len(prev):len(prev)], next[start:end]...)
	if start < end && next[start].Role == RoleUser {
		// A turn's prompt: the reply that ended the last turn goes before it.
		out = append(prev[:len(prev):len(prev)], reply)
		out = append(out, next[start:end]...)
	}
	return out
}

// NewestItem locates the newest item in a rendered request: msgs[start:end]
// is the newest round (its reply and results) or the prompt of a new turn;
// what a shrink appended after it (the note round's prompt and note, the
// event's message) is left out.
func NewestItem(msgs []Message) (start, end int) {
	end = len(msgs)
	if end > 0 && IsAside(msgs[end-1]) && msgs[end-1].Content != NotePrompt {
		end--
	}
	if end > 1 && msgs[end-1].Role == RoleAssistant && msgs[end-2].Role == RoleUser && msgs[end-2].Content == NotePrompt {
		end -= 2
	}
	if end > 0 && msgs[end-1].Role == RoleUser {
		return end - 1, end
	}
	for i := end - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return i, end
		}
	}
	return end, end
}
