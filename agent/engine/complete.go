package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Complete sends one chat completion request; see llm.Model. It waits
// for an engine that is loading its model, and for one that does not
// answer (down.go), asking again from the same request; asks once more
// when the engine rejects what the model generated (a new sample may
// parse), then names the engine's words; and drops the tool calls of a
// reply cut at max_tokens or at the window (finish_reason "length"): the
// last of them may be cut inside its arguments, so the round is a cut
// reply, not calls. Text streamed by an attempt that is given up for
// another is retracted (llm.Delta.Retract) before the next one streams.
func (c *Client) Complete(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	start := time.Now()
	out := &deltaOut{f: onDelta}
	var (
		resp   *llm.Response
		fields map[string]any
	)
	err := c.whileDown(ctx, func() error {
		var e error
		resp, fields, e = c.completeUp(ctx, req, out)
		if e != nil && engineDown(e) {
			out.retract()
		}
		return e
	})
	if err != nil {
		var o *llm.OverflowError
		if errors.As(err, &o) {
			c.adoptWindow(o)
		}
		return nil, c.red.error(err)
	}
	if resp.FinishReason == "length" && len(resp.Message.ToolCalls) > 0 {
		c.logf("engine: the reply was cut (finish_reason length) after %d tool calls; dropping them, the last may be cut short", len(resp.Message.ToolCalls))
		resp.Message.ToolCalls = nil
	}
	resp.Elapsed = time.Since(start)
	if n, ok := fields["n_cache_reuse"].(int); ok {
		resp.CacheReuse = n
	}
	return resp, nil
}

// completeUp is one try of Complete while the engine answers: the
// model's info (discovered once), then the request, waiting while the
// engine loads and asked once more when it rejects the model's output. It
// returns the fields added to the request.
func (c *Client) completeUp(ctx context.Context, req *llm.Request, out *deltaOut) (*llm.Response, map[string]any, error) {
	info, err := c.ensureInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	oreq := c.buildRequest(info.Model, req)
	fields, done := c.extraFields(ctx, info, req)
	defer done()
	ctx = withFields(ctx, fields)
	var resp *llm.Response
	for attempt := 1; ; attempt++ {
		err = c.whileLoading(ctx, func() error {
			out.retract() // a try that streamed and failed: its text is void
			var e error
			resp, e = c.completeOnce(ctx, oreq, out)
			return e
		})
		if !rejectedOutput(err) {
			return resp, fields, err
		}
		var a *APIError
		errors.As(err, &a)
		if attempt > 1 {
			return nil, fields, &rejectedError{err: a}
		}
		c.logf("engine: the engine rejected what the model generated (%s); asking once more", a.Message)
	}
}

// completeOnce makes one request: streamed unless the engine refuses to
// stream with tools, re-issued without streaming when a stream breaks
// without saying why (the text it streamed retracted first).
func (c *Client) completeOnce(ctx context.Context, oreq openai.ChatCompletionRequest, out *deltaOut) (*llm.Response, error) {
	c.mu.Lock()
	stream := !(c.noStreaming && len(oreq.Tools) > 0)
	c.mu.Unlock()

	var (
		resp *llm.Response
		err  error
	)
	if stream {
		resp, err = c.stream(ctx, oreq, out.send)
		var failed *streamFailedError
		switch {
		case errors.Is(err, errStreamRefused):
			c.logf("engine: the engine refuses to stream with tools; asking without streaming")
			c.mu.Lock()
			c.noStreaming = true
			c.mu.Unlock()
			stream = false
		case errors.As(err, &failed) && (rejectedOutput(failed.cause) || isLoading(failed.cause)):
			// The engine said what went wrong: asking again without
			// streaming would only generate the same reply once more.
			return nil, failed.cause
		case errors.As(err, &failed):
			c.logf("engine: %v; asking again without streaming", failed)
			out.retract()
			stream = false
		}
	}
	if !stream {
		resp, err = c.complete(ctx, oreq)
		if err == nil && out.sent == 0 && (resp.Message.Content != "" || resp.Message.Reasoning != "") {
			out.send(llm.Delta{Content: resp.Message.Content, Reasoning: resp.Message.Reasoning})
		}
	}
	return resp, err
}

var errStreamRefused = errors.New("the engine refuses to stream with tools")

