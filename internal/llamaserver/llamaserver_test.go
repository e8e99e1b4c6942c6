package llamaserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStartServesTheModelWithTheFlagsGiven(t *testing.T) {
	tree := Find(t)
	if !strings.Contains(tree.Version, "version") {
		t.Errorf("version %q", tree.Version)
	}
	s := Start(t, tree, Config{Model: RandomModel(t), Ctx: 2048, Parallel: 2, Alias: "tiny"})
	code, body := get(t, s.URL()+"/models")
	if code != 200 {
		t.Fatalf("GET /v1/models: %d %s", code, body)
	}
	var l struct {
		Data []struct {
			ID   string `json:"id"`
			Meta struct {
				NCtx int `json:"n_ctx"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil || len(l.Data) != 1 {
		t.Fatalf("listing %s: %v", body, err)
	}
	if l.Data[0].ID != "tiny" || l.Data[0].Meta.NCtx != 1024 {
		t.Errorf("id %q n_ctx %d, want tiny and 1024 (-c 2048 over -np 2)", l.Data[0].ID, l.Data[0].Meta.NCtx)
	}
	if s.WaitLog("listening", 1, 10*time.Second) < 1 {
		t.Errorf("the log was not captured:\n%s", s.Log())
	}
	port := s.Port()
	s.Restart()
	if s.Port() != port {
		t.Errorf("restarted on port %d, was %d", s.Port(), port)
	}
	if code, _ := get(t, s.RootURL()+"/health"); code != 200 {
		t.Errorf("after the restart /health answers %d", code)
	}
	s.Stop()
	if _, err := http.Get(s.RootURL() + "/health"); err == nil {
		t.Error("the server still answers after Stop")
	}
}

func TestHoldLoadAnswers503UntilReleased(t *testing.T) {
	tree := Find(t)
	s := Start(t, tree, Config{Model: RandomModel(t), Ctx: 1024, Parallel: 1, HoldLoad: true})
	for _, p := range []string{"/health", "/v1/models", "/props"} {
		code, body := get(t, s.RootURL()+p)
		if code != 503 || !strings.Contains(body, "Loading model") {
			t.Errorf("GET %s while held: %d %s", p, code, body)
		}
	}
	s.Release()
	if code, body := get(t, s.RootURL()+"/v1/models"); code != 200 {
		t.Errorf("after Release: %d %s", code, body)
	}
}

func TestStopEndsAServerStillHeld(t *testing.T) {
	tree := Find(t)
	s := Start(t, tree, Config{Model: RandomModel(t), Ctx: 1024, HoldLoad: true})
	s.Stop()
	if _, err := http.Get(s.RootURL() + "/health"); err == nil {
		t.Error("the server still answers after Stop")
	}
}
