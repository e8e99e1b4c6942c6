package enginetest

import (
	"bufio"
	"net"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func sleep(d time.Duration) <-chan time.Time { return time.After(d) }

// reasoningKey is the field a shape puts reasoning in: vLLM (since late
// 2025) and Ollama say "reasoning", llama.cpp and DeepSeek-style hosted APIs
// "reasoning_content".
func (s *Server) reasoningKey() string {
	switch s.opts.Shape {
	case ShapeVLLM, ShapeOllama:
		return "reasoning"
	}
	return "reasoning_content"
}

// usage is the usage object of a shape.
func (s *Server) usage(a *answer) obj {
	u := obj{"prompt_tokens": a.promptTokens, "completion_tokens": a.completion, "total_tokens": a.promptTokens + a.completion}
	switch s.opts.Shape {
	case ShapeLlamaCpp:
		u["prompt_tokens_details"] = obj{"cached_tokens": a.cacheN}
	case ShapeVLLM:
		// vLLM omits a zero cached_tokens (a truthiness test).
		if a.cacheN > 0 {
			u["prompt_tokens_details"] = obj{"cached_tokens": a.cacheN}
		} else {
			u["prompt_tokens_details"] = nil
		}
	case ShapeHosted:
		u["prompt_tokens_details"] = obj{"cached_tokens": a.cacheN, "audio_tokens": 0}
		u["completion_tokens_details"] = obj{"reasoning_tokens": s.tok.Count(a.msg.Reasoning), "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	}
	return u
}

// timings is llama.cpp's timings object.
func (s *Server) timings(a *answer) obj {
	predictedMS := float64(a.completion) * predictedMSPerToken
	perSecond := func(n int, ms float64) float64 {
		if ms <= 0 {
			return 0
		}
		return round3(float64(n) * 1000 / ms)
	}
	perToken := func(n int, ms float64) float64 {
		if n == 0 {
			return 0
		}
		return round3(ms / float64(n))
	}
	return obj{
		"cache_n": a.cacheN, "prompt_n": a.promptN, "prompt_ms": a.promptMS,
		"prompt_per_token_ms": perToken(a.promptN, a.promptMS), "prompt_per_second": perSecond(a.promptN, a.promptMS),
		"predicted_n": a.completion, "predicted_ms": predictedMS,
		"predicted_per_token_ms": perToken(a.completion, predictedMS), "predicted_per_second": perSecond(a.completion, predictedMS),
	}
}

// wireCalls is the tool_calls array of a complete message.
func wireCalls(calls []ctxwin.ToolCall) []obj {
	out := make([]obj, 0, len(calls))
	for _, c := range calls {
		tc := obj{"type": "function", "function": obj{"name": c.Name, "arguments": c.Arguments}}
		if c.ID != "" {
			tc["id"] = c.ID
		}
		out = append(out, tc)
	}
	return out
}

// writeCompletion writes a non-streamed chat.completion.
func (s *Server) writeCompletion(w http.ResponseWriter, a *answer) {
	// llama.cpp: content is "" beside tool calls (OpenAI says null).
	m := obj{"role": "assistant", "content": a.msg.Content}
	if s.opts.Shape == ShapeHosted && a.msg.Content == "" && len(a.msg.ToolCalls) > 0 {
		m["content"] = nil
	}
	if a.msg.Reasoning != "" {
		m[s.reasoningKey()] = a.msg.Reasoning
	}
	if len(a.msg.ToolCalls) > 0 {
		m["tool_calls"] = wireCalls(a.msg.ToolCalls)
	}
	if s.opts.Shape == ShapeHosted {
		m["refusal"] = nil
		m["annotations"] = []obj{}
	}
	choice := obj{"finish_reason": a.finish, "index": 0, "message": m}
	if s.opts.Shape == ShapeVLLM || s.opts.Shape == ShapeHosted {
		choice["logprobs"] = nil
	}
	body := obj{
		"choices": []obj{choice},
		"created": created, "model": s.modelName(a), "object": "chat.completion",
		"usage": s.usage(a), "id": a.id,
	}
	if s.isLlama() {
		body["system_fingerprint"] = "b7000-fake0000"
		body["timings"] = s.timings(a)
	}
	b := mustJSON(body)
	f := a.fault
	switch {
	case f.Reset:
		s.reset(w, false)
		return
	case f.Truncate:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(200)
		w.Write(b[:len(b)/2])
		return
	}
	writeJSON(w, 200, b)
}

// streamChunks is the sequence of SSE data payloads of a streamed reply, in
// the shape's form, without the final [DONE].
func (s *Server) streamChunks(a *answer) [][]byte {
	delta := func(d obj, finish any) obj { return s.chunkDelta(a, d, finish) }
	var out []obj
	first := obj{"role": "assistant", "content": nil}
	switch s.opts.Shape {
	case ShapeVLLM, ShapeOllama, ShapeLMStudio:
		first["content"] = ""
	case ShapeHosted:
		first = obj{"role": "assistant", "content": "", "refusal": nil}
	}
	out = append(out, delta(first, nil))
	for _, piece := range pieces(a.msg.Reasoning, 24) {
		out = append(out, delta(obj{s.reasoningKey(): piece}, nil))
	}
	for _, piece := range pieces(a.msg.Content, 24) {
		out = append(out, delta(obj{"content": piece}, nil))
	}
	for j, c := range a.msg.ToolCalls {
		args := pieces(c.Arguments, 16)
		first := ""
		if s.isLlama() && len(args) > 0 {
			// llama.cpp's first delta of a call already carries the
			// arguments parsed so far.
			first, args = args[0], args[1:]
		}
		head := obj{"index": j, "function": obj{"name": c.Name, "arguments": first}}
		if c.ID != "" {
			head["id"] = c.ID
			head["type"] = "function"
		}
		out = append(out, delta(obj{"tool_calls": []obj{head}}, nil))
		for _, piece := range args {
			out = append(out, delta(obj{"tool_calls": []obj{{"index": j, "function": obj{"arguments": piece}}}}, nil))
		}
	}
	final := delta(obj{}, a.finish)
	out = append(out, final)
	last := final
	if a.req.IncludeUsage {
		u := s.chunkBase(a, []obj{})
		u["usage"] = s.usage(a)
		out = append(out, u)
		last = u
	}
	if s.isLlama() {
		// llama.cpp attaches timings to the last JSON chunk.
		last["timings"] = s.timings(a)
	}
	chunks := make([][]byte, len(out))
	for i, c := range out {
		chunks[i] = mustJSON(c)
	}
	return chunks
}

// chunkBase is a stream chunk of a's reply carrying choices, with the
// fields the shape puts around them.
func (s *Server) chunkBase(a *answer, choices []obj) obj {
	c := obj{"choices": choices, "created": created, "id": a.id, "model": s.modelName(a), "object": "chat.completion.chunk"}
	if s.isLlama() {
		c["system_fingerprint"] = "b7000-fake0000"
	}
	if s.opts.Shape == ShapeHosted {
		c["system_fingerprint"] = "fp_fake"
		if a.req.IncludeUsage {
			c["usage"] = nil
		}
	}
	return c
}

// chunkDelta is a stream chunk of a's reply with one choice: delta d and
// finish (nil before the last).
func (s *Server) chunkDelta(a *answer, d obj, finish any) obj {
	ch := obj{"index": 0, "delta": d, "finish_reason": finish}
	if s.opts.Shape == ShapeVLLM || s.opts.Shape == ShapeHosted {
		ch["logprobs"] = nil
	}
	return s.chunkBase(a, []obj{ch})
}

// writeStream writes a streamed reply, applying the request's fault; done
// closes when the client has gone away.
func (s *Server) writeStream(w http.ResponseWriter, a *answer, done <-chan struct{}) {
	chunks := s.streamChunks(a)
	f := a.fault
	if f.Reset && f.AfterChunks < 0 {
		s.reset(w, false)
		return
	}
	stopAt := len(chunks)
	if f.Reset || f.Truncate || f.StreamError || f.Hold {
		stopAt = f.AfterChunks
		if stopAt <= 0 {
			stopAt = 1
		}
		stopAt = min(stopAt, len(chunks)-1) // never past the finish chunk
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	flusher, _ := w.(http.Flusher)
	for _, c := range chunks[:stopAt] {
		if _, err := w.Write(append(append([]byte("data: "), c...), '\n', '\n')); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch {
	case f.Reset:
		s.reset(w, true)
		return
	case f.Truncate:
		return
	case f.Hold:
		<-done
		return
	case f.StreamError:
		msg := f.Message
		if msg == "" {
			msg = "The server had an error while processing your request."
		}
		w.Write([]byte("data: " + string(s.errorBody(500, "server_error", msg, "", nil, nil)) + "\n\n"))
		return
	}
	w.Write([]byte("data: [DONE]\n\n"))
}

// writeErrorLine writes a streamed error the way llama.cpp did before PR
// #16486: HTTP 200, an `error:` SSE field, then [DONE].
func (s *Server) writeErrorLine(w http.ResponseWriter, line []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.Write([]byte("error: " + string(line) + "\n\n"))
	w.Write([]byte("data: [DONE]\n\n"))
}

// reset drops the connection with a TCP reset, after flushing what was
// written when flush is set.
func (s *Server) reset(w http.ResponseWriter, flush bool) {
	if f, ok := w.(http.Flusher); ok && flush {
		f.Flush()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	flushBuf(buf)
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func flushBuf(buf *bufio.ReadWriter) {
	if buf != nil {
		buf.Flush()
	}
}

// pieces splits s into stream deltas of about size bytes, at word
// boundaries where it can and never inside a UTF-8 sequence.
func pieces(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		if len(s) <= size {
			out = append(out, s)
			break
		}
		cut := size
		for k := size / 2; k < size; k++ {
			if s[k] == ' ' || s[k] == '\n' {
				cut = k + 1
				break
			}
		}
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// modelName is the "model" of a response: the one asked for, else the one
// served.
func (s *Server) modelName(a *answer) string {
	if a.req.Model != "" {
		return a.req.Model
	}
	return s.opts.Model
}
