#!/usr/bin/env bash
# Runs the whole test suite: Go (vet, tests, and the race detector on agent
# and lsp), the VS Code extension's tests (and the extension in real VS Code
# when .ci/prepare-vscode has installed it) and the Neovim plugin's tests in
# headless Neovim.
#
# With REIKA_TEST_STRICT=1 (as in .ci/run) a missing Node.js, Neovim (0.7 or
# 0.10) or real-editor setup fails the run instead of skipping that part.
set -euo pipefail
cd "$(dirname "$0")"

strict=${REIKA_TEST_STRICT:-0}
skip() {
	if [ "$strict" = 1 ]; then
		echo "test.sh: $1 (required: REIKA_TEST_STRICT=1)" >&2
		exit 1
	fi
	echo "test.sh: SKIPPED: $1" >&2
}

# phase NAME starts a part of the run; the summary at the end says how long
# each part took.
times=""
phase_name=""
phase_start=$SECONDS
phase() {
	end_phase
	phase_name=$1
	phase_start=$SECONDS
	echo "== $1"
}
end_phase() {
	if [ -n "$phase_name" ]; then
		times="$times$(printf '%5ds  %s' $((SECONDS - phase_start)) "$phase_name")"$'\n'
	fi
	phase_name=""
}

phase "go vet"
go vet ./...
phase "go test"
go test -timeout 20m ./...
# The session, its log and the server's turns are shared between goroutines
# (a turn, save, settings changes, discovery): the race detector watches them.
# -short: the long replays (a 128k session, eight survey windows, fifty torn
# logs) ran in full above, and add rounds here, not sharing.
phase "go test -race -short (agent, lsp)"
go test -race -short -timeout 20m ./agent/... ./lsp/...

# The editor tests drive the real binary.
mkdir -p bin
go build -o bin/reika-lsp ./cmd/reika-lsp
export REIKA_LSP_BIN="$PWD/bin/reika-lsp"

if [ -f editors/vscode/package.json ]; then
	if command -v npm >/dev/null 2>&1; then
		phase "editors/vscode"
		(cd editors/vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm test)
	else
		skip "npm not found: the VS Code extension's tests did not run"
	fi
fi

# The packaged extension in real VS Code (code-server and Chromium, from
# .ci/prepare-vscode); it skips with a notice when they are not installed,
# and fails then in strict mode.
if [ -f editors/vscode/test/editor/editor.test.js ]; then
	if command -v npm >/dev/null 2>&1; then
		phase "editors/vscode in real VS Code"
		(cd editors/vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && node --test test/editor/editor.test.js)
	else
		skip "npm not found: the real-editor test of the VS Code extension did not run"
	fi
fi

# run.sh finds the Neovims (0.7.2 on PATH, 0.10 from .ci/prepare-nvim) and
# skips, or fails under REIKA_TEST_STRICT=1, when one is missing.
if [ -f editors/nvim/tests/run.sh ]; then
	phase "editors/nvim"
	editors/nvim/tests/run.sh
fi
end_phase
printf '%s' "$times"
echo "test.sh: all tests passed in ${SECONDS}s"
