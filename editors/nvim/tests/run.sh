#!/usr/bin/env bash
# Runs the Neovim plugin's tests in headless Neovim, one Neovim per spec
# file:
#   unit/         pure Lua and editor-side logic, no server
#   client/       the plugin against lspdouble, a scripted stand-in for
#                 reika-lsp built from tests/lspdouble
#   integration/  the plugin against the real reika-lsp ($REIKA_LSP_BIN, set
#                 by test.sh; built here when unset) and the standalone fake
#                 engine (agent/enginetest/cmd/fakeengine, built here), which
#                 each spec starts with its script from fixtures/
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
trap 'rm -rf "$tmp"' EXIT

echo "nvim: $(nvim --version | head -n1)"

(cd "$root" && go build -o "$tmp/lspdouble" ./editors/nvim/tests/lspdouble)
(cd "$root" && go build -o "$tmp/fakeengine" ./agent/enginetest/cmd/fakeengine)
if [ -z "${REIKA_LSP_BIN:-}" ]; then
	(cd "$root" && go build -o "$tmp/reika-lsp" ./cmd/reika-lsp)
	REIKA_LSP_BIN="$tmp/reika-lsp"
elif [ ! -x "$REIKA_LSP_BIN" ]; then
	echo "run.sh: REIKA_LSP_BIN=$REIKA_LSP_BIN is not an executable" >&2
	exit 1
fi
export REIKA_LSP_BIN
export REIKA_TEST_DOUBLE="$tmp/lspdouble"
export REIKA_TEST_FAKEENGINE="$tmp/fakeengine"
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

for spec in "$here"/unit/*_spec.lua "$here"/client/*_spec.lua "$here"/integration/*_spec.lua; do
	selected "$spec" "$@" || continue
	run_spec "$spec"
done

echo "nvim: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then
	printf 'run.sh: failed: %s\n' "${failures[@]}" >&2
	exit 1
fi
