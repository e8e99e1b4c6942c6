package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestPeersNameNoSlot replays a short session under every peer on a
// 4-slot engine, through the product's engine client (which pins a slot
// per session), and fails if any request a peer sends names a slot: the
// agents they model send no id_slot.
func TestPeersNameNoSlot(t *testing.T) {
	defer func(n int) { slots = n }(slots)
	slots = 4
	defer func() { dumpDir, tracePolicy = "", "" }()
	base := &reikaRun{system: "You are a coding agent."}
	for _, spec := range Policies {
		dumpDir, tracePolicy = t.TempDir(), spec.Name
		f, err := runPeer(context.Background(), testSession(), spec, 16384, Engines[1], base, filepath.Join(t.TempDir(), spec.Name))
		if err != nil {
			t.Fatal(err)
		}
		if f.Served == 0 {
			t.Fatalf("%s served nothing", spec.Name)
		}
		file, err := os.Open(filepath.Join(dumpDir, spec.Name+"-16k-chunk-7.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<24)
		n := 0
		for sc.Scan() {
			var l dumpLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			var body map[string]json.RawMessage
			if json.Unmarshal(l.Body, &body) != nil || body["messages"] == nil {
				continue
			}
			n++
			if s, ok := body["id_slot"]; ok {
				t.Errorf("%s: request %d names slot %s", spec.Name, l.Index, s)
			}
		}
		file.Close()
		if n == 0 {
			t.Errorf("%s: no chat request dumped", spec.Name)
		}
	}
}
