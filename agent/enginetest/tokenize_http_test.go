package enginetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func postJSON(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestTokenizeEndpoint checks /tokenize and /apply-template in each shape's
// form: the counts are the fake's own tokenization, the one its prompt
// tokens come from.
func TestTokenizeEndpoint(t *testing.T) {
	text := "func main() {\n\tfmt.Println(\"hello, world\")\n}\n" + proseSample
	msgs := []obj{{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": text}}
	tool := obj{"type": "function", "function": obj{"name": "read", "parameters": obj{"type": "object"}}}
	for _, shape := range []string{ShapeLlamaCpp, ShapeLlamaCpp2025, ShapeVLLM} {
		t.Run(shape, func(t *testing.T) {
			srv := New(Options{Shape: shape})
			defer srv.Close()
			want := srv.Tokens(text)
			prompt := srv.PromptTokens([]string{string(mustJSON(tool))},
				[]ctxwin.Message{{Role: "system", Content: "You are a coding agent."}, {Role: "user", Content: text}})
			if shape == ShapeVLLM {
				var got struct {
					Count       int      `json:"count"`
					MaxModelLen int      `json:"max_model_len"`
					Tokens      []uint32 `json:"tokens"`
					TokenStrs   []string `json:"token_strs"`
				}
				status, body := postJSON(t, srv.RootURL()+"/tokenize", obj{"model": DefaultModel, "prompt": text, "add_special_tokens": false})
				if status != 200 || json.Unmarshal(body, &got) != nil || got.Count != want || len(got.Tokens) != want || got.MaxModelLen != DefaultWindow {
					t.Fatalf("prompt form: %d %s; want count %d", status, body, want)
				}
				status, body = postJSON(t, srv.RootURL()+"/tokenize", obj{"model": DefaultModel, "messages": msgs, "tools": []obj{tool}})
				if status != 200 || json.Unmarshal(body, &got) != nil || got.Count != prompt {
					t.Fatalf("chat form: %d %s; want the prompt's %d tokens", status, body, prompt)
				}
				// No llama.cpp routes.
				if status, _ := postJSON(t, srv.RootURL()+"/apply-template", obj{"messages": msgs}); status != 404 {
					t.Errorf("vLLM answers /apply-template with %d", status)
				}
				return
			}
			var ids struct {
				Tokens []uint32 `json:"tokens"`
			}
			status, body := postJSON(t, srv.RootURL()+"/tokenize", obj{"content": text})
			if status != 200 || json.Unmarshal(body, &ids) != nil || len(ids.Tokens) != want {
				t.Fatalf("tokenize: %d %s; want %d tokens", status, body, want)
			}
			var pieces struct {
				Tokens []struct {
					ID    uint32 `json:"id"`
					Piece string `json:"piece"`
				} `json:"tokens"`
			}
			status, body = postJSON(t, srv.RootURL()+"/tokenize", obj{"content": text, "with_pieces": true})
			if status != 200 || json.Unmarshal(body, &pieces) != nil || len(pieces.Tokens) != want {
				t.Fatalf("with_pieces: %d %.200s", status, body)
			}
			var joined strings.Builder
			for i, p := range pieces.Tokens {
				joined.WriteString(p.Piece)
				if p.ID != ids.Tokens[i] {
					t.Fatalf("piece %d has id %d, the plain answer %d", i, p.ID, ids.Tokens[i])
				}
			}
			if joined.String() != text {
				t.Error("the pieces do not spell the text")
			}
			var tmpl struct {
				Prompt string `json:"prompt"`
			}
			status, body = postJSON(t, srv.RootURL()+"/apply-template", obj{"messages": msgs, "tools": []obj{tool}})
			if status != 200 || json.Unmarshal(body, &tmpl) != nil || srv.Tokens(tmpl.Prompt) != prompt {
				t.Fatalf("apply-template: %d %.200s; want a prompt of %d tokens", status, body, prompt)
			}
			if srv.TokenizeCalls() != 2 {
				t.Errorf("%d tokenize calls counted, want 2", srv.TokenizeCalls())
			}
		})
	}
	for _, o := range []Options{{Shape: ShapeOllama}, {Shape: ShapeHosted}, {Shape: ShapeLMStudio}, {Shape: ShapeLlamaCpp, NoTokenize: true}, {Shape: ShapeVLLM, NoTokenize: true}} {
		srv := New(o)
		if status, _ := postJSON(t, srv.RootURL()+"/tokenize", obj{"content": "x", "prompt": "x"}); status != 404 {
			t.Errorf("%s (NoTokenize %v): /tokenize answers %d, want 404", o.Shape, o.NoTokenize, status)
		}
		srv.Close()
	}
}

// TestCodeDensity checks that CodeCharsPerToken sets the density of real Go
// source, not only of the sample it is calibrated on.
func TestCodeDensity(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	var code strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code.Write(b)
	}
	for _, want := range []float64{2.5, 3, 4.5} {
		srv := New(Options{CodeCharsPerToken: want})
		got := float64(code.Len()) / float64(srv.Tokens(code.String()))
		if got < want*0.88 || got > want*1.12 {
			t.Errorf("CodeCharsPerToken %.1f: this package's Go source tokenizes at %.2f chars/token", want, got)
		}
		srv.Close()
	}
}
