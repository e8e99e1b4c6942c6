package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestMain(m *testing.M) {
	if os.Getenv("REIKA_TOOLS_HELPER") == "secrets" {
		os.Exit(helperSecrets())
	}
	goleak.VerifyTestMain(m)
}

// workspace creates a workspace holding files (slash paths → content) and
// returns its root with symlinks resolved.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(rel)), content)
	}
	return root
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// approver records approval requests and answers them with decide.
type approver struct {
	mu     sync.Mutex
	asked  []approval.Request
	decide func(approval.Request) bool
}

func (a *approver) approve(_ context.Context, ap approval.Request) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, ap)
	if a.decide == nil {
		return true
	}
	return a.decide(ap)
}

func (a *approver) kinds() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var k []string
	for _, ap := range a.asked {
		k = append(k, ap.Kind)
	}
	return k
}

func allow(approval.Request) bool { return true }
func deny(approval.Request) bool  { return false }

// newEnv is an Env over root with its own temp dir, the disk as Files and
// ap as the approver.
func newEnv(t testing.TB, root string, ap *approver) *Env {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Root: root, Files: DiskFiles{}, Approve: ap.approve, TempDir: tmp}
}

// run calls the tool named name with args (a JSON text) and fails the test
// on a Go error.
func run(t testing.TB, env *Env, name, args string) ctxwin.Result {
	t.Helper()
	res, err := Call(context.Background(), env, All(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Go error %v", name, args, err)
	}
	return res
}

// jsonArgs builds tool arguments.
func jsonArgs(t testing.TB, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeFiles is Files with open editor buffers over the disk: reads of an
// open path return the buffer, writes to it change the buffer only.
type fakeFiles struct {
	mu      sync.Mutex
	buffers map[string]string // absolute path → content
	writes  []string          // paths written, in order
}

func (f *fakeFiles) ReadFile(path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.buffers[path]; ok {
		return []byte(b), nil
	}
	return os.ReadFile(path)
}

func (f *fakeFiles) WriteFile(ctx context.Context, path string, content []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, path)
	if _, ok := f.buffers[path]; ok {
		f.buffers[path] = string(content)
		return nil
	}
	return DiskFiles{}.WriteFile(ctx, path, content)
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s: %q does not contain %q", what, got, s)
		}
	}
}

func chmod(p string, m os.FileMode) error { return os.Chmod(p, m) }

func mode(p string) (os.FileMode, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}

// regexpFind returns the submatches of expr in s, failing the test when
// there is no match.
func regexpFind(t *testing.T, expr, s string) []string {
	t.Helper()
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no match for %s in %q", expr, truncate(s, 2000))
	}
	return m
}
