package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// noSlot is the peers' HTTP transport: it takes id_slot out of every chat
// completion request. The peers' requests go through the product's engine
// client (agent/engine), which on a llama-server of several slots pins the
// session to one and names it in every request; the agents the peers model
// name none (llama-server's own choice of slot applies: the idle slot
// sharing the largest part of the prompt, at least a tenth, else the least
// recently used), so on the wire they send none.
type noSlot struct{ next http.RoundTripper }

func (t noSlot) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") || req.Body == nil {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil {
		if _, ok := fields["id_slot"]; ok {
			delete(fields, "id_slot")
			if b, err := json.Marshal(fields); err == nil {
				body = b
			}
		}
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(r)
}

// peerHTTP is the HTTP client of the peers' engine client.
func peerHTTP() *http.Client { return &http.Client{Transport: noSlot{next: http.DefaultTransport}} }
