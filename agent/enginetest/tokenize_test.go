package enginetest

import (
	"os"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

const proseSample = `Context management is the core of the agent. It divides the model's window into budgets, keeps every request append-only so the engine's prefix cache is reused, and when the window fills it sheds old tool output to short summaries and folds old turns into one recap. One edit to mid-history on a large model cost thousands of tokens and minutes of prefill, against a few tokens and seconds for an append. The job between shrink events is therefore not to touch what was already sent. A single large result is cut, not the history, and the cut keeps the start and the end with a marker between them.`

func charsPerToken(tk *tokenizer, s string) float64 {
	return float64(len(s)) / float64(tk.Count(s))
}

// TestTokenizerDensity checks that CharsPerToken sets the density of prose
// and that code is denser than prose at every density.
func TestTokenizerDensity(t *testing.T) {
	code, err := os.ReadFile("completion.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, cpt := range []float64{2.5, 3.5, 5} {
		tk := newTokenizer(cpt)
		prose := charsPerToken(tk, proseSample)
		if prose < cpt*0.85 || prose > cpt*1.15 {
			t.Errorf("cpt %.1f: prose tokenizes at %.2f chars/token, want within 15%%", cpt, prose)
		}
		c := charsPerToken(tk, string(code))
		if c > prose*0.9 {
			t.Errorf("cpt %.1f: code at %.2f chars/token is not denser than prose at %.2f", cpt, c, prose)
		}
		cjk := "上下文管理是代理的核心。它把模型的窗口分成预算。"
		if got := tk.Count(cjk); got != len([]rune(cjk)) {
			t.Errorf("cpt %.1f: CJK text of %d runes is %d tokens, want one per rune", cpt, len([]rune(cjk)), got)
		}
	}
}

func TestTokenizerBasics(t *testing.T) {
	tk := newTokenizer(3.5)
	if n := tk.Count("<|im_start|>"); n != 1 {
		t.Errorf("a marker is %d tokens, want 1", n)
	}
	if n := tk.Count(""); n != 0 {
		t.Errorf("empty text is %d tokens", n)
	}
	a, b := tk.Tokens(nil, proseSample), tk.Tokens(nil, proseSample)
	if len(a) != tk.Count(proseSample) || commonPrefix(a, b) != len(a) {
		t.Error("tokenization is not deterministic or Count disagrees with Tokens")
	}
	// Changing one word late in the text keeps the tokens before it.
	changed := strings.Replace(proseSample, "marker between", "banner between", 1)
	c := tk.Tokens(nil, changed)
	at := strings.Index(proseSample, "marker between")
	before := tk.Count(proseSample[:at])
	if lcp := commonPrefix(a, c); lcp < before-2 || lcp >= len(a) {
		t.Errorf("common prefix %d after a late change, want about %d (of %d)", lcp, before, len(a))
	}
	for _, n := range []int{0, 1, 5, 40, 1000} {
		p := tk.Prefix(proseSample, n)
		if !strings.HasPrefix(proseSample, p) || tk.Count(p) > n {
			t.Errorf("Prefix(%d) = %d tokens or not a prefix", n, tk.Count(p))
		}
		if n < len(a) && tk.Count(p) < n-1 {
			t.Errorf("Prefix(%d) holds only %d tokens", n, tk.Count(p))
		}
	}
}

// TestTemplateLocality checks that a request which appends to the previous
// one (with the previous reply) starts with all of its tokens: the basis of
// the prefix cache.
func TestTemplateLocality(t *testing.T) {
	tk := newTokenizer(3.5)
	tools := []string{`{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}`}
	msgs := []ctxwin.Message{
		{Role: "system", Content: "You are a coding agent."},
		{Role: "user", Content: "Read go.mod please."},
	}
	reply := ctxwin.Message{Role: "assistant", Reasoning: "I should read it.", ToolCalls: []ctxwin.ToolCall{{ID: "a", Name: "read", Arguments: `{"path": "go.mod"}`}}}
	p1 := renderPrompt(tools, msgs)
	// The slot: the prompt's tokens, then the reply's as generated.
	slot := append(tk.Tokens(nil, p1), tk.Tokens(nil, generatedBody(reply))...)
	next := append(append([]ctxwin.Message{}, msgs...), reply, ctxwin.Message{Role: "tool", ToolCallID: "a", Content: "module x\n\ngo 1.26\n"})
	p2 := tk.Tokens(nil, renderPrompt(tools, next))
	if lcp := commonPrefix(slot, p2); lcp != len(slot) {
		t.Errorf("appending request shares %d of the slot's %d tokens", lcp, len(slot))
	}
	// Dropping the reasoning from the history diverges at that message.
	noReason := append([]ctxwin.Message{}, next...)
	noReason[2].Reasoning = ""
	p3 := tk.Tokens(nil, renderPrompt(tools, noReason))
	if lcp := commonPrefix(slot, p3); lcp >= len(slot) || lcp < tk.Count(p1)-1 {
		t.Errorf("history without reasoning shares %d tokens; want the %d of the first prompt", lcp, tk.Count(p1))
	}
	if len(p3) >= len(p2) {
		t.Errorf("reasoning costs nothing: %d tokens with, %d without", len(p2), len(p3))
	}
	// Arguments the model wrote in another spelling than tojson's: the
	// template re-serialises them, so reuse ends inside the call.
	compact := reply
	compact.ToolCalls = []ctxwin.ToolCall{{ID: "a", Name: "read", Arguments: `{"path":"go.mod"}`}}
	slot2 := append(tk.Tokens(nil, p1), tk.Tokens(nil, generatedBody(compact))...)
	next[2] = compact
	p4 := tk.Tokens(nil, renderPrompt(tools, next))
	if lcp := commonPrefix(slot2, p4); lcp >= len(slot2) || lcp <= len(tk.Tokens(nil, p1)) {
		t.Errorf("re-serialised arguments: %d tokens shared of a slot of %d (prompt %d)", lcp, len(slot2), tk.Count(p1))
	}
	if got := tojson(`{"path":"a.go","n":[1,2.5,true,null],"s":"<x>"}`); got != `{"path": "a.go", "n": [1, 2.5, true, null], "s": "<x>"}` {
		t.Errorf("tojson: %s", got)
	}
}

func FuzzTokenizer(f *testing.F) {
	f.Add(proseSample, 3.5, 10)
	f.Add("func main() {\n\tfmt.Println(\"hi\")\n}\n<|im_end|>", 2.5, 3)
	f.Add("<|im_start|>user\n上下文 12345 <|x", 5.0, 1)
	f.Fuzz(func(t *testing.T, s string, cpt float64, n int) {
		tk := newTokenizer(cpt)
		prev := 0
		tk.scan(s, func(start, end int) {
			if start != prev || end <= start || end > len(s) {
				t.Fatalf("token [%d,%d) after %d in %d bytes", start, end, prev, len(s))
			}
			prev = end
		})
		if prev != len(s) {
			t.Fatalf("tokens cover %d of %d bytes", prev, len(s))
		}
		p := tk.Prefix(s, n)
		if !strings.HasPrefix(s, p) || n >= 0 && tk.Count(p) > max(n, 0) {
			t.Fatalf("Prefix(%d) broken", n)
		}
	})
}
