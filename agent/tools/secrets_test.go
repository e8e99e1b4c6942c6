package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// helperSecrets is the helper process of TestSecretsHiddenFromCommands: it
// hides the key as the agent does (the variable apiKeyEnv names, and the
// names the config file gives), then runs one command and prints what the
// command saw of its own environment and of its parent's.
func helperSecrets() int {
	if err := HideSecrets([]string{"MY_LLM_KEY", "PROFILE_KEY"}, []string{os.Getenv("MY_LLM_KEY")}); err != nil {
		fmt.Println("HideSecrets:", err)
		return 1
	}
	env := &Env{Root: os.Getenv("HELPER_ROOT"), Approve: func(context.Context, approval.Request) bool { return true }}
	res, err := Call(context.Background(), env, All(), NameBash,
		json.RawMessage(`{"command":"env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"}`))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Print(res.Text)
	dumpable, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, 3, 0, 0) // PR_GET_DUMPABLE
	fmt.Printf("dumpable=%d\n", dumpable)
	return 0
}

// TestSecretsHiddenFromCommands runs a process whose environment holds the
// key under three names: a command it runs sees none of them, neither in
// its environment nor in its parent's (/proc/$PPID/environ), and the
// process is no longer dumpable.
func TestSecretsHiddenFromCommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent's environment is hidden on Linux only")
	}
	const key = "sk-test-0123456789abcdef"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REIKA_TOOLS_HELPER=secrets", "HELPER_ROOT="+workspace(t, nil),
		"REIKA_API_KEY=sk-reika-api-key-value", "MY_LLM_KEY="+key, "PROFILE_KEY=sk-profile-key-value", "COPY_OF_KEY="+key,
		"VISIBLE_VAR=still-here")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	own, parent, ok := strings.Cut(string(out), "---\n")
	if !ok {
		t.Fatalf("helper printed:\n%s", out)
	}
	for _, part := range []struct{ name, text string }{{"the command's environment", own}, {"/proc/$PPID/environ", parent}} {
		if !strings.Contains(part.text, "VISIBLE_VAR=still-here") {
			t.Errorf("%s was not read:\n%s", part.name, part.text)
		}
		for _, secret := range []string{key, "sk-reika-api-key-value", "sk-profile-key-value"} {
			if strings.Contains(part.text, secret) {
				t.Errorf("%s shows the secret %q", part.name, secret)
			}
		}
	}
	if !strings.Contains(string(out), "dumpable=0\n") {
		t.Errorf("the process is still dumpable:\n%s", out)
	}
}
