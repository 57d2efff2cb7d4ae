# SPDX-License-Identifier: MIT
# Shared by tests/e2e/test_chrome_json.sh, test_viewers.sh and test_svg.sh (sourced).
# Sets ROOT, B, REPORT, and the traces the tests draw from, written into $tmp:
#   $tmp/gpu.xpu        tests/viewers/make_gpu_trace.c: API calls, NVTX, kernels, flows,
#                       names to escape
#   $tmp/synthetic.xpu  tests/golden/make_synthetic.c (resolvable frames, GPU work)
#   $tmp/cpu.xpu        build/samples/cpu_burn recorded with real eBPF, when root and BPF allow
#   TRACES              all of these that exist, plus samples/traces/*.xpu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
REPORT=${REPORT:-$B/xpu-report}
CC=${CC:-cc}

fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

make_traces() {
	TRACES=()
	[ -x "$REPORT" ] || fail "$REPORT not built (run make)"
	[ -f "$B/libxpucommon.a" ] || fail "$B/libxpucommon.a not built (run make)"
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$tmp/make_gpu_trace" \
		"$ROOT/tests/viewers/make_gpu_trace.c" "$B/libxpucommon.a" -lzstd ||
		fail "cannot build make_gpu_trace"
	"$tmp/make_gpu_trace" "$tmp/gpu.xpu" || fail "make_gpu_trace failed"
	TRACES+=("$tmp/gpu.xpu")
	$CC -O0 -g -o "$tmp/target" "$ROOT/tests/golden/target.c" &&
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$tmp/make_synthetic" \
		"$ROOT/tests/golden/make_synthetic.c" "$B/libxpucommon.a" -lzstd ||
		fail "cannot build make_synthetic"
	a() { nm "$tmp/target" | awk -v s="$1" '$3 == s { print $1 }'; }
	"$tmp/make_synthetic" "$tmp/synthetic.xpu" "$tmp/target" "$(a main)" \
		"$(a _ZN3app6Solver4stepEi)" "$(a middle)" "$(a leaf_work)" || fail "make_synthetic failed"
	TRACES+=("$tmp/synthetic.xpu")
	CPU_NOTE="no CPU trace recorded (needs root, BPF and $B/samples/cpu_burn)"
	if [ "$(id -u)" = 0 ] && [ -x "$B/xpu-record" ] && [ -x "$B/samples/cpu_burn" ] &&
	   "$B/xpu-record" --no-gpu -o "$tmp/cpu.xpu" -- "$B/samples/cpu_burn" 1 \
		>"$tmp/rec.out" 2>"$tmp/rec.err"; then
		TRACES+=("$tmp/cpu.xpu")
		CPU_NOTE=""
	fi
	for f in "$ROOT"/samples/traces/*.xpu; do
		[ -f "$f" ] && TRACES+=("$f")
	done
	return 0
}

# Installs speedscope and playwright-core (tests/viewers/package.json) under $B/viewers once;
# skips the test when chromium, node or npm are missing or the registry cannot be reached.
setup_browser() {
	CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
	[ -n "$CHROMIUM" ] || skip "chromium not found (scripts/install-deps.sh installs it)"
	command -v node >/dev/null || skip "node not found (scripts/install-deps.sh installs it)"
	export CHROMIUM
	VIEWERS_DIR=$B/viewers
	export VIEWERS_DIR
	mkdir -p "$VIEWERS_DIR"
	if ! cmp -s "$ROOT/tests/viewers/package.json" "$VIEWERS_DIR/package.json" ||
	   [ ! -d "$VIEWERS_DIR/node_modules/speedscope/dist/release" ] ||
	   [ ! -d "$VIEWERS_DIR/node_modules/playwright-core" ]; then
		command -v npm >/dev/null || skip "npm not found (scripts/install-deps.sh installs it)"
		cp "$ROOT/tests/viewers/package.json" "$VIEWERS_DIR/package.json"
		# playwright-core only drives the system chromium: never download browsers
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 300 npm install --prefix "$VIEWERS_DIR" \
			--no-audit --no-fund --loglevel=error >"$tmp/npm.log" 2>&1 ||
			skip "npm install of speedscope/playwright-core failed (registry unreachable?): $(grep -m1 -i err "$tmp/npm.log")"
	fi
}
