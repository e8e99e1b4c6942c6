package ctxwin

import "testing"

func TestChip(t *testing.T) {
	b := NewBudget(24000, 2048)
	c := NewChip(16000, &b)
	if c.Text != "ctx 16k/24k (81% of 20k)" {
		t.Errorf("chip %q, want the seed's ctx 16k/24k (81%% of 20k)", c.Text)
	}
	if !c.Warning || c.Percent != 81 || c.Window != 24000 || c.ShedPoint != 19756 {
		t.Errorf("chip fields %+v", c)
	}
	// Warning from 80% of the shed point.
	below := NewChip(b.ShedPoint*79/100, &b)
	at := NewChip(b.ShedPoint*80/100+1, &b)
	if below.Warning || !at.Warning {
		t.Errorf("warning at 79%%: %v, at 80%%: %v", below.Warning, at.Warning)
	}
	none := NewChip(16000, nil)
	if none.Text != "ctx 16k" || none.Warning || none.Window != 0 || none.Percent != 0 {
		t.Errorf("no-window chip %+v", none)
	}
}

func TestFormatTokens(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1.0k"}, {1250, "1.3k"}, {8789, "8.8k"}, {9949, "9.9k"}, {9950, "10k"}, {9999, "10k"},
		{10000, "10k"}, {13829, "14k"}, {19756, "20k"}, {113356, "113k"},
	} {
		if got := FormatTokens(tt.n); got != tt.want {
			t.Errorf("FormatTokens(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
