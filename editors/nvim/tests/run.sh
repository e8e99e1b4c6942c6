#!/usr/bin/env bash
# Runs the Neovim plugin's tests in headless Neovim, one Neovim per spec
# file, on each Neovim it finds (the version of each is printed):
#   unit/         pure Lua and editor-side logic, no server
#   client/       the plugin against reika-lsp's server (lsp.Serve) over a
#                 scripted agent: lsp/lsptest/cmd/scriptedlsp, built here
#   integration/  the plugin against the real reika-lsp ($REIKA_LSP_BIN, set
#                 by test.sh; built here when unset) and the standalone fake
#                 engine (agent/enginetest/cmd/fakeengine, built here), which
#                 each spec starts with its script from fixtures/, and the
#                 test MCP server (agent/mcp/mcptest/cmd/mcptestserver)
#
# The Neovims: $REIKA_NVIM (paths, separated by spaces) when set, else the
# `nvim` on PATH (Debian bookworm's is 0.7.2) and Debian trixie's 0.10 that
# .ci/prepare-nvim unpacks under $REIKA_CACHE_DIR. With REIKA_TEST_STRICT=1
# (CI) both 0.7 and 0.10 must be among them; elsewhere a missing one is
# skipped with a notice.
#
# Exits non-zero when any test fails. Arguments filter spec files by name.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
strict=${REIKA_TEST_STRICT:-0}
cache=${REIKA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/reika-lsp}

if [ -n "${REIKA_NVIM:-}" ]; then
	read -r -a candidates <<<"$REIKA_NVIM"
else
	candidates=()
	if command -v nvim >/dev/null 2>&1; then
		candidates+=("$(command -v nvim)")
	fi
	if [ -x "$cache/nvim-0.10/bin/nvim" ]; then
		candidates+=("$cache/nvim-0.10/bin/nvim")
	fi
fi

# nvims and versions: each distinct Neovim that runs, with its version
# (0.7.2, 0.10.4, ...).
nvims=()
versions=()
for nv in "${candidates[@]}"; do
	v=$("$nv" --version 2>/dev/null | sed -n '1s/^NVIM v\([0-9][0-9.]*\).*/\1/p' || true)
	if [ -z "$v" ]; then
		echo "run.sh: $nv does not run (nvim --version failed)" >&2
		[ "$strict" = 1 ] && exit 1
		continue
	fi
	case " ${versions[*]:-} " in *" $v "*) continue ;; esac
	nvims+=("$nv")
	versions+=("$v")
done

missing=()
for want in 0.7 0.10; do
	case " ${versions[*]:-} " in *" $want".*) ;; *) missing+=("$want") ;; esac
done
for want in "${missing[@]}"; do
	case $want in
	0.7) how="apt-get install neovim on Debian bookworm" ;;
	*) how=".ci/prepare-nvim unpacks Debian trixie's" ;;
	esac
	if [ "$strict" = 1 ]; then
		echo "run.sh: Neovim $want not found ($how; required: REIKA_TEST_STRICT=1)" >&2
		exit 1
	fi
	echo "run.sh: SKIPPED: Neovim $want not found: the plugin's tests did not run on it ($how)" >&2
done
if [ ${#nvims[@]} -eq 0 ]; then
	echo "run.sh: SKIPPED: no Neovim found: the plugin's tests did not run" >&2
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/scriptedlsp" ./lsp/lsptest/cmd/scriptedlsp)
(cd "$root" && go build -o "$tmp/fakeengine" ./agent/enginetest/cmd/fakeengine)
(cd "$root" && go build -o "$tmp/mcptestserver" ./agent/mcp/mcptest/cmd/mcptestserver)
if [ -z "${REIKA_LSP_BIN:-}" ]; then
	(cd "$root" && go build -o "$tmp/reika-lsp" ./cmd/reika-lsp)
	REIKA_LSP_BIN="$tmp/reika-lsp"
elif [ ! -x "$REIKA_LSP_BIN" ]; then
	echo "run.sh: REIKA_LSP_BIN=$REIKA_LSP_BIN is not an executable" >&2
	exit 1
fi
export REIKA_LSP_BIN
export REIKA_TEST_SCRIPTED="$tmp/scriptedlsp"
export REIKA_TEST_FAKEENGINE="$tmp/fakeengine"
export REIKA_TEST_MCPSERVER="$tmp/mcptestserver"
export REIKA_TEST_TMP="$tmp"

passed=0
failed=0
skipped=0
failures=()

# run_spec NVIM FILE: one headless Neovim for one spec file. `timeout` is a
# hang guard only.
run_spec() {
	local nv=$1 spec=$2 rc=0
	timeout 600 "$nv" --headless -u NONE -i NONE -n \
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
		failures+=("$spec on Neovim $version (exit $rc)")
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

for i in "${!nvims[@]}"; do
	version=${versions[$i]}
	# .ci/prepare-nvim's tree lists the Debian packages it unpacked.
	pkgs=$(dirname "$(dirname "$(readlink -f "${nvims[$i]}")")")/versions
	deb=$(sed -n 's/^neovim \(.*\)/, Debian package \1/p' "$pkgs" 2>/dev/null || true)
	echo "== Neovim $version (${nvims[$i]}$deb)"
	p0=$passed f0=$failed s0=$skipped
	for spec in "$here"/unit/*_spec.lua "$here"/client/*_spec.lua "$here"/integration/*_spec.lua; do
		selected "$spec" "$@" || continue
		run_spec "${nvims[$i]}" "$spec"
	done
	echo "nvim-$version: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped"
done

echo "nvim: ran on Neovim ${versions[*]}"
echo "nvim: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then
	printf 'run.sh: failed: %s\n' "${failures[@]}" >&2
	exit 1
fi
