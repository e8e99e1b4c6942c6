package ctxwin

// Keep what an event keeps reusable (event.go). llama.cpp's chunk scan
// reuses the text an event keeps after a deletion only in chunks of at
// least n_cache_reuse tokens, and its place in the new prompt moves on only
// at such a match: a run kept between two deletions that is shorter stops
// the reuse of everything after it. The steps here give up a deletion, or
// keep a reply whole, where one would leave such a run.

// minRun is the least the request keeps between two deletions, in
// tokens: llama.cpp reuses the text kept after a deletion only in chunks of
// at least n_cache_reuse tokens (64 in issue 14's measurements; reika asks
// for 8), so a shorter run between two deletions stops the reuse, and
// everything after it is processed again.
const minRun = 64

// openingReplyKeep is the most a reply right after a deletion a fold
// makes may grow, in tokens, by being kept whole rather than changed
// (dropShortOpenings, settleRuns).
const openingReplyKeep = 800

// guardRuns keeps whole each reply the shed step would cut right after a
// deletion (its reasoning, or a span of its arguments, the role header
// alone left between the two), unless that would leave the request above
// the usable window, where fitting comes before the engine's reuse.
func (d *draft) guardRuns() { d.guard(d.b.Usable) }

// settleRuns does the same for the runs a fold leaves, for replies that
// grow by at most openingReplyKeep tokens kept whole. The fold's
// deletions, the rounds it folds and the recap before, which it absorbs
// and which can sit among the rounds it keeps, can come right before a
// reply whose reasoning the shed step cut, and the engine then processes
// everything after them again (a bench figure: bench/README.md).
func (d *draft) settleRuns() {
	if d.ev.Fold != nil {
		d.guard(openingReplyKeep)
	}
}

// guard keeps whole the replies walkRuns finds cut too soon after a
// deletion, when each adds at most limit tokens and the request still
// fits, then takes back what that added: it sheds the reasoning of other
// replies the request keeps after a long enough run, oldest first (which
// costs the model nothing the answers cite, and the engine nothing: no
// run gets short), so the event leaves the request about as small as the
// shed step did and the next shrink comes no sooner. A reasoning shed
// there can leave a later cut reply short of its run, so it walks again,
// a few times at most.
func (d *draft) guard(limit int) {
	for range guardPasses {
		target := d.total
		kept := false
		d.walkRuns(func(i int) bool {
			gain := d.wholeGain(i)
			if gain > limit || d.total+gain > d.b.Usable {
				return false
			}
			d.keepReply(i)
			kept = true
			return true
		}, nil)
		if !kept {
			return
		}
		d.walkRuns(nil, func(i int) bool {
			if d.total <= target {
				return false
			}
			d.shed(unit{item: i, result: ShedReasoning})
			return true
		})
	}
}

// guardPasses bounds guard's walks.
const guardPasses = 3

// walkRuns walks the request as the draft leaves it, oldest item first,
// counting the tokens kept since the last deletion. It calls mend(i) for
// each reply the draft cuts (its reasoning, or a span of its arguments)
// with less than minRun tokens kept since the deletion before; mend
// reports whether the reply now stays whole. It calls cut(i), when set,
// for each reply the draft leaves whole, with reasoning, that has at
// least minRun tokens kept before it since a deletion and that the draft
// did not keep whole; cut reports whether the draft now sheds its reasoning.
func (d *draft) walkRuns(mend, cut func(i int) bool) {
	h := d.m.H
	e := &d.m.est
	w := runWalk{run: -1}
	for i := 0; i < len(h.Items)-1; i++ {
		it := h.Items[i]
		switch {
		case d.foldedNow(i):
			d.foldedRun(i, &w)
			continue
		case !h.InView(i):
			if h.shows(i) || it.After != nil && it.After.Head {
				d.asideRun(i, &w) // a round taken out of view before, or a kept opening
			}
			continue
		case d.dropped[i]:
			w.cut()
			d.asideRun(i, &w)
			continue
		case !it.IsRound():
			w.grow(e.MessageTokens(Message{Role: RoleUser, Content: it.Prompt}))
			d.asideRun(i, &w)
			continue
		}
		switch {
		case d.cutsReply(i):
			if !(mend != nil && w.run >= 0 && w.run < minRun && mend(i)) {
				w.cut()
			}
		case cut != nil && w.run >= minRun && !d.whole[i] && !it.ReasoningShed && it.Assistant.Reasoning != "" && cut(i):
			w.cut()
		}
		w.grow(d.assistant(i))
		for j, r := range it.Results {
			if d.shedNow[[2]int{i, j}] {
				w.grow(e.Tokens(len(firstLine(r.Shown()))+1+len(RoleTool), false) + e.overhead())
				w.cut()
				continue
			}
			w.grow(e.MessageTokens(r.message()))
		}
		d.asideRun(i, &w)
	}
}

