package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Engines, as reported in llm.ModelInfo.Engine.
const (
	EngineLlamaCpp = "llama.cpp"
	EngineVLLM     = "vllm"
	EngineOllama   = "ollama"
	EngineLMStudio = "lmstudio"
	EngineOpenAI   = "openai" // a hosted OpenAI-compatible endpoint
)

// probeTimeout bounds each discovery request.
const probeTimeout = 15 * time.Second

// discovery is the outcome of one discovery.
type discovery struct {
	info llm.ModelInfo
	// again says the answer may change soon (an Ollama or LM Studio model
	// not loaded yet), so the next Info asks again.
	again bool
}

// discover finds the model, the engine and the window, in the order of
// docs/design.md §3.1: the setting; the endpoint (its model listing, then the
// engine's own endpoints); the models.dev catalog for hosted endpoints.
// A window found nowhere leaves source "none" and a reason naming what was
// tried.
func (c *Client) discover(ctx context.Context) (discovery, error) {
	var d discovery
	info := &d.info
	listing, listed, notes, err := c.discoverListing(ctx, info)
	if err != nil {
		return d, err
	}
	model, entry, err := c.pickModel(listing, listed)
	if err != nil {
		return d, err
	}
	info.Model = model
	info.Engine = c.detectEngine(ctx, entry)
	c.logf("engine: %s at %s, model %s", orUnknown(info.Engine), c.displayURL, model)

	again, windowNotes := c.discoverWindow(ctx, info, listing, listed, entry)
	d.again = again
	notes = append(notes, windowNotes...)
	notes = append(notes, c.discoverCatalog(ctx, info)...)
	if info.Engine == EngineLlamaCpp {
		c.slotCount(ctx) // logged at discovery; /props was read already on late-2025 builds
	}

	if info.Window == 0 {
		info.WindowSource = llm.SourceNone
		info.Reason = "no context window found: " + strings.Join(notes, "; ") + "; set REIKA_CONTEXT_WINDOW (or contextWindow) to the engine's window"
		c.logf("engine: %s", info.Reason)
	}
	return d, nil
}

// discoverListing asks for the model listing, waiting while the engine
// loads its model. listed says whether the answer was a listing; notes say
// what failed when the failure leaves discovery to go on without one. The
// error ends discovery: an engine that cannot be reached (info then holds
// the configured model and window), one that refuses the API key, one
// still loading when the wait ran out.
func (c *Client) discoverListing(ctx context.Context, info *llm.ModelInfo) (listing modelListing, listed bool, notes []string, err error) {
	err = c.whileLoading(ctx, func() error {
		var e error
		listing, listed, e = c.listModels(ctx)
		return e
	})
	if err == nil {
		return listing, listed, nil, nil
	}
	var u *llm.UnreachableError
	if errors.As(err, &u) || ctx.Err() != nil {
		info.Model, info.WindowSource = c.cfg.Model, llm.SourceNone
		if c.cfg.ContextWindow > 0 {
			info.Window, info.WindowSource = c.cfg.ContextWindow, llm.SourceSetting
		}
		return listing, listed, nil, err
	}
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusForbidden) {
		return listing, listed, nil, fmt.Errorf("%s refused the request for its models (GET /models: %w): %s", c.displayURL, err, c.authHint())
	}
	if isLoading(err) {
		return listing, listed, nil, err // waited for too long
	}
	return listing, listed, []string{fmt.Sprintf("GET %s/models failed (%v)", c.displayURL, err)}, nil
}

// discoverWindow sets info's window from the setting, else from the model
// listing's entry, else from the engine's own endpoints. again says the
// engine's answer may change soon (a model not loaded yet); notes say
// where no window was found.
func (c *Client) discoverWindow(ctx context.Context, info *llm.ModelInfo, listing modelListing, listed bool, entry modelEntry) (again bool, notes []string) {
	if c.cfg.ContextWindow > 0 {
		info.Window, info.WindowSource = c.cfg.ContextWindow, llm.SourceSetting
		return false, nil
	}
	if n, where := c.listingWindow(listing, entry); n > 0 {
		info.Window, info.WindowSource = n, llm.SourceEndpoint
		c.logf("engine: window %d from GET /v1/models %s", n, where)
		return false, nil
	}
	if listed {
		notes = append(notes, "GET /v1/models states no window")
	}
	n, again, note := c.engineWindow(ctx, info.Engine, info.Model, len(listing.Data))
	if n > 0 {
		info.Window, info.WindowSource = n, llm.SourceEndpoint
		c.logf("engine: window %d from %s", n, note)
	} else if note != "" {
		notes = append(notes, note)
	}
	return again, notes
}

