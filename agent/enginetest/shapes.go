package enginetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// created is the fixed "created" timestamp of every object the fake makes,
// so that its output is deterministic.
const created = 1780000000

type obj = map[string]any

func (s *Server) isLlama() bool {
	return s.opts.Shape == ShapeLlamaCpp || s.opts.Shape == ShapeLlamaCpp2025
}

// modelsListing is the body of GET /v1/models in the shape's form.
func (s *Server) modelsListing() obj {
	o := s.opts
	switch o.Shape {
	case ShapeLlamaCpp:
		// tools/server/server-context.cpp (2026): an Ollama-style "models"
		// list beside the OpenAI "data" list whose meta carries the per-slot
		// n_ctx and the training context.
		return obj{
			"models": []obj{{
				"name": o.Model, "model": o.Model, "modified_at": "", "size": "", "digest": "",
				"type": "model", "description": "", "tags": []string{""}, "capabilities": []string{"completion"},
				"parameters": "", "details": obj{"parent_model": "", "format": "gguf", "family": "",
					"families": []string{""}, "parameter_size": "", "quantization_level": ""},
			}},
			"object": "list",
			"data": []obj{{
				"id": o.Model, "aliases": []string{o.Model}, "tags": []string{},
				"object": "model", "created": created, "owned_by": "llamacpp",
				"meta": obj{"vocab_type": 2, "n_vocab": 151936, "n_ctx": o.Window, "n_ctx_train": o.TrainedWindow,
					"n_embd": 2048, "n_params": 30532122624, "size": 17280000000, "ftype": "Q4_K_M"},
			}},
		}
	case ShapeLlamaCpp2025:
		// Late 2025: meta without n_ctx; the window is only in /props.
		return obj{
			"object": "list",
			"data": []obj{{
				"id": o.Model, "object": "model", "created": created, "owned_by": "llamacpp",
				"meta": obj{"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": o.TrainedWindow,
					"n_embd": 2048, "n_params": 30532122624, "size": 17280000000},
			}},
		}
	case ShapeVLLM:
		return obj{"object": "list", "data": []obj{{
			"id": o.Model, "object": "model", "created": created, "owned_by": "vllm",
			"root": o.Model, "parent": nil, "max_model_len": o.Window,
			"permission": []obj{{
				"id": "modelperm-0", "object": "model_permission", "created": created,
				"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true,
				"allow_search_indices": false, "allow_view": true, "allow_fine_tuning": false,
				"organization": "*", "group": nil, "is_blocking": false,
			}},
		}}}
	case ShapeOllama:
		return obj{"object": "list", "data": []obj{{
			"id": o.Model, "object": "model", "created": created, "owned_by": "library",
		}}}
	case ShapeLMStudio:
		return obj{"object": "list", "data": []obj{{
			"id": o.Model, "object": "model", "owned_by": "organization_owner",
		}}}
	}
	// hosted: ids only.
	return obj{"object": "list", "data": []obj{{
		"id": o.Model, "object": "model", "created": created, "owned_by": "system",
	}}}
}

// genParams is the "params" object of /props and /slots, abridged.
func genParams() obj {
	return obj{"seed": 4294967295, "temperature": 0.800000011920929, "top_k": 40, "top_p": 0.949999988079071,
		"min_p": 0.05000000074505806, "max_tokens": -1, "n_predict": -1, "stream": false, "chat_format": "peg-native"}
}

