package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

func BenchmarkGrepGoSource(b *testing.B) {
	env := newEnv(b, goSrc(b), &approver{})
	var res Result
	for b.Loop() {
		res = run(b, env, "grep", `{"pattern":"func \\(\\w+ \\*Reader\\) Read\\(","glob":"*.go"}`)
	}
	b.Log(res.Summary)
}

func BenchmarkGlobGoSource(b *testing.B) {
	env := newEnv(b, goSrc(b), &approver{})
	var res Result
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
