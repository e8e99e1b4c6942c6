package ctxwin

import (
	"strings"
	"testing"
)

func TestEstimateBaselineAndNewBytes(t *testing.T) {
	var e Estimator
	if got := e.Tokens(4000, true); got != 1000 {
		t.Errorf("carried 4000 bytes at the baseline = %d tokens, want 1000", got)
	}
	if got := e.Tokens(1600, false); got != 1000 {
		t.Errorf("new 1600 bytes = %d tokens, want 1000 (1.6 chars/token)", got)
	}
	if got := e.CharsFor(1000); got != 1600 {
		t.Errorf("CharsFor(1000) = %d, want 1600", got)
	}
}

func TestEstimateLearnsDenseTokenization(t *testing.T) {
	var e Estimator
	// An engine at 2.5 chars/token reports 4000 tokens for 10000 bytes.
	e.Learn(4000, 10000)
	if r := e.LearnedRatio(); r != 1.6 {
		t.Errorf("ratio %v, want 1.6", r)
	}
	if got := e.Tokens(10000, true); got != 4000 {
		t.Errorf("carried 10000 bytes = %d tokens, want 4000", got)
	}
	// New bytes: never sparser than 1.6, and here the learned ratio is denser.
	if got := e.Tokens(10000, false); got != 6250 {
		t.Errorf("new 10000 bytes = %d tokens, want 6250 (1.6 chars/token)", got)
	}
	// Kept across turns: nothing resets it but another report.
	e.Learn(0, 10000)
	if r := e.LearnedRatio(); r != 1.6 {
		t.Errorf("a report of no usage changed the ratio to %v", r)
	}
}

func TestEstimateNeverSparserThanBaseline(t *testing.T) {
	var e Estimator
	// An engine at 5 chars/token teaches a ratio below 1 ...
	e.Learn(2000, 10000)
	if r := e.LearnedRatio(); r != 0.8 {
		t.Errorf("ratio %v, want 0.8", r)
	}
	// ... but decisions never assume sparser than 4 chars/token.
	if got := e.Tokens(10000, true); got != 2500 {
		t.Errorf("carried 10000 bytes = %d tokens, want 2500 (baseline)", got)
	}
}

func TestMissingUsageIsNotZero(t *testing.T) {
	var e Estimator
	e.Learn(0, 5000)
	e.Learn(-1, 5000)
	if e.Samples != 0 || e.Ratio != 0 {
		t.Errorf("missing usage was learned: %+v", e)
	}
	if got := e.Tokens(4000, true); got != 1000 {
		t.Errorf("estimate after missing usage %d, want 1000", got)
	}
}

func TestCarriedMessages(t *testing.T) {
	var e Estimator
	m := Message{Role: RoleTool, Content: strings.Repeat("x", 1000), ToolCallID: "c1"}
	if e.Carried(m) {
		t.Fatal("an unsent message is carried")
	}
	e.mark(m.hash())
	if !e.Carried(m) {
		t.Fatal("a sent message is not carried")
	}
	m2 := m
	m2.Content += "y"
	if e.Carried(m2) {
		t.Error("a changed message counts as carried")
	}
	if e.MessageTokens(m) >= e.MessageTokens(m2) {
		t.Error("a carried message is not cheaper than new bytes")
	}
}