// props is llama.cpp's GET /props (llama-server 0.7.0, build 11669):
// default_generation_settings holds only params and the per-slot n_ctx.
func (s *Server) props() obj {
	if s.opts.Shape == ShapeLlamaCpp2025 {
		// Late 2025 builds also put the slot's fields there.
		return obj{
			"default_generation_settings": obj{"id": 0, "id_task": -1, "n_ctx": s.opts.Window, "speculative": false,
				"is_processing": false, "params": genParams()},
			"total_slots": s.slotCount(), "model_path": "/models/" + s.opts.Model + ".gguf",
			"chat_template": "{%- for message in messages %}...{%- endfor %}", "modalities": obj{"vision": false},
			"build_info": "b7000-fake0000",
		}
	}
	return obj{
		"default_generation_settings": obj{"params": genParams(), "n_ctx": s.opts.Window},
		"total_slots":                 s.slotCount(),
		"model_alias":                 s.opts.Model,
		"model_ftype":                 "Q4_K_M",
		"model_path":                  "/models/" + s.opts.Model + ".gguf",
		"modalities":                  obj{"vision": false, "video": false, "audio": false},
		"endpoint_slots":              true,
		"endpoint_props":              false,
		"endpoint_metrics":            false,
		"chat_template":               "{%- for message in messages %}...{%- endfor %}",
		"bos_token":                   "<|endoftext|>",
		"eos_token":                   markEnd,
		"build_info":                  "b11669-fake",
		"is_sleeping":                 false,
	}
}

func (s *Server) slotCount() int { return max(s.opts.Slots, 1) }

// slots is llama.cpp's GET /slots: every slot with its per-slot window
// and, once it ran a task, that task as llama-server 0.7.0 shows it (the
// prompt's size; the processed and cached counts read 0 once it is done).
func (s *Server) slots() []obj {
	s.mu.Lock()
	states := slices.Clone(s.cache.slots)
	s.mu.Unlock()
	out := make([]obj, 0, len(states))
	for i, st := range states {
		sl := obj{"id": i, "n_ctx": s.opts.Window, "speculative": false, "is_processing": false}
		if st.task >= 0 {
			sl["id_task"] = st.task
			sl["n_prompt_tokens"] = st.prompt
			sl["n_prompt_tokens_processed"] = 0
			sl["n_prompt_tokens_cache"] = 0
			sl["params"] = genParams()
			sl["next_token"] = []obj{{"has_next_token": false, "has_new_line": false, "n_remain": -1, "n_decoded": 0}}
		}
		out = append(out, sl)
	}
	return out
}

// ollamaShow is Ollama's POST /api/show.
func (s *Server) ollamaShow() obj {
	params := "stop                           \"<|im_start|>\"\nstop                           \"<|im_end|>\""
	if s.opts.OllamaNumCtx {
		params = fmt.Sprintf("num_ctx                        %d\n", s.opts.Window) + params
	}
	return obj{
		"license":    "Apache License 2.0",
		"modelfile":  "FROM " + s.opts.Model,
		"parameters": params,
		"template":   "{{- range .Messages }}...{{ end }}",
		"details": obj{"parent_model": "", "format": "gguf", "family": "qwen3", "families": []string{"qwen3"},
			"parameter_size": "30.5B", "quantization_level": "Q4_K_M"},
		"model_info": obj{
			"general.architecture":     "qwen3",
			"general.parameter_count":  30532122624,
			"qwen3.context_length":     s.opts.TrainedWindow,
			"qwen3.embedding_length":   2048,
			"qwen3.attention.head_cnt": 32,
		},
		"capabilities": []string{"completion", "tools"},
		"modified_at":  "2026-01-01T00:00:00Z",
	}
}

// ollamaPS is Ollama's GET /api/ps: the loaded models with their allocated
// context.
func (s *Server) ollamaPS(loaded bool) obj {
	models := []obj{}
	if loaded {
		models = append(models, obj{
			"name": s.opts.Model, "model": s.opts.Model, "size": 21000000000, "digest": "0123456789ab",
			"details":    obj{"parent_model": "", "format": "gguf", "family": "qwen3", "families": []string{"qwen3"}, "parameter_size": "30.5B", "quantization_level": "Q4_K_M"},
			"expires_at": "2026-01-01T00:05:00Z", "size_vram": 21000000000, "context_length": s.opts.Window,
		})
	}
	return obj{"models": models}
}

// lmstudioV0 is LM Studio's GET /api/v0/models.
func (s *Server) lmstudioV0(loaded bool) obj {
	m := obj{
		"id": s.opts.Model, "object": "model", "type": "llm", "publisher": "lmstudio-community",
		"arch": "qwen3", "compatibility_type": "gguf", "quantization": "Q4_K_M",
		"state": "not-loaded", "max_context_length": s.opts.TrainedWindow,
	}
	if loaded {
		m["state"] = "loaded"
		m["loaded_context_length"] = s.opts.Window
	}
	return obj{"object": "list", "data": []obj{m}}
}