// streamFailedError is a stream that ended without a finish_reason.
type streamFailedError struct{ cause error }

func (e *streamFailedError) Error() string {
	if e.cause == nil {
		return "the stream ended without a finish_reason"
	}
	return "the stream ended without a finish_reason: " + e.cause.Error()
}

// stream makes a streamed request, passing its text to onDelta.
func (c *Client) stream(ctx context.Context, oreq openai.ChatCompletionRequest, onDelta func(llm.Delta)) (*llm.Response, error) {
	oreq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	var (
		st  *openai.ChatCompletionStream
		cap *capture
	)
	err := c.retry(ctx, func(ctx context.Context, cp *capture) error {
		s, err := c.oa.CreateChatCompletionStream(ctx, oreq)
		if err != nil {
			err = c.classify(ctx, err, cp)
			if refusesStreamWithTools(err) && len(oreq.Tools) > 0 {
				return errStreamRefused // not worth a retry
			}
			return err
		}
		st, cap = s, cp
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	acc, broken := c.readStream(ctx, st, cap, onDelta)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// An error the stream carried: an overflow is final; anything else is
	// asked again without streaming, for the real error.
	if cap.streamErr != nil {
		if e := c.errorFromBody(0, cap.streamErr, nil); llm.IsOverflow(e) {
			return nil, e
		} else if broken == nil {
			broken = e
		}
	}
	if llm.IsOverflow(broken) {
		return nil, broken
	}
	if acc.finish == "" {
		return nil, &streamFailedError{cause: broken}
	}
	return &llm.Response{
		Message:      acc.message(),
		FinishReason: acc.finish,
		Usage:        usageOf(acc.usage, acc.timings),
		Timings:      timingsOf(acc.timings),
	}, nil
}

// readStream reads a stream's chunks to its end into an accumulator,
// passing their text to onDelta; broken is why the stream stopped early
// (nil when it ended or the context did).
func (c *Client) readStream(ctx context.Context, st *openai.ChatCompletionStream, cp *capture, onDelta func(llm.Delta)) (acc *accumulator, broken error) {
	acc = newAccumulator()
	for {
		raw, err := st.RecvRaw()
		if err == io.EOF {
			return acc, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return acc, nil // the caller returns the context's error
			}
			return acc, c.classify(ctx, err, cp)
		}
		if len(raw) == 0 {
			continue
		}
		ch, err := parseChunk(raw)
		if err != nil {
			return acc, err
		}
		acc.add(ch, onDelta)
	}
}

// refusesStreamWithTools recognises llama.cpp's "Cannot use tools with
// stream" and its kin.
func refusesStreamWithTools(err error) bool {
	var a *APIError
	if !errors.As(err, &a) || (a.Status != 400 && a.Status != 500 && a.Status != 501) {
		return false
	}
	m := strings.ToLower(a.Message)
	return strings.Contains(m, "tool") && strings.Contains(m, "stream")
}

// complete makes a non-streamed request.
func (c *Client) complete(ctx context.Context, oreq openai.ChatCompletionRequest) (*llm.Response, error) {
	oreq.Stream, oreq.StreamOptions = false, nil
	var (
		resp openai.ChatCompletionResponse
		body []byte
	)
	err := c.retry(ctx, func(ctx context.Context, cp *capture) error {
		r, err := c.oa.CreateChatCompletion(ctx, oreq)
		if err != nil {
			return c.classify(ctx, err, cp)
		}
		resp, body = r, cp.body
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, &APIError{Status: http.StatusOK, Message: "the engine returned no choices: " + plainText(body)}
	}
	ch := resp.Choices[0]
	x := parseExtras(body)
	m := ctxwin.Message{Role: ctxwin.RoleAssistant, Content: ch.Message.Content, Reasoning: ch.Message.ReasoningContent}
	if m.Reasoning == "" {
		m.Reasoning = x.reasoning()
	}
	for _, tc := range ch.Message.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ctxwin.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	fillCallIDs(m.ToolCalls)
	finish := string(ch.FinishReason)
	if finish == "" || finish == string(openai.FinishReasonNull) {
		finish = "stop"
		if len(m.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	return &llm.Response{Message: m, FinishReason: finish, Usage: usageOf(x.Usage, x.Timings), Timings: timingsOf(x.Timings)}, nil
}
