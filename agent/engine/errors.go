package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// APIError is an error response of the engine that is not a context
// overflow: a 4xx or 5xx, or an error sent inside a stream.
type APIError struct {
	// Status is the HTTP status; 0 for an error sent inside a stream.
	Status  int
	Type    string
	Code    string
	Message string
	// RetryAfter is the engine's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Hint says what to do about it, when something can be done (a 401
	// names REIKA_API_KEY).
	Hint string
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("engine error")
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(strings.Trim(e.Type+" "+e.Code, " "))
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// retryable reports whether the status is worth another attempt: 429 and
// 5xx other than 501 Not Implemented, unless the engine is loading its
// model (waited for apart, see whileLoading) or rejected what the model
// generated (asked again once, see Complete).
func (e *APIError) retryable() bool {
	if isLoading(e) || rejectedOutput(e) {
		return false
	}
	return e.Status == 429 || e.Status >= 500 && e.Status != 501 && e.Status != 505
}

// rejectedRe matches llama.cpp's words when its chat parser or its tool
// grammar rejects what the model generated: "The model produced output
// that does not match the expected peg-native format", "Failed to parse
// input at pos N", "got exception: Unexpected empty grammar stack after
// accepting piece: ...".
var rejectedRe = regexp.MustCompile(`(?i)does not match the expected|empty grammar stack|failed to parse input|failed to parse tool call`)

// rejectedOutput reports whether err is the engine's 500 (or streamed
// error) for model output its chat parser or tool grammar rejected.
func rejectedOutput(err error) bool {
	var a *APIError
	return errors.As(err, &a) && (a.Status == 0 || a.Status == 500) && rejectedRe.MatchString(a.Message)
}

// rejectedError is model output the engine rejected twice in a row.
type rejectedError struct{ err *APIError }

func (e *rejectedError) Error() string {
	return "the engine rejected what the model generated, twice (its chat parser or tool-call grammar could not read the reply; " +
		"a model whose tool-call format differs from its chat template's fails this way): " + e.err.Error()
}

func (e *rejectedError) Unwrap() error { return e.err }

// connectionLostError is a connection dropped while a response was read
// (a reset, a truncated body): worth another attempt.
type connectionLostError struct{ err error }

func (e *connectionLostError) Error() string {
	return "connection to the engine lost: " + e.err.Error()
}
func (e *connectionLostError) Unwrap() error { return e.err }

// unreachableHint is what an unreachable engine's error suggests: start
// llama-server on the port the base URL names.
func (c *Client) unreachableHint() string {
	port := c.base.Port()
	if port == "" {
		port = "80"
		if c.base.Scheme == "https" {
			port = "443"
		}
	}
	return "is the engine running? start llama-server (llama-server -m MODEL.gguf --jinja --port " + port + ") or " + baseURLHint(c.cfg.BaseURLFrom)
}

// baseURLHint says how to point reika at the engine, in the place the base
// URL came from (the agent's Settings.Sources).
func baseURLHint(from string) string {
	switch {
	case from == "editor":
		return "set reika.baseUrl in the editor's settings to your engine's URL"
	case from == "env":
		return "set REIKA_BASE_URL to your engine's URL"
	case strings.HasPrefix(from, "profile "):
		return "set baseUrl in the " + strings.TrimPrefix(from, "profile ") + " profile of config.toml to your engine's URL"
	default:
		return "set REIKA_BASE_URL (reika.baseUrl in the editor) to your engine's URL"
	}
}

// authHint is what a 401 or 403 suggests.
func (c *Client) authHint() string {
	if c.cfg.APIKey == "" {
		return "the engine wants an API key: set REIKA_API_KEY (or apiKeyEnv) to its --api-key"
	}
	return "the engine refused the API key: check REIKA_API_KEY (or apiKeyEnv) against its --api-key"
}

// classify turns an error from go-openai or net/http into the error the
// caller sees: *llm.OverflowError, *llm.UnreachableError, *APIError,
// *connectionLostError, the context's error, or the error itself. cap holds
// what the transport saw of the response.
func (c *Client) classify(ctx context.Context, err error, cap *capture) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
	)
	switch {
	case errors.As(err, &apiErr), errors.As(err, &reqErr):
		status := 0
		if apiErr != nil {
			status = apiErr.HTTPStatusCode
		} else {
			status = reqErr.HTTPStatusCode
		}
		if status == 0 && cap.streamErr != nil {
			return c.errorFromBody(0, cap.streamErr, cap)
		}
		if status != 0 && cap.body != nil {
			return c.errorFromBody(status, cap.body, cap)
		}
		// No raw body: fall back on what go-openai decoded.
		info := errorInfo{}
		if apiErr != nil {
			info = errorInfo{Type: apiErr.Type, Message: apiErr.Message, Code: fmt.Sprint(apiErr.Code)}
			if apiErr.Code == nil {
				info.Code = ""
			}
			if apiErr.Param != nil {
				info.Param = *apiErr.Param
			}
		} else {
			info.Message = plainText(reqErr.Body)
		}
		return c.errorFromInfo(status, info, cap)
	}
	if isUnreachable(err) {
		return &llm.UnreachableError{URL: c.displayURL, Hint: c.unreachableHint(), Err: innerURLError(err)}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if (errors.As(err, &syntaxErr) || errors.As(err, &typeErr)) && cap != nil && len(cap.body) > 0 {
		return &APIError{Status: cap.status, Message: fmt.Sprintf("the engine's answer is not a chat completion (%v): %s", err, plainText(cap.body))}
	}
	if isConnectionLost(err) {
		return &connectionLostError{err: innerURLError(err)}
	}
	return err
}

