# Sourced by the end-to-end tests of the in-process launch walk (NAME set first), from the
# repository root: B, CUDA_HOME, skip/fail/bad (bad records a failure and lets the other
# checks run: the test ends with `[ $failed = 0 ]`), and the checks every one of them needs:
# root for BPF, libxpu-cupti.so built, CUPTI's headers, the two binaries.
B=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }
failed=0
bad() { echo "FAIL $NAME: $*"; failed=1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "no CUPTI headers at $CUDA_HOME"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