// lmstudioV1 is LM Studio 0.4's GET /api/v1/models.
func (s *Server) lmstudioV1(loaded bool) obj {
	inst := []obj{}
	if loaded {
		inst = append(inst, obj{"id": s.opts.Model, "config": obj{"context_length": s.opts.Window}})
	}
	return obj{"models": []obj{{
		"type": "llm", "publisher": "lmstudio-community", "key": s.opts.Model, "display_name": s.opts.Model,
		"loaded_instances": inst, "max_context_length": s.opts.TrainedWindow,
		"capabilities": obj{"vision": false, "trained_for_tool_use": true},
	}}}
}

// errorType names an HTTP status in the shape's vocabulary.
func (s *Server) errorType(status int) string {
	switch {
	case s.isLlama():
		switch status {
		case 400:
			return "invalid_request_error"
		case 401:
			return "authentication_error"
		case 403:
			return "permission_error"
		case 404:
			return "not_found_error"
		case 501:
			return "not_supported_error"
		case 503, 429:
			return "unavailable_error"
		}
		return "server_error"
	case s.opts.Shape == ShapeVLLM:
		switch status {
		case 400:
			return "BadRequestError"
		case 404:
			return "NotFoundError"
		case 401:
			return "Unauthorized"
		}
		return "InternalServerError"
	}
	switch status {
	case 400, 401, 404:
		return "invalid_request_error"
	case 429:
		return "requests"
	}
	return "server_error"
}

// errorBody is an error response body in the shape's form. extra adds keys
// to the error object (llama.cpp's n_prompt_tokens and n_ctx); param and
// code are used where the shape has them ("" and nil are JSON null).
func (s *Server) errorBody(status int, typ, msg string, param string, code any, extra obj) []byte {
	if typ == "" {
		typ = s.errorType(status)
	}
	var e obj
	switch {
	case s.isLlama():
		e = obj{"code": status, "message": msg, "type": typ}
	case s.opts.Shape == ShapeVLLM:
		e = obj{"message": msg, "type": typ, "param": nullable(param), "code": status}
		if s.opts.FlatErrors {
			e["object"] = "error"
			for k, v := range extra {
				e[k] = v
			}
			return mustJSON(e)
		}
	default:
		e = obj{"message": msg, "type": typ, "param": nullable(param), "code": code}
	}
	for k, v := range extra {
		e[k] = v
	}
	return mustJSON(obj{"error": e})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(body)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// notFound answers an unknown route in the shape's form.
func (s *Server) notFound(w http.ResponseWriter) {
	if s.opts.Shape == ShapeVLLM {
		writeJSON(w, 404, []byte(`{"detail":"Not Found"}`))
		return
	}
	if s.opts.Shape == ShapeOllama {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(404)
		w.Write([]byte("404 page not found"))
		return
	}
	writeJSON(w, 404, s.errorBody(404, "not_found_error", "File Not Found", "", nil, nil))
}

// authorized checks the API key; public routes pass without one.
func (s *Server) authorized(r *http.Request, public bool) bool {
	if s.opts.APIKey == "" || public {
		return true
	}
	return r.Header.Get("Authorization") == "Bearer "+s.opts.APIKey
}

func (s *Server) unauthorized(w http.ResponseWriter) {
	if s.isLlama() {
		writeJSON(w, 401, s.errorBody(401, "authentication_error", "Invalid API Key", "", nil, nil))
		return
	}
	writeJSON(w, 401, s.errorBody(401, "invalid_request_error", "Incorrect API key provided.", "", "invalid_api_key", nil))
}

// isPublic reports whether llama.cpp serves a route without the API key:
// with --api-key, llama-server 0.7.0 (build 11669) answers only /health
// without it (401 authentication_error "Invalid API Key" everywhere else,
// /v1/models, /props and /slots included).
func (s *Server) isPublic(path string) bool {
	if !s.isLlama() {
		return false
	}
	switch strings.TrimSuffix(path, "/") {
	case "/health", "/v1/health":
		return true
	}
	return false
}