// errorFromBody classifies an error response body.
func (c *Client) errorFromBody(status int, body []byte, cap *capture) error {
	return c.errorFromInfo(status, parseErrorBody(body), cap)
}

func (c *Client) errorFromInfo(status int, info errorInfo, cap *capture) error {
	if prompt, window, ok := info.overflow(status); ok {
		msg := info.Message
		if msg == "" {
			msg = "the prompt is too long for the model's context window"
		}
		return &llm.OverflowError{PromptTokens: prompt, Window: window, Message: msg}
	}
	e := &APIError{Status: status, Type: info.Type, Code: info.Code, Message: info.Message}
	if status == http.StatusUnauthorized || status == http.StatusForbidden || info.Type == "authentication_error" {
		e.Hint = c.authHint()
	}
	if cap != nil && cap.header != nil {
		e.RetryAfter = retryAfter(cap.header.Get("Retry-After"), time.Now())
	}
	return e
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// isUnreachable reports whether err means the engine could not be reached
// at all: refused, no route, no such host, or a dial that failed.
func isUnreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// isConnectionLost reports whether err is a connection dropped mid-response
// or a body cut short.
func isConnectionLost(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || strings.Contains(err.Error(), "unexpected EOF") ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "server closed")
}

// innerURLError drops the *url.Error wrapper, whose text repeats the URL.
func innerURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryableError reports whether the engine should be asked again.
func retryableError(err error) (bool, time.Duration) {
	var a *APIError
	if errors.As(err, &a) {
		return a.retryable(), a.RetryAfter
	}
	var lost *connectionLostError
	if errors.As(err, &lost) {
		return true, 0
	}
	return false, 0
}

// redactor removes the API key from text that may reach a log or an error.
type redactor struct{ key string }

func (r redactor) text(s string) string {
	if len(r.key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, r.key, "[REDACTED]")
}

// redactedError hides the API key in the text of the error it wraps.
type redactedError struct {
	err error
	r   redactor
}

func (e *redactedError) Error() string { return e.r.text(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// error returns err with the key removed from its text: the fields of the
// agent's error types are cleaned in place, anything else is wrapped.
func (r redactor) error(err error) error {
	if err == nil || len(r.key) < 4 || !strings.Contains(err.Error(), r.key) {
		return err
	}
	var o *llm.OverflowError
	if errors.As(err, &o) {
		o.Message = r.text(o.Message)
	}
	var u *llm.UnreachableError
	if errors.As(err, &u) {
		u.URL = r.text(u.URL)
		u.Err = &redactedError{err: u.Err, r: r}
	}
	var a *APIError
	if errors.As(err, &a) {
		a.Message = r.text(a.Message)
		a.Type, a.Code = r.text(a.Type), r.text(a.Code)
	}
	if !strings.Contains(err.Error(), r.key) {
		return err
	}
	return &redactedError{err: err, r: r}
}
