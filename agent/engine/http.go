package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// get is do with GET and no body.
func (c *Client) get(ctx context.Context, url string) ([]byte, error) {
	return c.do(ctx, http.MethodGet, url, nil)
}

// statusError is a request of do answered with a status other than 2xx;
// body is the message of the engine's error body.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.body)
}

// do makes one request of the client's own (a probe, /tokenize, Ollama's
// /api/show) to url, an absolute URL built on c.rootURL or c.baseURL, with
// the API key as a bearer token, within probeTimeout. It returns the body,
// read up to maxBody bytes. An engine that cannot be reached is an
// *llm.UnreachableError; a status other than 2xx is a *statusError.
func (c *Client) do(ctx context.Context, method, url string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	// Every request made here only reads (probes, /tokenize), so the
	// transport may send it again on a new connection when the server
	// closed the one it reused (llama-server closes some after an error);
	// a nil Idempotency-Key marks it so and is not sent.
	req.Header["Idempotency-Key"] = nil
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if isUnreachable(err) {
			return nil, &llm.UnreachableError{URL: c.displayURL, Hint: c.unreachableHint(), Err: innerURLError(err)}
		}
		return nil, innerURLError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &statusError{status: resp.StatusCode, body: parseErrorBody(b).Message}
	}
	return b, nil
}

// readAllLimit reads r whole, failing when it holds more than limit bytes.
func readAllLimit(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, nil
}