// discoverCatalog gives a hosted endpoint the window from the models.dev
// catalog when the endpoint gave none, and the output limit. (A llama.cpp,
// vLLM, Ollama or LM Studio server on a public address is not a hosted
// provider: its runtime limits are its own.) A local host never causes a
// catalog request. notes say why the catalog gave no window when none is
// known.
func (c *Client) discoverCatalog(ctx context.Context, info *llm.ModelInfo) (notes []string) {
	switch {
	case !c.local && info.Engine == EngineOpenAI:
		lim, note := c.catalogLimits(ctx, info.Model)
		if lim.context > 0 && info.Window == 0 {
			info.Window, info.WindowSource = lim.context, llm.SourceCatalog
			c.logf("engine: window %d from the models.dev catalog (%s)", lim.context, note)
		} else if lim.context == 0 && info.Window == 0 {
			notes = append(notes, note)
		}
		info.OutputLimit = lim.output
	case c.local && info.Window == 0:
		notes = append(notes, fmt.Sprintf("%s is a local host, so the models.dev catalog is not consulted", c.base.Hostname()))
	}
	return notes
}

// orUnknown is the engine name s, or "unknown engine" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown engine"
	}
	return s
}

// listModels fetches GET <base>/models. listed says whether the body was a
// model listing.
func (c *Client) listModels(ctx context.Context) (modelListing, bool, error) {
	b, err := c.get(ctx, c.baseURL+"/models")
	if err != nil {
		return modelListing{}, false, err
	}
	l, ok := parseModels(b)
	if !ok {
		return modelListing{}, false, fmt.Errorf("GET %s/models: not a model listing: %s", c.displayURL, plainText(b))
	}
	return l, true, nil
}

// pickModel resolves the configured model against the listing: the
// configured one must be listed; with none configured, the endpoint's only
// model (or only loaded model) is used.
func (c *Client) pickModel(l modelListing, listed bool) (string, modelEntry, error) {
	want := c.cfg.Model
	ids := l.ids()
	if want != "" {
		if e, ok := l.find(want); ok {
			return string(e.ID), e, nil
		}
		if !listed {
			return want, modelEntry{}, nil // the endpoint lists nothing: trust the setting
		}
		if len(ids) == 0 {
			return "", modelEntry{}, fmt.Errorf("model %q: %s lists no models", want, c.displayURL)
		}
		return "", modelEntry{}, fmt.Errorf("model %q is not served by %s; it lists: %s (set REIKA_MODEL to one of them)", want, c.displayURL, listIDs(ids))
	}
	if !listed {
		return "", modelEntry{}, fmt.Errorf("no model set and %s does not list its models; set REIKA_MODEL", c.displayURL)
	}
	switch len(ids) {
	case 0:
		return "", modelEntry{}, fmt.Errorf("%s lists no models; load one or set REIKA_MODEL", c.displayURL)
	case 1:
		return ids[0], l.Data[slices.IndexFunc(l.Data, func(e modelEntry) bool { return e.ID != "" })], nil
	}
	var loaded []modelEntry
	for _, e := range l.Data {
		if e.ID != "" && e.loaded() && (e.Status != nil || e.State != "") {
			loaded = append(loaded, e)
		}
	}
	if len(loaded) == 1 {
		return string(loaded[0].ID), loaded[0], nil
	}
	return "", modelEntry{}, fmt.Errorf("%s serves several models: %s; set REIKA_MODEL to one of them", c.displayURL, listIDs(ids))
}

func listIDs(ids []string) string {
	const max = 20
	if len(ids) > max {
		return strings.Join(ids[:max], ", ") + fmt.Sprintf(" and %d more", len(ids)-max)
	}
	return strings.Join(ids, ", ")
}

// listingWindow is the window the listing states for the model, or for the
// base model of a LoRA adapter (vLLM lists adapters without max_model_len).
func (c *Client) listingWindow(l modelListing, e modelEntry) (int, string) {
	if n, where := e.window(); n > 0 {
		return n, where
	}
	for _, base := range []optString{e.Root, e.Parent} {
		if base != "" && base != e.ID {
			if b, ok := l.find(string(base)); ok {
				if n, where := b.window(); n > 0 {
					return n, where + " of " + string(base)
				}
			}
		}
	}
	return 0, ""
}

