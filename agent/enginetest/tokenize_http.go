package enginetest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// The counting endpoints, answered with the fake's own tokenizer:
//
//   - llama.cpp (both shapes): POST /tokenize {"content": "…", "with_pieces":
//     bool} → {"tokens": [id, …]}, or with pieces {"tokens": [{"id": id,
//     "piece": "…"}, …]}; POST /apply-template with a chat request body →
//     {"prompt": "…"}, the prompt the chat template renders for it.
//   - vLLM: POST /tokenize (at the server root, not under /v1) with
//     {"prompt": "…"} or a chat body {"messages": […], "tools": […],
//     "add_generation_prompt": bool} → {"count": n, "max_model_len": W,
//     "tokens": [id, …], "token_strs": null}.
//
// Other shapes have neither, as their engines do not (Ollama, LM Studio,
// hosted endpoints): the routes answer 404. Options.NoTokenize turns them
// off for the llama.cpp and vLLM shapes too, as a proxy in front of the
// engine might.

// hasTokenize reports whether the shape serves /tokenize.
func (s *Server) hasTokenize() bool {
	return !s.opts.NoTokenize && (s.isLlama() || s.opts.Shape == ShapeVLLM)
}

// tokenizeRequest is the body of POST /tokenize in both engines' forms.
type tokenizeRequest struct {
	Content    *string         `json:"content"` // llama.cpp
	WithPieces bool            `json:"with_pieces"`
	Prompt     *string         `json:"prompt"` // vLLM, completion form
	Messages   json.RawMessage `json:"messages"`
	// AddGenerationPrompt is vLLM's chat form; nil means true.
	AddGenerationPrompt *bool `json:"add_generation_prompt"`
}

// tokenize serves POST /tokenize.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	var req tokenizeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, s.errorBody(400, "", "invalid JSON in request body: "+err.Error(), "", nil, nil))
		return
	}
	text := ""
	switch {
	case s.isLlama() && req.Content != nil:
		text = *req.Content
	case s.opts.Shape == ShapeVLLM && req.Prompt != nil:
		text = *req.Prompt
	case s.opts.Shape == ShapeVLLM && len(req.Messages) > 0:
		p, err := parseRequest(body)
		if err != nil {
			writeJSON(w, 400, s.errorBody(400, "", err.Error(), "messages", nil, nil))
			return
		}
		text = renderPrompt(p.toolJSON, p.Messages)
		if req.AddGenerationPrompt != nil && !*req.AddGenerationPrompt {
			text = strings.TrimSuffix(text, generationPrompt)
		}
	default:
		msg := `"content" must be a string`
		if s.opts.Shape == ShapeVLLM {
			msg = `either "prompt" or "messages" is required`
		}
		writeJSON(w, 400, s.errorBody(400, "", msg, "", nil, nil))
		return
	}
	s.mu.Lock()
	s.tokenizeCalls++
	s.mu.Unlock()
	if s.isLlama() {
		writeJSON(w, 200, mustJSON(obj{"tokens": s.llamaTokens(text, req.WithPieces)}))
		return
	}
	ids := s.tokenIDs(text)
	writeJSON(w, 200, mustJSON(obj{"count": len(ids), "max_model_len": s.opts.Window, "tokens": ids, "token_strs": nil}))
}

// llamaTokens is llama.cpp's "tokens": ids, or {"id","piece"} objects.
func (s *Server) llamaTokens(text string, withPieces bool) any {
	if !withPieces {
		return s.tokenIDs(text)
	}
	var out []obj
	s.tok.scan(text, func(start, end int) {
		out = append(out, obj{"id": hash(text[start:end]), "piece": text[start:end]})
	})
	if out == nil {
		out = []obj{}
	}
	return out
}

func (s *Server) tokenIDs(text string) []uint32 {
	ids := s.tok.Tokens(nil, text)
	if ids == nil {
		ids = []uint32{}
	}
	return ids
}

// applyTemplate serves llama.cpp's POST /apply-template.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	p, err := parseRequest(body)
	if err != nil {
		writeJSON(w, 400, s.errorBody(400, "", err.Error(), "", nil, nil))
		return
	}
	writeJSON(w, 200, mustJSON(obj{"prompt": renderPrompt(p.toolJSON, p.Messages)}))
}

// TokenizeCalls is how many /tokenize requests the engine answered.
func (s *Server) TokenizeCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenizeCalls
}
