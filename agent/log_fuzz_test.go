package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// fuzzLog is a small log: a start record and turns, rounds and events.
func fuzzLog(t testing.TB) ([]byte, []record) {
	t.Helper()
	recs := []record{{Kind: recStart, Session: "s", Root: "/w", System: "sys"}}
	for i := range 8 {
		recs = append(recs, record{Kind: recTurn, Turn: i + 1, Prompt: fmt.Sprintf("prompt %d\nwith a newline", i)})
		recs = append(recs, record{Kind: recRound, Reply: &ctxwin.Message{Role: "assistant", Content: fmt.Sprintf("reply {%d}", i)}})
		recs = append(recs, record{Kind: recInfo, Text: fmt.Sprintf("info %d", i)})
	}
	var b []byte
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	return b, recs
}

// FuzzGarbageMidLog inserts garbage at an offset of a log: every record
// whose line the garbage did not touch is read, in order, before and after
// it; and after the garbage is set aside the log reads the same records
// with nothing skipped.
func FuzzGarbageMidLog(f *testing.F) {
	f.Add(uint16(100), []byte("garbage\n"))
	f.Add(uint16(0), []byte("\x00\x00\x00\n"))
	f.Add(uint16(300), []byte("}\n{\n"))
	f.Add(uint16(512), []byte(`{"t":"round","reply":{"con`+"\n"))
	f.Add(uint16(40), []byte("not json at all"))
	f.Fuzz(func(t *testing.T, at uint16, junk []byte) {
		orig, recs := fuzzLog(t)
		off := int(at) % (len(orig) + 1)
		data := append(append(append([]byte{}, orig[:off]...), junk...), orig[off:]...)
		got, _, skipped, bad, err := readRecords(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		// The records the garbage left whole: those ending at or before
		// off, and those starting after it (the one starting at off is
		// whole when the garbage ends a line).
		var want []string
		start, lastStart := 0, 0
		for i, r := range recs {
			lastStart = start
			line, _ := json.Marshal(r)
			end := start + len(line) + 1
			if end <= off || start > off || (start == off && (len(junk) == 0 || junk[len(junk)-1] == '\n')) {
				want = append(want, recs[i].Kind+"|"+recs[i].Prompt+recs[i].Text)
			}
			start = end
		}
		var have []string
		for _, r := range got {
			have = append(have, r.Kind+"|"+r.Prompt+r.Text)
		}
		if !isSubsequence(want, have) {
			t.Fatalf("garbage %q at %d: read %d records %q, want (in order) %q", junk, off, len(have), have, want)
		}
		// A broken tail only when the garbage is in or after the last
		// record's line.
		if bad != nil && off < lastStart {
			t.Fatalf("garbage %q at %d: a broken tail at %d", junk, off, bad.Off)
		}
		if len(skipped) == 0 {
			return
		}
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := openLog(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		kept, err := l.setAside(skipped)
		if err != nil {
			t.Fatal(err)
		}
		var aside []byte
		for _, s := range skipped {
			aside = append(aside, data[s.Off:s.Off+int64(s.Len)]...)
		}
		if k, _ := os.ReadFile(kept); !bytes.Equal(k, aside) {
			t.Fatalf("kept %q, want %q", k, aside)
		}
		again, _, skipped2, _, _ := readRecords(l.f, l.size)
		if len(skipped2) != 0 || len(again) != len(got) {
			t.Fatalf("after setting aside: %d records, %d skipped; want %d, 0", len(again), len(skipped2), len(got))
		}
	})
}

func isSubsequence(want, have []string) bool {
	i := 0
	for _, h := range have {
		if i < len(want) && h == want[i] {
			i++
		}
	}
	return i == len(want)
}
