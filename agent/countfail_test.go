package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// failingCounter is a model whose tokenizer fails with err.
type failingCounter struct {
	llm.Model
	err error
}

func (f failingCounter) CountTokens(context.Context, []string) ([]int, error) { return nil, f.err }

// A tokenizer that fails is said once; an engine that is down is not (its
// wait says so, and the texts are counted at the next round).
func TestCountFailureSaidOnceUnlessTheEngineIsDown(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&llm.UnreachableError{URL: "http://127.0.0.1:1/v1", Err: errors.New("connection refused")}, 0},
		{errors.New("POST /tokenize: 500"), 1},
	} {
		var mu sync.Mutex
		var log strings.Builder
		a := &Agent{eng: engineState{model: failingCounter{err: c.err}}, logf: func(f string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			log.WriteString(f + "\n")
		}}
		m := ctxwin.NewManager(ctxwin.NewHistory("You are a test.", nil), 16384)
		if len(m.Uncounted().Texts) == 0 {
			t.Fatal("nothing to count")
		}
		a.countNew(context.Background(), m)
		a.countNew(context.Background(), m)
		if got := strings.Count(log.String(), "tokenizer failed"); got != c.want {
			t.Errorf("%v: said %d times, want %d:\n%s", c.err, got, c.want, log.String())
		}
	}
}
