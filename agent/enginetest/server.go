package enginetest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// ServeHTTP routes a request to the endpoints of the server's shape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+path)
	loaded, loading := s.loaded, s.loading
	s.mu.Unlock()

	if loading && s.isLlama() {
		// llama-server answers every route so while it loads its model.
		writeJSON(w, 503, mustJSON(obj{"error": obj{"message": "Loading model", "type": "unavailable_error", "code": 503}}))
		return
	}
	if !s.authorized(r, s.isPublic(path)) {
		s.unauthorized(w)
		return
	}
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	llama := s.isLlama()
	shape := s.opts.Shape
	switch {
	case post && (path == "/v1/chat/completions" || path == "/chat/completions" && llama):
		s.chat(w, r)
	case get && (path == "/v1/models" || path == "/models" && llama):
		writeJSON(w, 200, mustJSON(s.modelsListing()))
	case post && path == "/tokenize" && s.hasTokenize():
		s.tokenize(w, r)
	case post && path == "/apply-template" && llama && s.hasTokenize():
		s.applyTemplate(w, r)
	case get && path == "/props" && llama:
		writeJSON(w, 200, mustJSON(s.props()))
	case get && path == "/slots" && llama:
		writeJSON(w, 200, mustJSON(s.slots()))
	case get && path == "/metrics" && llama:
		writeJSON(w, 501, s.errorBody(501, "not_supported_error", "This server does not support metrics endpoint. Start it with `--metrics`", "", nil, nil))
	case get && (path == "/health" || path == "/v1/health") && llama:
		writeJSON(w, 200, []byte(`{"status":"ok"}`))
	case get && path == "/health" && shape == ShapeVLLM:
		w.WriteHeader(200)
	case get && path == "/version" && shape == ShapeVLLM:
		writeJSON(w, 200, []byte(`{"version":"0.11.2"}`))
	case get && path == "/api/version" && shape == ShapeOllama:
		writeJSON(w, 200, []byte(`{"version":"0.12.6"}`))
	case get && path == "/api/ps" && shape == ShapeOllama:
		writeJSON(w, 200, mustJSON(s.ollamaPS(loaded)))
	case post && path == "/api/show" && shape == ShapeOllama:
		s.ollamaShowHandler(w, r)
	case get && path == "/api/v0/models" && shape == ShapeLMStudio:
		writeJSON(w, 200, mustJSON(s.lmstudioV0(loaded)))
	case get && path == "/api/v1/models" && shape == ShapeLMStudio:
		writeJSON(w, 200, mustJSON(s.lmstudioV1(loaded)))
	default:
		s.notFound(w)
	}
}

func (s *Server) ollamaShowHandler(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, mustJSON(obj{"error": "invalid JSON: " + err.Error()}))
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if !s.modelMatches(name) {
		writeJSON(w, 404, mustJSON(obj{"error": "model '" + name + "' not found"}))
		return
	}
	writeJSON(w, 200, mustJSON(s.ollamaShow()))
}

// modelMatches reports whether a request's model names the served model.
// llama.cpp in single-model mode serves whatever model is asked for; Ollama
// adds the ":latest" tag to a bare name.
func (s *Server) modelMatches(name string) bool {
	if s.isLlama() {
		return true
	}
	if name == s.opts.Model {
		return true
	}
	if s.opts.Shape == ShapeOllama {
		return name+":latest" == s.opts.Model || name == s.opts.Model+":latest"
	}
	return false
}