// detectEngine names the engine from the listing's owned_by and, for a
// local endpoint that does not say, from the engines' own endpoints.
func (c *Client) detectEngine(ctx context.Context, e modelEntry) string {
	switch strings.ToLower(string(e.OwnedBy)) {
	case "llamacpp":
		return EngineLlamaCpp
	case "vllm":
		return EngineVLLM
	case "library":
		return EngineOllama
	case "organization_owner":
		return EngineLMStudio
	}
	if e.Meta != nil {
		return EngineLlamaCpp
	}
	if !c.local {
		return EngineOpenAI
	}
	if b, err := c.get(ctx, c.rootURL+"/api/version"); err == nil {
		var v struct {
			Version optString `json:"version"`
		}
		if lenient(b, &v) && v.Version != "" {
			return EngineOllama
		}
	}
	if b, err := c.get(ctx, c.rootURL+"/api/v0/models"); err == nil {
		if l, ok := parseModels(b); ok && len(l.Data) > 0 {
			return EngineLMStudio
		}
	}
	if b, err := c.get(ctx, c.rootURL+"/props"); err == nil {
		if _, ok := parseProps(b); ok {
			return EngineLlamaCpp
		}
	}
	if e.MaxModelLen.Valid {
		return EngineVLLM
	}
	return ""
}

// engineWindow asks the engine's own endpoints for the window: llama.cpp's
// /props, Ollama's /api/ps and /api/show, LM Studio's /api/v0 and /api/v1
// listings. note says where the window came from, or why there is none.
func (c *Client) engineWindow(ctx context.Context, engine, model string, listed int) (n int, again bool, note string) {
	switch engine {
	case EngineLlamaCpp:
		return c.llamaCppWindow(ctx, model, listed)
	case EngineOllama:
		return c.ollamaWindow(ctx, model)
	case EngineLMStudio:
		return c.lmStudioWindow(ctx, model)
	}
	return 0, false, ""
}

// llamaCppWindow reads the window from llama.cpp's /props (of model, in
// router mode when the server lists more than one), noting its slots.
func (c *Client) llamaCppWindow(ctx context.Context, model string, listed int) (n int, again bool, note string) {
	url := c.rootURL + "/props"
	if listed > 1 {
		url += "?model=" + neturl.QueryEscape(model) // router mode
	}
	b, err := c.get(ctx, url)
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusForbidden) {
		return 0, false, fmt.Sprintf("GET /props failed (%v: %s)", err, c.authHint())
	}
	if err != nil {
		return 0, false, fmt.Sprintf("GET /props failed (%v)", err)
	}
	if n, ok := parseTotalSlots(b); ok && listed <= 1 {
		c.noteSlots(n, "GET /props total_slots")
	}
	if n, ok := parseProps(b); ok {
		return n, false, "GET /props default_generation_settings.n_ctx"
	}
	return 0, false, "GET /props states no n_ctx"
}

// ollamaWindow reads the window of a loaded model from Ollama's /api/ps,
// else a num_ctx set in /api/show; again when it is not loaded yet.
func (c *Client) ollamaWindow(ctx context.Context, model string) (n int, again bool, note string) {
	if b, err := c.get(ctx, c.rootURL+"/api/ps"); err == nil {
		if n, ok := parseOllamaPS(b, model); ok {
			return n, false, "Ollama GET /api/ps context_length"
		}
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	b, err := c.do(ctx, http.MethodPost, c.rootURL+"/api/show", body)
	if err != nil {
		return 0, true, fmt.Sprintf("Ollama has not loaded %s and POST /api/show failed (%v)", model, err)
	}
	numCtx, trained := parseOllamaShow(b)
	if numCtx > 0 {
		return numCtx, false, "Ollama POST /api/show num_ctx"
	}
	note = fmt.Sprintf("Ollama has not loaded %s yet, so its window is unknown until it does", model)
	if trained > 0 {
		note += fmt.Sprintf(" (it was trained for %d tokens, but Ollama runs models with a smaller default context)", trained)
	}
	return 0, true, note
}

// lmStudioWindow reads the window of a loaded model from LM Studio's
// /api/v0 and /api/v1 listings; again when it is not loaded yet.
func (c *Client) lmStudioWindow(ctx context.Context, model string) (n int, again bool, note string) {
	maxCtx := 0
	if b, err := c.get(ctx, c.rootURL+"/api/v0/models"); err == nil {
		if loaded, m, ok := parseLMStudioV0(b, model); ok {
			if loaded > 0 {
				return loaded, false, "LM Studio GET /api/v0/models loaded_context_length"
			}
			maxCtx = m
		}
	}
	if b, err := c.get(ctx, c.rootURL+"/api/v1/models"); err == nil {
		if loaded, m, ok := parseLMStudioV1(b, model); ok {
			if loaded > 0 {
				return loaded, false, "LM Studio GET /api/v1/models loaded_instances context_length"
			}
			maxCtx = max(maxCtx, m)
		}
	}
	note = fmt.Sprintf("LM Studio has not loaded %s yet, so its window is unknown until it does", model)
	if maxCtx > 0 {
		note += fmt.Sprintf(" (its maximum is %d tokens, but LM Studio loads models with a smaller context by default)", maxCtx)
	}
	return 0, true, note
}
