package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// Figures are one policy's run of one session at one window on one engine.
type Figures struct {
	Policy string `json:"policy"`
	Window int    `json:"window"`
	Engine string `json:"engine"`
	Seed   int64  `json:"seed"`
	// Kind is the session's kind (KindSurvey, KindBugfix).
	Kind string `json:"kind"`
	// Rounds is the session's rounds; Served those the model answered (a
	// refused round is skipped: its scripted reply is appended unseen).
	Rounds int `json:"rounds"`
	Served int `json:"served"`
	// Requests counts every chat request, summary and note calls included.
	Requests int `json:"requests"`
	// Prefill is the prompt tokens the engine processed (Σ prompt_n) over
	// every request; LowerBound the same session's append-only cost (see
	// README); Ratio their quotient.
	Prefill    int     `json:"prefill"`
	LowerBound int     `json:"lowerBound"`
	Ratio      float64 `json:"ratio"`
	// Cost is the engine work context management costs, as a multiple of
	// the lower bound: (Prefill + GenWeight × SummaryTokens) / LowerBound,
	// every generated token of a note or summary counted as GenWeight
	// prefilled ones.
	Cost float64 `json:"cost"`
	// Invalidations counts requests whose reused prefix (cache_n) is
	// shorter than the previous request's prompt.
	Invalidations int `json:"invalidations"`
	// Overflows counts requests the engine refused as too long;
	// FirstOverflow is the round of the first (-1 when none).
	Overflows     int `json:"overflows"`
	FirstOverflow int `json:"firstOverflowRound"`
	// PeakContext and MeanContext are the prompt tokens of the served
	// rounds' requests: what the model had in front of it.
	PeakContext int     `json:"peakContext"`
	MeanContext float64 `json:"meanContext"`
	// SummaryCalls counts summary requests (reika: note rounds);
	// SummaryTokens is what they generated.
	SummaryCalls  int `json:"summaryCalls"`
	SummaryTokens int `json:"summaryTokens"`
	// EngineSeconds is the engine time context management costs, as the
	// fake engine simulates it: prompt processing of every request
	// (PromptMSPerToken, 0.5 ms a token) plus the generation of summaries
	// and notes (genMSPerToken, 20 ms a token). The session's own replies
	// are the same for every policy and left out.
	EngineSeconds float64 `json:"engineSeconds"`
	// CutReplies counts replies the engine cut short for lack of room.
	CutReplies int `json:"cutReplies"`
	// Sheds and Folds are reika's shrink events.
	Sheds int `json:"sheds,omitempty"`
	Folds int `json:"folds,omitempty"`
	// ShrinkAt is, for each of reika's shrinks, the engine's count of the
	// request it replaced as a share of the shed point: how close to the
	// shed point the shrinks fire.
	ShrinkAt []float64 `json:"shrinkAt,omitempty"`
	// Retention is, per turn, the share of the facts its answer uses that
	// are still in view in the request the answer replies to (retention.go).
	Retention []float64 `json:"retention"`
	// Verbatim is, per turn, the share of those facts whose cited lines
	// the request shows verbatim (verbatim.go).
	Verbatim []float64 `json:"verbatim"`
	// Context is, per round, the prompt tokens of its served request; 0
	// when it was refused.
	Context  []int    `json:"context"`
	Problems []string `json:"problems,omitempty"`
}

// genMSPerToken is the fake engine's simulated generation time per token
// (its timings.predicted_ms).
const genMSPerToken = 20.0

// traceTo, when set, receives one line per request of the runs of
// tracePolicy.
var (
	traceTo     io.Writer
	tracePolicy string
)

// dumpDir, when set, receives one file per run of tracePolicy and of the
// lower bound, one JSON line per request (dumpLine): what each request
// sent and what the engine made of it, to find where a policy pays more
// than the lower bound.
var dumpDir string

// dumpLine is one request of a dumped run.
type dumpLine struct {
	Index    int                `json:"index"`
	Kind     string             `json:"kind"`
	Round    int                `json:"round"`
	Prompt   int                `json:"prompt"`
	CacheN   int                `json:"cacheN"`
	PromptN  int                `json:"promptN"`
	Chunks   []enginetest.Chunk `json:"chunks,omitempty"`
	Restored bool               `json:"restored,omitempty"`
	Slot     int                `json:"slot"`
	// Facts are, on the request a task's answer replies to, the facts the
	// answer uses, and Retention the share of them in view (retention.go).
	Facts     []Fact          `json:"facts,omitempty"`
	Retention *float64        `json:"retention,omitempty"`
	Verbatim  *float64        `json:"verbatim,omitempty"`
	Body      json.RawMessage `json:"body"`
}

