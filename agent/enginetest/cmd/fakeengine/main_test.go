package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRun starts the command as a test would (port 0, a script file), reads
// the base URL from its first stdout line, asks it for a note, and stops it
// by closing stdin.
func TestRun(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"note":"NOTE_TEXT","replies":[{"tool_calls":[{"name":"read","arguments":{"path":"a.go"}}]},{"content":"done"}]}`), 0o644)

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr bytes.Buffer
	exit := make(chan int, 1)
	go func() {
		exit <- run([]string{"-addr", "127.0.0.1:0", "-ctx", "16000", "-script", script, "-stdin"}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (stderr %s)", err, stderr.String())
	}
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Fatalf("first line %q", line)
	}
	go io.Copy(io.Discard, stdoutR)

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ask := func(body string) map[string]any {
		resp, err := c.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return m
	}
	first := ask(`{"messages":[{"role":"user","content":"fix a.go"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`)
	msg := first["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if calls, _ := msg["tool_calls"].([]any); len(calls) != 1 {
		t.Errorf("first reply: %v", msg)
	}
	note := ask(`{"messages":[{"role":"user","content":"what do you know?"}],"tool_choice":"none"}`)
	if got := note["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "NOTE_TEXT" {
		t.Errorf("note reply: %v", got)
	}
	resp, err := c.Get(base + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models map[string]any
	json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if !strings.Contains(toJSON(models), `"n_ctx":16000`) {
		t.Errorf("models: %v", models)
	}

	stdinW.Close()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second): // hang guard
		t.Fatal("fakeengine did not stop when stdin closed")
	}
}

func TestRunBadFlags(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"-shape", "gpt"},
		{"-nope"},
		{"extra"},
	} {
		if code := run(args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"replies":[{"contnet":"x"}]}`), 0o644)
	errb.Reset()
	if code := run([]string{"-script", bad}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), "contnet") {
		t.Errorf("bad script: exit %d, %s", code, errb.String())
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
