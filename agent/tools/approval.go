package tools

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// approvalDiff is a diff as an approval shows it: whole up to
// approval.DetailBytes, else cut with a line that says how much is not shown.
func approvalDiff(diff string) string {
	if len(diff) <= approval.DetailBytes {
		return diff
	}
	shown := truncate(diff, approval.DetailBytes)
	shown = strings.TrimSuffix(shown, "…")
	return shown + fmt.Sprintf("\n… (the diff goes on for %d more bytes, not shown)\n", len(diff)-len(shown))
}
