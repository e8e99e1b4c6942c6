package enginetest

import (
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// answer is everything needed to write one chat completion response, decided
// under the lock and written after it.
type answer struct {
	status int    // non-200: an error response with body
	body   []byte // the error body
	header map[string]string
	// errorLine: a streamed overflow the pre-Oct-2025 llama.cpp way.
	errorLine []byte
	// parserErr: the chat parser rejected the reply (Fault.ParserError).
	parserErr []byte

	req    *parsedRequest
	id     string
	msg    ctxwin.Message
	finish string

	promptTokens, cacheN, promptN, completion int
	promptMS                                  float64
	fault                                     Fault
}

// chat handles POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		return
	}
	a := s.decide(r, body)
	if d := a.fault.FirstByteDelay; d > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-sleep(d):
		}
	}
	switch {
	case a.parserErr != nil && a.req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("data: " + string(a.parserErr) + "\n\n"))
	case a.parserErr != nil:
		writeJSON(w, 500, a.parserErr)
	case a.errorLine != nil:
		s.writeErrorLine(w, a.errorLine)
	case a.status != http.StatusOK:
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		writeJSON(w, a.status, a.body)
	case a.req.Stream:
		s.writeStream(w, a, r.Context().Done())
	default:
		s.writeCompletion(w, a)
	}
}

// decide parses the request, asks the script, applies the window and the
// prefix cache, generates the reply, updates the slot and records it all.
func (s *Server) decide(r *http.Request, body []byte) *answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Recorded{Index: len(s.records), Path: r.URL.Path, Body: body, Header: r.Header.Clone()}
	a := s.decideLocked(&rec)
	rec.Status = a.status
	if a.errorLine != nil {
		rec.Status = http.StatusOK
	}
	if a.parserErr != nil && !a.req.Stream {
		rec.Status = http.StatusInternalServerError
	}
	s.records = append(s.records, rec)
	return a
}

func (s *Server) decideLocked(rec *Recorded) *answer {
	o := s.opts
	fail := func(status int, typ, msg, param string, code any, extra obj) *answer {
		return &answer{status: status, body: s.errorBody(status, typ, msg, param, code, extra)}
	}
	p, refused := s.admit(rec)
	if refused != nil {
		return refused
	}
	prompt := renderPrompt(p.toolJSON, p.Messages)
	tokens := s.tok.Tokens(nil, prompt)
	n := len(tokens)
	p.PromptTokens = n
	rec.Request = p.Request
	rec.PromptTokens = n

	reply := Reply{Content: "ok"}
	if s.script != nil {
		req := p.Request
		req.Messages = slices.Clone(p.Messages)
		reply = s.script(&req)
	}
	rec.Reply = reply
	a := &answer{req: p, fault: reply.Fault, status: http.StatusOK}

	if f := reply.Fault; f.Status != 0 {
		return s.faultAnswer(a, f)
	}
	if o.RejectStreamWithTools && p.Stream && len(p.Tools) > 0 {
		a2 := fail(500, "server_error", "Cannot use tools with stream", "", nil, nil)
		a2.fault = reply.Fault
		return a2
	}

	// The window.
	if ov := s.overflow(p, n); ov != nil {
		rec.Overflowed = true
		ov.fault = reply.Fault
		return ov
	}
	if o.Shape == ShapeOllama && n >= o.Window {
		// Ollama truncates silently and answers 200; the part it keeps can
		// be about half of num_ctx (ollama#3839, #17427).
		rec.Overflowed = true
		tokens = tokens[n-o.Window/2:]
		prompt = "" // serve rebuilds the slot from tokens
	}
	s.serve(a, reply, rec, prompt, tokens)
	return a
}

