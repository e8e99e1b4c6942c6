#!/usr/bin/env bash
# Runs the Neovim plugin's tests in headless Neovim, one Neovim per spec
# file:
#   unit/         pure Lua and editor-side logic, no server
#   client/       the plugin against lspdouble, a scripted stand-in for
#                 reika-lsp built from tests/lspdouble
#   integration/  the plugin against the real reika-lsp ($REIKA_LSP_BIN,
#                 set by test.sh) and the standalone fake engine; skipped with
#                 a notice while the server cannot serve or the fake engine
#                 is missing
# Exits non-zero when any test fails. Arguments filter spec files by name.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)

if ! command -v nvim >/dev/null 2>&1; then
	echo "run.sh: nvim not found (apt-get install neovim)" >&2
	exit 1
fi

tmp=$(mktemp -d)
engine_pid=
cleanup() {
	if [ -n "$engine_pid" ]; then
		kill "$engine_pid" 2>/dev/null || true
		wait "$engine_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "nvim: $(nvim --version | head -n1)"

(cd "$root" && go build -o "$tmp/lspdouble" ./editors/nvim/tests/lspdouble)
export REIKA_TEST_DOUBLE="$tmp/lspdouble"
export REIKA_TEST_TMP="$tmp"

passed=0
failed=0
skipped=0
failures=()

# run_spec FILE: one headless Neovim for one spec file. `timeout` is a hang
# guard only.
run_spec() {
	local spec=$1 rc=0
	timeout 600 nvim --headless -u NONE -i NONE -n \
		--cmd "set rtp^=$plugin" \
		-c "lua dofile('$here/runner.lua').main('$spec')" </dev/null >"$tmp/out" 2>&1 || rc=$?
	cat "$tmp/out"
	local line
	line=$(grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/out" | tail -n1 || true)
	if [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
		return
	fi
	if [ -n "$line" ]; then
		local p f s
		p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
		s=$(sed -E 's/.* ([0-9]+) skipped$/\1/' <<<"$line")
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + s))
	fi
	if [ "$rc" != 0 ]; then
		failures+=("$spec (exit $rc)")
		if [ -z "$line" ] || [ "${f:-0}" = 0 ]; then
			failed=$((failed + 1))
		fi
	fi
}

selected() {
	local spec=$1
	shift
	[ $# -eq 0 ] && return 0
	for pat in "$@"; do
		case "$spec" in *"$pat"*) return 0 ;; esac
	done
	return 1
}

for spec in "$here"/unit/*_spec.lua "$here"/client/*_spec.lua; do
	selected "$spec" "$@" || continue
	run_spec "$spec"
done

# The integration test needs a serving reika-lsp and the fake engine.
integration_skip=
if [ -z "${REIKA_LSP_BIN:-}" ] || [ ! -x "${REIKA_LSP_BIN:-}" ]; then
	integration_skip="REIKA_LSP_BIN is not set to an executable (test.sh sets it)"
elif [ ! -d "$root/agent/enginetest/cmd/fakeengine" ]; then
	integration_skip="the fake engine (agent/enginetest/cmd/fakeengine) is not in this tree yet"
else
	# Does the binary serve LSP? Send initialize and look for capabilities.
	body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}'
	probe=$( (printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body"; sleep 5) |
		timeout 10 "$REIKA_LSP_BIN" 2>"$tmp/probe.err" | head -c 4096 || true)
	if ! grep -q '"capabilities"' <<<"$probe"; then
		integration_skip="$REIKA_LSP_BIN does not answer initialize yet ($(head -c 200 "$tmp/probe.err" | tr '\n' ' '))"
	fi
fi

if selected integration "$@"; then
	if [ -n "$integration_skip" ]; then
		echo "run.sh: SKIPPED the integration test (real reika-lsp + fake engine): $integration_skip" >&2
		skipped=$((skipped + 1))
	else
		(cd "$root" && go build -o "$tmp/fakeengine" ./agent/enginetest/cmd/fakeengine)
		mkfifo "$tmp/engine.fifo"
		"$tmp/fakeengine" -addr 127.0.0.1:0 -ctx 16000 -script "$here/fixtures/engine-script.json" \
			>"$tmp/engine.fifo" 2>"$tmp/engine.err" &
		engine_pid=$!
		url=
		exec 3<"$tmp/engine.fifo"
		read -r -t 30 url <&3 || true
		# Keep draining the engine's stdout so it never blocks on a full pipe.
		cat <&3 >/dev/null &
		exec 3<&-
		if [ -z "$url" ]; then
			echo "run.sh: the fake engine printed no URL: $(cat "$tmp/engine.err")" >&2
			failed=$((failed + 1))
			failures+=("integration (fake engine did not start)")
		else
			export REIKA_TEST_ENGINE_URL="$url"
			for spec in "$here"/integration/*_spec.lua; do
				run_spec "$spec"
			done
		fi
	fi
fi

echo "nvim: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then
	printf 'run.sh: failed: %s\n' "${failures[@]}" >&2
	exit 1
fi
