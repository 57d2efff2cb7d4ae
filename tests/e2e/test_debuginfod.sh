#!/bin/bash
# Symbols from a real debuginfod server: record a program (its own binary and a library it
# links), move both away so this machine no longer has them, serve them from Debian's
# debuginfod on the loopback, and check that xpu-report names the samples through it
# (DEBUGINFOD_URLS) as it did with the files in place, and names none of them without it.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_debuginfod
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v debuginfod >/dev/null || skip "no debuginfod server (apt-get install debuginfod)"
command -v debuginfod-find >/dev/null || skip "no debuginfod-find (apt-get install debuginfod)"
tmp=$(mktemp -d) || exit 1
srv_pid=
trap '[ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null; rm -rf "$tmp"' EXIT
bin=$tmp/bin
mkdir -p "$bin" "$tmp/served" "$tmp/cache"
NOFP="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
gcc $NOFP -fPIC -shared -o "$bin/libdwchain.so" tests/e2e/dwarf/chain_lib.c &&
	gcc $NOFP -o "$bin/dwchain" tests/e2e/dwarf/chain_main.c -L"$bin" -ldwchain \
		-Wl,-rpath,"$bin" || fail "building tests/e2e/dwarf"

"$B/xpu-record" --no-gpu --no-pack -o "$tmp/t.xpu" -- "$bin/dwchain" 1 >/dev/null 2>"$tmp/err" ||
	fail "xpu-record: $(tail -1 "$tmp/err")"
# the program's own functions: named with the files in place
ours() { grep -cE 'dw_(deep|loop|main_[0-9]|lib_[a-z]|leaf)' "$1"; }
share() { awk '/dw_(deep|loop|main_[0-9]|lib_[a-z]|leaf)/ { s += $NF } { t += $NF }
	END { printf "%.1f", t ? 100 * s / t : 0 }' "$1"; }
"$B/xpu-report" -F folded "$tmp/t.xpu" >"$tmp/local.folded" || fail "report with the files"
[ "$(ours "$tmp/local.folded")" -gt 0 ] || fail "the program's functions not named even locally"
want=$(share "$tmp/local.folded")

# the files leave this machine for the server's folder
mv "$bin/dwchain" "$bin/libdwchain.so" "$tmp/served/"
DEBUGINFOD_URLS= "$B/xpu-report" -F folded "$tmp/t.xpu" >"$tmp/none.folded" 2>/dev/null
[ "$(ours "$tmp/none.folded")" = 0 ] || fail "functions named with the files gone and no server"

port=$((20000 + $$ % 20000))
debuginfod -p "$port" -d "$tmp/db.sqlite" -F "$tmp/served" >"$tmp/srv.log" 2>&1 &
srv_pid=$!
hex=$(readelf -n "$tmp/served/dwchain" | awk '/Build ID/ { print $3 }')
export DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/cache"
# until the server has indexed its folder; a throwaway cache each time, since the client
# remembers a miss for minutes
indexed() {
	rm -rf "$tmp/probe"
	DEBUGINFOD_CACHE_PATH="$tmp/probe" debuginfod-find executable "$hex" >/dev/null 2>&1
}
for _ in $(seq 60); do
	indexed && break
	sleep 0.5
done
indexed || fail "the server did not index its folder in 30 s: $(tail -2 "$tmp/srv.log")"
"$B/xpu-report" -F folded "$tmp/t.xpu" >"$tmp/served.folded" 2>"$tmp/rep.err" ||
	fail "report through debuginfod: $(tail -1 "$tmp/rep.err")"
got=$(share "$tmp/served.folded")
awk -v g="$got" -v w="$want" 'BEGIN { exit !(w > 0 && g >= 0.95 * w) }' ||
	fail "through debuginfod ${got}% of the samples in the program's functions, ${want}% with the files in place"
# --no-host-files: the server is not this machine's files
"$B/xpu-report" --no-host-files -F folded "$tmp/t.xpu" >"$tmp/nohost.folded" 2>/dev/null
got2=$(share "$tmp/nohost.folded")
awk -v g="$got2" -v w="$want" 'BEGIN { exit !(g >= 0.95 * w) }' ||
	fail "--no-host-files through debuginfod: ${got2}% against ${want}%"
ls "$tmp/cache" | grep -q . || fail "nothing in the client cache ($tmp/cache)"
echo "PASS $NAME: ${got}% of the samples in the program's functions through debuginfod (${want}% with the files in place, 0 with neither)"