// serve fills in a, the answer to a request the window admits with its
// prompt tokens (prompt "" when they were cut from it): what the cache
// held of them, the reply, and the slot's new state; rec records it.
func (s *Server) serve(a *answer, reply Reply, rec *Recorded, prompt string, tokens []uint32) {
	p, n := a.req, len(tokens)
	// The cache: the slot's state, or one restored from host memory; the
	// common prefix and, with chunk reuse, the chunks after it (cache.go).
	lcp, slot := s.takeCache(p, tokens, rec)
	a.promptTokens, a.cacheN = n, s.cachedOf(lcp, n)
	a.promptN = n - a.cacheN
	a.promptMS = round3(float64(a.promptN) * s.opts.PromptMSPerToken)

	// The reply.
	msg, finish, completion := s.replyOf(p, reply, rec.Index, n)
	a.msg, a.finish, a.completion = msg, finish, completion
	a.id = fmt.Sprintf("chatcmpl-fake%08d", rec.Index)

	if prompt != "" {
		tokens = s.tok.Tokens(nil, prompt)
	}
	s.storeSlot(slot, rec.Index, n, tokens, msg, finish)
	if reply.Fault.ParserError {
		a.parserErr = parserError(reply.Fault)
	}

	rec.CacheN, rec.PromptN, rec.PromptMS = a.cacheN, a.promptN, a.promptMS
	rec.CompletionTokens = completion
	rec.Reply.Content, rec.Reply.Reasoning, rec.Reply.ToolCalls, rec.Reply.Finish = msg.Content, msg.Reasoning, msg.ToolCalls, finish
}

// admit parses a recorded request and checks what the engine checks before
// anything else: a body it can read, a model it serves, and (unless
// Lenient) every tool call answered. It returns the refusal otherwise.
func (s *Server) admit(rec *Recorded) (*parsedRequest, *answer) {
	fail := func(status int, msg, param string, code any) *answer {
		return &answer{status: status, body: s.errorBody(status, "", msg, param, code, nil)}
	}
	p, err := parseRequest(rec.Body)
	if err != nil {
		return nil, fail(400, err.Error(), "", nil)
	}
	p.Index = rec.Index
	if !s.modelMatches(p.Model) {
		msg := fmt.Sprintf("The model `%s` does not exist.", p.Model)
		if s.opts.Shape == ShapeOllama {
			msg = fmt.Sprintf("model %q not found, try pulling it first", p.Model)
		}
		return nil, fail(404, msg, "model", "model_not_found")
	}
	if !s.opts.Lenient {
		if err := checkToolPairs(p.Messages); err != nil {
			return nil, fail(400, err.Error(), "messages", nil)
		}
	}
	return p, nil
}

// storeSlot leaves in slot the prompt's tokens and every token generated
// but the last: a reply that ended with its end-of-turn token is there
// whole, a cut one (finish "length") without its last token.
func (s *Server) storeSlot(slot, index, n int, tokens []uint32, msg ctxwin.Message, finish string) {
	gen := s.tok.Tokens(nil, generatedBody(msg))
	if finish == "length" && len(gen) > 0 {
		gen = gen[:len(gen)-1]
	}
	s.cache.store(slot, index, n, append(slices.Clone(tokens), gen...))
	s.loaded = true
}

// parserError is the streamed error line of llama.cpp's chat parser
// rejecting the model's output.
func parserError(f Fault) []byte {
	msg := f.Message
	if msg == "" {
		msg = "The model produced output that does not match the expected peg-native format"
	}
	return mustJSON(obj{"error": obj{"code": 500, "message": msg, "type": "server_error"}})
}

// faultAnswer is the answer to a request the script failed with f: its
// body verbatim, or an error in the shape's form, with Retry-After.
func (s *Server) faultAnswer(a *answer, f Fault) *answer {
	if f.Body != "" {
		a.status, a.body = f.Status, []byte(f.Body)
	} else {
		msg := f.Message
		if msg == "" {
			msg = defaultFaultMessage(f.Status)
		}
		var code any
		if f.Status == 429 {
			code = "rate_limit_exceeded"
		}
		a = &answer{status: f.Status, body: s.errorBody(f.Status, "", msg, "", code, nil)}
		a.fault = f
	}
	if f.RetryAfter != "" {
		a.header = map[string]string{"Retry-After": f.RetryAfter}
	}
	return a
}

