package tools

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// goSrc is the Go distribution's source tree, a large real workspace.
func goSrc(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source tree")
	}
	return src
}

// grep over the Go distribution's source, in Go and through ripgrep (when
// it is installed), for a rare pattern, the bench's kinds and a frequent
// one.
func BenchmarkGrepGoSource(b *testing.B) {
	env := newEnv(b, goSrc(b), &approver{})
	searches := []struct{ name, args string }{
		{"reader", `{"pattern":"func \\(\\w+ \\*Reader\\) Read\\(","glob":"*.go"}`},
		{"word", `{"pattern":"\\bNewReader\\b"}`},
		{"todo", `{"pattern":"(?i)todo|bug|note:","path":"net"}`},
		{"frequent", `{"pattern":"err","path":"net/http"}`},
	}
	for _, engine := range []string{"go", "ripgrep"} {
		if engine == "ripgrep" && ripgrepPath() == "" {
			b.Log("ripgrep not installed")
			continue
		}
		for _, s := range searches {
			b.Run(engine+"/"+s.name, func(b *testing.B) {
				saved := ripgrepMinBytes
				defer func() { ripgrepMinBytes = saved }()
				ripgrepMinBytes = math.MaxInt64
				if engine == "ripgrep" {
					ripgrepMinBytes = 0
				}
				var res ctxwin.Result
				for b.Loop() {
					res = run(b, env, "grep", s.args)
				}
				b.Log(res.Summary)
			})
		}
	}
}

func BenchmarkGlobGoSource(b *testing.B) {
	env := newEnv(b, goSrc(b), &approver{})
	var res ctxwin.Result
	for b.Loop() {
		res = run(b, env, "glob", `{"pattern":"**/*_test.go"}`)
	}
	b.Log(res.Summary)
}

// Paging through a long saved output: each read scans the file to count
// its lines.
func BenchmarkReadSavedOutput(b *testing.B) {
	env := newEnv(b, workspace(b, nil), &approver{})
	saved := filepath.Join(env.TempDir, "bash-1.txt")
	var sb strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&sb, "output line %d\n", i)
	}
	writeFile(b, saved, sb.String())
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		run(b, env, "read", fmt.Sprintf(`{"path":%q,"start_line":500000,"end_line":500100}`, saved))
	}
}

// The diff of a write: real Go files with up to 40 places edited.
func BenchmarkDiff(b *testing.B) {
	files := realFiles(b, 40)
	r := rand.New(rand.NewPCG(3, 4))
	pairs := make([][2][]string, len(files))
	for i, a := range files {
		pairs[i] = [2][]string{splitLines(a), splitLines(edited(r, a, files[(i+1)%len(files)], 40))}
	}
	for b.Loop() {
		for _, p := range pairs {
			unifiedDiff("a/f", "b/f", diffLines(p[0], p[1]))
		}
	}
}

// The diff of an edit with replace_all: a line that is every tenth of a
// 50000-line file.
func BenchmarkEditDiff(b *testing.B) {
	var sb strings.Builder
	for i := range 50000 {
		if i%10 == 0 {
			sb.WriteString("target\n")
		} else {
			fmt.Fprintf(&sb, "line %d\n", i)
		}
	}
	content := sb.String()
	offsets := findAll(content, "target")
	for b.Loop() {
		unifiedDiff("a/f", "b/f", replaceScript(content, offsets, "target", "TARGET"))
	}
}

// Turning a real page into Markdown: the Go specification (310 KB), from
// the Go distribution.
func BenchmarkHTMLToText(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	page, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "doc", "go_spec.html"))
	if err != nil {
		b.Skip("no go_spec.html:", err)
	}
	base, _ := url.Parse("https://go.dev/ref/spec")
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, _, err := htmlToText(string(page), base); err != nil {
			b.Fatal(err)
		}
	}
}
