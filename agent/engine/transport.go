package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// go-openai builds requests from its own types and decodes responses into
// them, which drops what the engines add. The client therefore hands
// go-openai an HTTPDoer (transport) that
//
//   - adds fields go-openai cannot send: llama.cpp's cache_prompt,
//     n_cache_reuse and id_slot (carried in the request's context), and a
//     "content" key on messages whose empty content go-openai omits;
//   - keeps, per call, what the response said beyond go-openai's types: the
//     raw body of a non-streamed response or of an error (llama.cpp's
//     timings, n_prompt_tokens and n_ctx), the status and headers
//     (Retry-After), and a streamed error line, which go-openai swallows
//     when it is an old llama.cpp `error:` event.
//
// The capture of a call travels in its context, so concurrent calls never
// share one.

// maxBody bounds a kept response body.
const maxBody = 64 << 20

// capture is what the transport saw of one HTTP exchange.
type capture struct {
	status    int
	header    http.Header
	body      []byte // non-streamed responses and error responses
	streamErr []byte // the JSON of an `error:` or `data: {"error":...}` stream line
}

type captureKey struct{}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

// transport is the client's openai.HTTPDoer.
type transport struct {
	http *http.Client
	// extra returns the fields to add to the body of the chat completion
	// request whose context it is given.
	extra func(ctx context.Context) map[string]any
}

func (t *transport) Do(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/chat/completions") && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = rewriteRequest(body, t.extra(req.Context()))
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, err
	}
	cap, _ := req.Context().Value(captureKey{}).(*capture)
	if cap == nil {
		return resp, nil
	}
	cap.status, cap.header = resp.StatusCode, resp.Header
	if resp.StatusCode < 400 && (req.Header.Get("Accept") == "text/event-stream" || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")) {
		resp.Body = &sseTap{rc: resp.Body, cap: cap}
		return resp, nil
	}
	b, readErr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	cap.body = b
	var r io.Reader = bytes.NewReader(b)
	if readErr != nil {
		// Hand the read error on, after the bytes that did arrive.
		r = io.MultiReader(r, errReader{readErr})
	}
	resp.Body = io.NopCloser(r)
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// rewriteRequest adds fields to a chat completion request and gives every
// message a "content" key (go-openai omits an empty one, and some engines
// reject a tool result or a user message without it). A body that is not a
// JSON object passes unchanged.
func rewriteRequest(body []byte, extra map[string]any) []byte {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(req["messages"], &msgs) == nil {
		changed := false
		for _, m := range msgs {
			if _, ok := m["content"]; ok {
				continue
			}
			if _, calls := m["tool_calls"]; calls {
				continue // an assistant message with tool calls needs no content
			}
			m["content"] = json.RawMessage(`""`)
			changed = true
		}
		if changed {
			if b, err := json.Marshal(msgs); err == nil {
				req["messages"] = b
			}
		}
	}
	for k, v := range extra {
		if b, err := json.Marshal(v); err == nil {
			req[k] = b
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

// maxLine bounds the stream line the tap keeps while looking for errors.
const maxLine = 1 << 20

// sseTap passes a stream through and notes an error event in it: llama.cpp
// before PR #16486 sent `error: {...}` (which go-openai swallows), later
// builds `data: {"error":{...}}` (whose counts go-openai drops).
type sseTap struct {
	rc   io.ReadCloser
	cap  *capture
	line []byte
	long bool // the current line exceeded maxLine
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			t.endLine()
			continue
		}
		if len(t.line) < maxLine {
			t.line = append(t.line, b)
		} else {
			t.long = true
		}
	}
	if err != nil {
		t.endLine()
	}
	return n, err
}

func (t *sseTap) endLine() {
	line := bytes.TrimSpace(t.line)
	long := t.long
	t.line, t.long = t.line[:0], false
	if long || len(line) == 0 || t.cap.streamErr != nil {
		return
	}
	switch {
	case bytes.HasPrefix(line, []byte("error:")):
		t.cap.streamErr = bytes.Clone(bytes.TrimSpace(line[len("error:"):]))
	case bytes.HasPrefix(line, []byte("data:")):
		payload := bytes.TrimSpace(line[len("data:"):])
		if bytes.HasPrefix(payload, []byte(`{"error"`)) {
			t.cap.streamErr = bytes.Clone(payload)
		}
	}
}

func (t *sseTap) Close() error { return t.rc.Close() }