// cachedOf is the prompt tokens an engine of the server's shape reports
// served from its cache when lcp tokens of the n matched: llama.cpp always
// processes at least one token, vLLM caches whole blocks of 16, a hosted
// endpoint from 1024 tokens in steps of 128.
func (s *Server) cachedOf(lcp, n int) int {
	if lcp >= n {
		lcp = n - 1
	}
	switch s.opts.Shape {
	case ShapeVLLM:
		return lcp / 16 * 16
	case ShapeHosted:
		if n >= 1024 && lcp >= 1024 {
			return lcp / 128 * 128
		}
		return 0
	}
	return lcp
}

// replyOf is the assistant message the engine returns for the script's
// reply to request index of n prompt tokens, with its finish reason and
// completion tokens: no tool calls it was not offered, call ids as the
// shape gives them, and the reply cut where max_tokens or the window ends.
func (s *Server) replyOf(p *parsedRequest, reply Reply, index, n int) (ctxwin.Message, string, int) {
	o := s.opts
	msg := ctxwin.Message{Role: ctxwin.RoleAssistant, Content: reply.Content, Reasoning: reply.Reasoning}
	calls := reply.ToolCalls
	if len(p.Tools) == 0 || p.ToolChoice == "none" {
		calls = nil // an engine makes no calls it was not offered
	}
	for j, c := range calls {
		if c.ID == "" && !o.OmitToolCallIDs {
			c.ID = s.toolCallID(index, j)
		}
		if o.OmitToolCallIDs {
			c.ID = ""
		}
		msg.ToolCalls = append(msg.ToolCalls, c)
	}
	finish := reply.Finish
	limit := p.MaxTokens
	if room := o.Window - n; o.Shape != ShapeHosted && (limit == 0 || room < limit) {
		limit = room // the context fills during generation
	}
	// The reply's tokens, then its end-of-turn token: each counts against
	// the limit.
	completion := s.tok.Count(generatedBody(msg)) + 1
	if limit > 0 && completion > limit {
		msg = s.cutReply(msg, limit)
		completion = min(s.tok.Count(generatedBody(msg)), limit)
		finish = "length"
	}
	if finish == "" {
		finish = "stop"
		if len(msg.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	return msg, finish, completion
}

// overflow returns the engine's refusal of a prompt too long for its window,
// or nil.
func (s *Server) overflow(p *parsedRequest, n int) *answer {
	o := s.opts
	W, max := o.Window, p.MaxTokens
	switch o.Shape {
	case ShapeLlamaCpp, ShapeLlamaCpp2025:
		// server-context.cpp: the prompt alone against the slot's n_ctx.
		if n < W {
			return nil
		}
		if p.Stream && o.StreamErrorLine {
			line := mustJSON(obj{"code": 400, "message": "the request exceeds the available context size, try increasing it",
				"type": "exceed_context_size_error", "n_prompt_tokens": n, "n_ctx": W})
			return &answer{status: 400, errorLine: line}
		}
		msg := fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", n, W)
		return &answer{status: 400, body: s.errorBody(400, "exceed_context_size_error", msg, "", nil,
			obj{"n_prompt_tokens": n, "n_ctx": W})}
	case ShapeVLLM:
		// vLLM: prompt + requested output against max_model_len.
		if n+max <= W && n < W {
			return nil
		}
		var msg, param string
		switch {
		case o.FlatErrors:
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", W, n+max, n, max)
		case max > 0:
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains at least %d input tokens, for a total of at least %d tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=%d)", W, max, n, n+max, n)
			param = "input_tokens"
		default:
			msg = fmt.Sprintf("You passed %d input tokens and requested 0 output tokens. However, the model's context length is only %d tokens, resulting in a maximum input length of %d tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=%d)", n, W, W, n)
			param = "input_tokens"
		}
		return &answer{status: 400, body: s.errorBody(400, "BadRequestError", msg, param, nil, nil)}
	case ShapeHosted:
		if n+max <= W {
			return nil
		}
		msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", W, n)
		if max > 0 {
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", W, n+max, n, max)
		}
		return &answer{status: 400, body: s.errorBody(400, "invalid_request_error", msg, "messages", "context_length_exceeded", nil)}
	case ShapeLMStudio:
		if n < W {
			return nil
		}
		msg := fmt.Sprintf("Trying to keep the first %d tokens when context the overflows. However, the model is loaded with context length of only %d tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input", n, W)
		return &answer{status: 400, body: s.errorBody(400, "invalid_request_error", msg, "", nil, nil)}
	}
	return nil
}

// cutReply cuts a reply to at most limit tokens, in the order they are
// generated: reasoning, content, then the tool calls. As on llama.cpp, the
// calls that began survive the cut, the last one with its arguments cut
// short (`{"path":`).
func (s *Server) cutReply(m ctxwin.Message, limit int) ctxwin.Message {
	out := ctxwin.Message{Role: m.Role}
	r := s.tok.Count(m.Reasoning)
	if r >= limit {
		out.Reasoning = s.tok.Prefix(m.Reasoning, limit)
		return out
	}
	out.Reasoning = m.Reasoning
	left := limit - r
	if c := s.tok.Count(m.Content); c >= left {
		out.Content = s.tok.Prefix(m.Content, left)
		return out
	}
	out.Content = m.Content
	for _, c := range m.ToolCalls {
		body := generatedBody(ctxwin.Message{Content: m.Content, ToolCalls: append(out.ToolCalls, c)})
		if s.tok.Count(body) <= limit-r {
			out.ToolCalls = append(out.ToolCalls, c)
			continue
		}
		// The call's head comes first; what is left of the room goes to
		// its arguments.
		head := generatedBody(ctxwin.Message{Content: m.Content, ToolCalls: out.ToolCalls})
		room := limit - r - s.tok.Count(head) - s.tok.Count("\n<tool_call>\n{\"name\": \""+c.Name+"\", \"arguments\": ")
		if room > 0 {
			c.Arguments = s.tok.Prefix(c.Arguments, room)
			out.ToolCalls = append(out.ToolCalls, c)
		}
		break
	}
	return out
}

func (s *Server) toolCallID(req, j int) string {
	switch s.opts.Shape {
	case ShapeVLLM:
		return fmt.Sprintf("chatcmpl-tool-%08x%02x", req, j)
	case ShapeHosted:
		return fmt.Sprintf("call_fake%06d%02d", req, j)
	}
	return fmt.Sprintf("fc%06d%02dfakeid", req, j)
}

func defaultFaultMessage(status int) string {
	switch status {
	case 429:
		return "Rate limit reached for requests. Please try again later."
	case 503:
		return "Service Unavailable"
	case 502:
		return "Bad gateway"
	}
	return "The server had an error while processing your request."
}

func round3(x float64) float64 {
	return float64(int64(x*1000+0.5)) / 1000
}

// takeCache serves a prompt from the cache as llama-server does (cache.go)
// and returns how many of its tokens were reused and the slot that serves
// it. Other shapes have one slot and reuse the common prefix.
func (s *Server) takeCache(p *parsedRequest, tokens []uint32, rec *Recorded) (reused, slot int) {
	if !s.isLlama() {
		return s.cache.take(tokens, -1, 0).cached, 0
	}
	id, reuse := -1, s.defaultReuse
	if p.IDSlot != nil && *p.IDSlot >= 0 {
		id = *p.IDSlot
	}
	if p.CacheReuse != nil {
		reuse = max(*p.CacheReuse, 0)
	}
	off := p.CachePrompt != nil && !*p.CachePrompt
	if off {
		tokens = nil // cache_prompt false: nothing is reused
	}
	scan := reuse
	if s.opts.NoShift || off {
		scan = 0
	}
	t := s.cache.take(tokens, id, scan)
	if reuse > 0 && s.opts.NoShift {
		s.logf("slot id %2d | task %d | cache reuse is not supported - ignoring n_cache_reuse = %d", t.slot, rec.Index, reuse)
	}
	if s.slotCount() > 1 {
		s.logf("slot get_availabl: id %2d | task -1 | %s", t.slot, t.how) // as llama-server's log says
	}
	for _, line := range t.describe() {
		s.logf("slot id %2d | task %d | %s", t.slot, rec.Index, line)
	}
	rec.Slot, rec.Chunks, rec.Restored = t.slot, t.chunks, t.restored
	if scan > 0 {
		rec.CacheReuse = scan
	}
	return t.cached, t.slot
}
