package agent

// retract takes back the text a broken attempt streamed in round: the
// final, empty event of each kind it streamed closes its block empty (the
// editors and run replace a streamed block with its final event), and the
// next attempt streams into a new one.
func (r *run) retract(round int, reasoned bool) {
	if reasoned {
		r.emit(Event{Kind: EventReasoning, Round: round})
	}
	if r.streamed {
		r.emit(Event{Kind: EventAssistant, Round: round})
		r.streamed = false
		r.partial.Reset()
	}
}
