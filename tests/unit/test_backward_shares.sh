#!/bin/bash
# tests/lib/backward_shares.py, the comparison behind tests/e2e/test_backward_attr.sh, on
# small synthetic files (tests/unit/data/backward/): per-function shares of an xpu folded file
# against torch.profiler's export_stacks, within --tol or not; the unattributed backward share
# (engine work left under loss.backward()) under --max-unattributed or not; no [backward]
# frame at all; --prof left out; float weights. Needs no root and no torch.
set -u
NAME=test_backward_shares
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL $NAME: $*"; exit 1; }
PY=$(command -v python3) || { echo "skip: no python3"; exit 77; }
D=$ROOT/tests/unit/data/backward
FUNCS=big_mlp,conv_block,cheap_head
shares() { "$PY" "$ROOT/tests/lib/backward_shares.py" --root train_step --funcs $FUNCS "$@" 2>&1; }

# tolerance, pass: xpu 47.6/28.3/18.9 (weights 15.5 and 1.5 read as floats; lines outside
# train_step left out) against profiler 48.0/32.4/19.2 (its lines outside train_step left out)
out=$(shares --xpu "$D/xpu_pass.folded" --prof "$D/prof_pass.stacks" --tol 8) ||
	fail "pass case exited $?: $out"
echo "$out" | grep -qE '^big_mlp +47\.6 +33\.5 +48\.0 +-0\.4$' || fail "big_mlp row: $out"
echo "$out" | grep -qE '^conv_block +28\.3 +18\.9 +32\.4 +-4\.1$' || fail "conv_block row: $out"
echo "$out" | grep -qE '^cheap_head +18\.9 +12\.3 +19\.2 +-0\.3$' || fail "cheap_head row: $out"
# the InputBuffer::add under the engine (2) and AccumulateGrad with no forward stack (1.5)
echo "$out" | grep -q '^xpu: 106 under train_step, 66\.0% in backward, 3\.3% unattributed' ||
	fail "pass case totals: $out"
echo "$out" | grep -q '^profiler: 100000 under train_step' || fail "profiler total: $out"
# the nodes listed with the function above them; AccumulateGrad (no forward stack) under none
echo "$out" | grep -qE '^ +14\.6%  MmBackward0 +big_mlp$' || fail "MmBackward0 node: $out"
echo "$out" | grep -qE '^ +1\.4%  torch::autograd::AccumulateGrad +-$' || fail "AccumulateGrad: $out"
# a tolerance of 4 leaves conv_block's 4.1 points out
out=$(shares --xpu "$D/xpu_pass.folded" --prof "$D/prof_pass.stacks" --tol 4) &&
	fail "--tol 4 passed: $out"
echo "$out" | grep -q '^FAIL: conv_block: .*|diff| 4\.1 > 4$' || fail "--tol 4: $out"

# tolerance, fail: the profiler puts big_mlp at 30%, conv_block at 50%
out=$(shares --xpu "$D/xpu_pass.folded" --prof "$D/prof_far.stacks") && fail "far case passed: $out"
echo "$out" | grep -q '^FAIL: big_mlp: xpu 47\.6% vs profiler 30\.0%: |diff| 17\.6 > 8$' ||
	fail "far case, big_mlp: $out"
echo "$out" | grep -q '^FAIL: conv_block: ' || fail "far case, conv_block: $out"
echo "$out" | grep -q '^FAIL: cheap_head' && fail "far case, cheap_head is within 8: $out"
echo "$out" | grep -q 'unattributed backward .*>' && fail "far case, unattributed: $out"

# unattributed, fail: 12% of train_step's weight is backward left under loss.backward() (a
# [backward] frame below the engine, and engine work with none); the shares alone would pass
out=$(shares --xpu "$D/xpu_unattr.folded" --prof "$D/prof_pass.stacks") &&
	fail "unattributed case passed: $out"
[ "$(echo "$out" | grep -c '^FAIL')" = 1 ] || fail "unattributed case, one failure only: $out"
echo "$out" | grep -q '^FAIL: unattributed backward 12\.0% > 10%$' || fail "unattributed: $out"
# unattributed, pass: the same file under a limit of 15%
out=$(shares --xpu "$D/xpu_unattr.folded" --prof "$D/prof_pass.stacks" --max-unattributed 15) ||
	fail "unattributed under 15% failed: $out"
echo "$out" | grep -qE '^conv_block +26\.4 +16\.4 +32\.4 +-6\.0$' || fail "unattributed rows: $out"

# no [backward] frame at all (recorded with --no-autograd, or not implemented): fails
out=$(shares --xpu "$D/xpu_nobwd.folded" --prof "$D/prof_pass.stacks") && fail "no [backward] passed: $out"
echo "$out" | grep -q "^FAIL: no '\[backward\] ' frame" || fail "no [backward]: $out"

# --prof left out: the xpu checks alone
out=$(shares --xpu "$D/xpu_pass.folded") || fail "xpu alone exited $?: $out"
echo "$out" | grep -qE '^big_mlp +47\.6 +33\.5 +- +-$' || fail "xpu alone: $out"
out=$(shares --xpu "$D/xpu_unattr.folded") && fail "xpu alone, unattributed passed: $out"

# a missing file and a root that is not there fail with a message
out=$(shares --xpu "$D/none.folded") && fail "a missing file passed: $out"
echo "$out" | grep -q 'none\.folded' || fail "a missing file: $out"
out=$("$PY" "$ROOT/tests/lib/backward_shares.py" --root nosuch --funcs $FUNCS \
	--xpu "$D/xpu_pass.folded" --prof "$D/prof_pass.stacks" 2>&1) && fail "no root passed: $out"
echo "$out" | grep -q "^FAIL: no xpu sample under a frame 'nosuch ('" || fail "no root: $out"
echo "PASS $NAME"