// runWalk is walkRuns' count: the tokens kept since the last deletion, -1
// before the first.
type runWalk struct{ run int }

func (w *runWalk) grow(n int) {
	if w.run >= 0 {
		w.run += n
	}
}

func (w *runWalk) cut() { w.run = 0 }

// foldedRun walks item i, which the draft's fold takes out of view: all it
// showed is deleted, but the opening of its event's message when the fold
// keeps it (FoldChange.Marks), which then stands between two deletions,
// or after the deletion before when only the opening showed.
func (d *draft) foldedRun(i int, w *runWalk) {
	h := d.m.H
	it := h.Items[i]
	onlyHead := !h.shows(i) && it.After != nil && it.After.Head
	marked := contains(d.ev.Fold.Marks, i+1)
	switch {
	case marked && onlyHead:
		w.grow(d.m.openingTokens(it.After))
	case h.shows(i) || onlyHead:
		w.cut()
	}
}

// asideRun walks what events appended after item i, kept unless a fold
// absorbs it (the recap before, and notices of older logs).
func (d *draft) asideRun(i int, w *runWalk) {
	it := d.m.H.Items[i]
	folding := d.ev.Fold != nil
	if it.Notice != "" {
		if folding {
			w.cut()
		} else {
			w.grow(d.m.est.MessageTokens(Message{Role: RoleUser, Content: it.Notice}))
		}
	}
	switch {
	case it.After == nil:
	case folding && it.After.Recap:
		w.cut()
	default:
		for _, msg := range it.After.messages(nil) {
			w.grow(d.m.est.MessageTokens(msg))
		}
	}
}

// dropShortOpenings settles the openings the draft's fold keeps (foldMarks)
// that a reply follows whose reasoning or arguments the draft cuts (the
// first item the draft shows after the opening: rounds it takes out of
// view whole do not count, since nothing of them stays between): the
// opening would be a run between two deletions too short for the engine
// to reuse, and everything after it would be processed again. The reply
// stays whole when that adds at most openingReplyKeep tokens; otherwise
// the opening goes (better on the bench than dropping every such
// opening: bench/README.md). settleRuns then guards the runs the fold
// leaves elsewhere.
func (d *draft) dropShortOpenings() {
	f := d.ev.Fold
	if f == nil || len(f.Marks) == 0 {
		return
	}
	h := d.m.H
	kept := f.Marks[:0]
	for _, k := range f.Marks {
		next := d.nextShown(k)
		if next >= len(h.Items) || !h.Items[next].IsRound() || d.gone(next) {
			kept = append(kept, k)
			continue
		}
		if !d.cutsReply(next) {
			kept = append(kept, k)
			continue
		}
		if gain := d.wholeGain(next); gain <= openingReplyKeep && d.total+gain <= d.b.Usable {
			d.keepReply(next)
			kept = append(kept, k)
		}
	}
	f.Marks = kept
}

// gone reports whether the draft leaves item i out of view: folded,
// dropped whole now or before. The message an event appended after it
// may stay.
func (d *draft) gone(i int) bool {
	return d.foldedNow(i) || d.dropped[i] || !d.m.H.InView(i)
}

// nextShown is the first item from i on that the draft leaves something
// of in view: the item, or the message an event appended after it.
func (d *draft) nextShown(i int) int {
	h := d.m.H
	for i < len(h.Items) && d.gone(i) && (d.foldedNow(i) || h.Items[i].After == nil) {
		i++
	}
	return i
}

// cutsReply reports whether the draft deletes part of item i's reply: its
// reasoning, or a span of its arguments.
func (d *draft) cutsReply(i int) bool {
	s, ok := d.assistants[i]
	it := d.m.H.Items[i]
	return ok && (s.reasoningShed && !it.ReasoningShed || s.calls != nil && it.Calls == nil)
}

// wholeGain is what keeping item i's reply whole would add to the draft.
func (d *draft) wholeGain(i int) int {
	it := d.m.H.Items[i]
	return d.replyTokens(i, &replyState{reasoningShed: it.ReasoningShed, calls: it.Calls}) - d.assistant(i)
}

// keepReply gives up the draft's changes to item i's reply, for good: no
// later step of the draft cuts it again.
func (d *draft) keepReply(i int) {
	d.whole[i] = true
	old := d.assistant(i)
	delete(d.assistants, i)
	now := d.assistant(i)
	d.costs[i] += now - old
	d.total += now - old
	kept := d.ev.Shed[:0]
	for _, c := range d.ev.Shed {
		if c.Item != i || c.Result != ShedReasoning && c.Result != ShedArguments {
			kept = append(kept, c)
		}
	}
	d.ev.Shed = kept
}