// dump writes a run's requests to dumpDir; shares and exact are its
// answers' retention and verbatim retention, by turn (answerRetention).
func dump(policy string, window int, eng engineSpec, s *Session, recs []enginetest.Recorded, ann *annotations, shares, exact []float64) error {
	name := fmt.Sprintf("%s-%s-%s-%d.jsonl", policy, kTokens(window), eng.Name, s.Seed)
	if policy == lowerBoundName {
		name = fmt.Sprintf("lower-%d.jsonl", s.Seed)
	}
	f, err := os.Create(filepath.Join(dumpDir, name))
	if err != nil {
		return err
	}
	answers := answerRequests(s, recs, ann)
	enc := json.NewEncoder(f)
	for k, r := range recs {
		an, _ := ann.get(r.Index)
		body := json.RawMessage(r.Body)
		if !json.Valid(body) {
			body = nil
		}
		l := dumpLine{Index: r.Index, Kind: an.Kind, Round: an.Round, Prompt: r.PromptTokens, CacheN: r.CacheN, PromptN: r.PromptN,
			Chunks: r.Chunks, Restored: r.Restored, Slot: r.Slot, Body: body}
		if t, ok := answers[k]; ok {
			l.Facts, l.Retention, l.Verbatim = s.Turns[t].Facts, &shares[t], &exact[t]
		}
		if err := enc.Encode(l); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// figures reads a run's figures from what the engine recorded.
func figures(policy string, window int, eng engineSpec, s *Session, recs []enginetest.Recorded, ann *annotations) *Figures {
	f := &Figures{Policy: policy, Window: window, Engine: eng.Name, Seed: s.Seed, Kind: s.Kind, Rounds: s.Rounds(), FirstOverflow: -1,
		Context: make([]int, s.Rounds())}
	f.Retention, f.Verbatim = answerRetention(s, recs, ann)
	if dumpDir != "" && (policy == tracePolicy || policy == lowerBoundName) {
		if err := dump(policy, window, eng, s, recs, ann, f.Retention, f.Verbatim); err != nil {
			f.Problems = append(f.Problems, "dump: "+err.Error())
		}
	}
	prev := -1 // the previous served request's prompt tokens
	lost := 0
	for _, r := range recs {
		if r.Path != "/v1/chat/completions" {
			continue
		}
		f.Requests++
		an, ok := ann.get(r.Index)
		if !ok {
			f.Problems = append(f.Problems, fmt.Sprintf("request %d reached no script", r.Index))
			continue
		}
		if an.Lost {
			lost++
		}
		if traceTo != nil && policy == tracePolicy {
			fmt.Fprintf(traceTo, "%s %s %d: %s round %d prompt %d cache %d prefill %d chunks %d restored %v overflow %v finish %s msgs %d\n", policy, eng.Name, r.Index, an.Kind, an.Round+1,
				r.PromptTokens, r.CacheN, r.PromptN, len(r.Chunks), r.Restored, r.Overflowed, r.Reply.Finish, len(r.Request.Messages))
		}
		if an.Kind != kindMain {
			f.SummaryCalls++
		}
		if r.Overflowed {
			f.Overflows++
			if f.FirstOverflow < 0 {
				f.FirstOverflow = an.Round
			}
			continue
		}
		if r.Status != 200 {
			f.Problems = append(f.Problems, fmt.Sprintf("request %d: HTTP %d", r.Index, r.Status))
			continue
		}
		f.Prefill += r.PromptN
		f.EngineSeconds += r.PromptMS / 1000
		if an.Kind != kindMain {
			f.SummaryTokens += r.CompletionTokens
			f.EngineSeconds += float64(r.CompletionTokens) * genMSPerToken / 1000
		}
		if prev >= 0 && r.CacheN < prev {
			f.Invalidations++
		}
		prev = r.PromptTokens
		if r.Reply.Finish == "length" {
			f.CutReplies++
		}
		if an.Kind == kindMain && an.Round >= 0 && an.Round < len(f.Context) {
			f.Context[an.Round] = r.PromptTokens
		}
	}
	sum := 0
	for _, c := range f.Context {
		if c > 0 {
			f.Served++
			sum += c
			f.PeakContext = max(f.PeakContext, c)
		}
	}
	if f.Served > 0 {
		f.MeanContext = float64(sum) / float64(f.Served)
	}
	if lost > 0 {
		f.Problems = append(f.Problems, fmt.Sprintf("%d requests did not show the position the script expected", lost))
	}
	return f
}
