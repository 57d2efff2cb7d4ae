#!/bin/bash
# On the GPU machine: backward attribution in PyTorch training loops recorded with the default
# options, checked against PyTorch's own profiler. Uses the prebuilt bundle (tests/gpu/bundle.sh),
# run from the repo root as root:
#   tests/gpu/backward_attr.sh [OUT_DIR]
# For samples/torch_train.py, samples/torch_attn.py and samples/torch_attn.py --compile: runs the
# loop under torch.profiler (--profile: export_stacks of self CUDA time, backward ops under their
# forward op's stack), records it with xpu-record (default options, STEPS steps, default 100),
# writes the GPU folded view (--weight=time) and checks:
#   - at least 95% of all GPU time (all threads) lies under a frame of the script;
#   - the share of GPU time under a "[backward] NODE" frame (printed; must be > 0);
#   - eager loops: tests/lib/backward_shares.py, per forward function, xpu's share of the GPU
#     time under train_step against the profiler's, within TOL points (default 8);
#   - the compiled loop: at least 95% of the GPU time under a compiled backward node
#     ("[backward] CompiledFunctionBackward", or PyNode) has model_fn, the compiled function,
#     in the forward stack above it, and at least 99% of the GPU launches have complete stacks.
# Prints info's lines on complete stacks and backward attribution, and a summary table; exits 1
# when any check failed (all of them run first). Logs, folded files and the profiler's stacks
# under OUT_DIR; traces under TRACES (default /tmp/xpu-backward-traces). torch.compile caches
# under TORCHINDUCTOR_CACHE_DIR (default /tmp/xpu-inductor-cache): the compiled loop is profiled
# before it is recorded, so the recording finds the kernels compiled.
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-backward}}
T=${TRACES:-/tmp/xpu-backward-traces}
STEPS=${STEPS:-100}
TOL=${TOL:-8}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O" "$T"
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/xpu-inductor-cache}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$TORCHINDUCTOR_CACHE_DIR/triton}
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0
SECONDS=0
summary=""
fail() { echo "FAIL: $*"; rc=1; }

# ws FOLDED: "TOTAL UNDER_SCRIPT BACKWARD BACKWARD_UNDER_SCRIPT" weights, the last of stacks
# with a frame of the script above their [backward] frame (a forward stack); $script: "file.py"
ws() {
	awk -v pat="($script)" '{ w = $NF; all += w; if (index($0, pat)) py += w
		i = index($0, ";[backward] "); if (!i) next
		bw += w; if (index(substr($0, 1, i), pat)) bwf += w }
		END { printf "%d %d %d %d\n", all, py, bw, bwf }' "$1"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# loop NAME SCRIPT FUNCS [ARGS...]: FUNCS "" for the compiled loop
loop() {
	local name=$1 path=$2 funcs=$3
	shift 3
	local script=${path##*/} t=$T/$name.xpu f=$O/$name.folded st=$O/$name.stacks
	local res_script=- res_bwd=- res_shares=- res_complete=- ok=PASS s0=$SECONDS
	echo
	echo "=== $name: $path $* ($STEPS steps)"

	# the profiler's view first: for the compiled loop this run also fills the compile cache
	if timeout 420 env -u LD_LIBRARY_PATH XPU_TORCH_STEPS="$STEPS" python3 "$path" "$@" \
		--profile "$st" >"$O/$name-prof.log" 2>&1; then
		echo "== profiled in $((SECONDS - s0))s: $(grep '^profile ' "$O/$name-prof.log")"
	else
		fail "$name: --profile run: $(tail -3 "$O/$name-prof.log")"; ok=FAIL
	fi

	s0=$SECONDS
	timeout 420 env LD_LIBRARY_PATH="$LIB" $B/xpu-record -o "$t" -- env -u LD_LIBRARY_PATH \
		XPU_TORCH_STEPS="$STEPS" python3 "$path" "$@" >"$O/$name-rec.log" 2>&1 ||
		{ fail "$name: record: $(tail -3 "$O/$name-rec.log")"; ok=FAIL; }
	grep -q "^expect steps $STEPS\$" "$O/$name-rec.log" ||
		{ fail "$name: the recorded loop did not finish its $STEPS steps"; ok=FAIL; }
	echo "== recorded in $((SECONDS - s0))s: $(grep '^xpu-record:' "$O/$name-rec.log" | tail -1)"
	tool $B/xpu-report -F folded --view=gpu --weight=time "$t" >"$f" 2>"$O/$name-folded.err" ||
		{ fail "$name: folded report: $(tail -2 "$O/$name-folded.err")"; ok=FAIL; }
	tool $B/xpu-report -F info "$t" >"$O/$name-info.txt" 2>&1
	tool $B/xpu-report "$t" >"$O/$name-text.txt" 2>&1
	echo "== info (complete stacks, autograd counters, the backward attribution section):"
	awk '/^[^ ]/ { sec = $0 } /^backward/ || sec ~ /^backward/ || tolower($0) ~ /complete|autograd/' \
		"$O/$name-info.txt"
	echo "== text header:"
	awk '/^# backward/ { on = 1; print; next } on && /^#   / { print; next } { on = 0 }' \
		"$O/$name-text.txt" | head -12

	# GPU time under a frame of the script, and under [backward] frames
	local all py bw bwf
	read -r all py bw bwf < <(ws "$f")
	res_script=$(pct "$py" "$all")%
	res_bwd=$(pct "$bw" "$all")%
	echo "== $res_script of $all us of GPU time (all threads) under a frame of $script"
	echo "== $res_bwd of it under a [backward] frame, in $(grep -c ';\[backward\] ' "$f") of" \
		"$(wc -l <"$f") stacks; $(pct "$bwf" "$bw")% of that with a frame of $script above" \
		"the [backward] frame (a forward stack)"
	{ [ "$all" -gt 0 ] && ge "$py" "$(awk -v a="$all" 'BEGIN { print 0.95 * a }')"; } ||
		{ fail "$name: under 95% of the GPU time under a frame of $script"; ok=FAIL; res_script="$res_script!"
		  echo "== the heaviest GPU stacks without a frame of $script (weight, stack):"
		  grep -vF "($script)" "$f" | awk '{ print $NF, $0 }' | sort -rn | head -3 | cut -c1-900; }
	[ "$bw" -gt 0 ] || { fail "$name: no GPU time under a [backward] frame"; ok=FAIL; res_bwd="$res_bwd!"; }
	echo "== top backward nodes by GPU time (us):"
	awk '{ i = index($0, ";[backward] "); if (!i) next
		n = substr($0, i + 1); sub(/;.*/, "", n); by[n] += $NF }
		END { for (n in by) printf "  %10d  %s\n", by[n], n }' "$f" | sort -rn | head -8

	# complete launch stacks
	local cl
	cl=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) gpu launches (\([0-9.]*\)%).*/\3/p' "$O/$name-info.txt" | head -1)
	res_complete=${cl:-?}%
	if [ -z "$funcs" ]; then
		tool $B/xpu-report -F jsonl "$t" 2>/dev/null | python3 tests/gpu/incomplete_launches.py
		ge "${cl:-0}" 99 || { fail "$name: ${cl:-?}% of the launches complete (want >= 99%)"; ok=FAIL; res_complete="$res_complete!"; }
	fi

	if [ -n "$funcs" ]; then
		echo "== tests/lib/backward_shares.py --root train_step --funcs $funcs --tol $TOL"
		if python3 tests/lib/backward_shares.py --xpu "$f" --prof "$st" --root train_step \
			--funcs "$funcs" --tol "$TOL" >"$O/$name-shares.txt" 2>&1; then
			res_shares=ok
		else
			fail "$name: shares against torch.profiler"; ok=FAIL; res_shares=FAIL
		fi
		cat "$O/$name-shares.txt"
	else
		# the compiled backward under the compiled function's forward frame
		local cb
		cb=$(awk '{ i = index($0, ";[backward] "); if (!i) next
			n = substr($0, i + 12); sub(/;.*/, "", n)
			if (n !~ /CompiledFunction|PyNode/) next
			all += $NF; if (index(substr($0, 1, i), ";model_fn (")) ok += $NF }
			END { printf "%d %d\n", ok, all }' "$f")
		read -r cok call <<<"$cb"
		res_shares="$(pct "$cok" "$call")% under model_fn"
		echo "== $(pct "$cok" "$call")% of $call us of compiled backward GPU time has model_fn ( above its [backward] frame"
		{ [ "$call" -gt 0 ] && ge "$cok" "$(awk -v a="$call" 'BEGIN { print 0.95 * a }')"; } ||
			{ fail "$name: compiled backward not under model_fn (want >= 95% of its GPU time)"; ok=FAIL; res_shares="$res_shares!"; }
		echo "== for information: backward_shares.py --funcs model_fn"
		python3 tests/lib/backward_shares.py --xpu "$f" --prof "$st" --root train_step \
			--funcs model_fn --tol "$TOL" 2>&1 | sed 's/^/  /'
	fi
	summary+=$(printf '%-14s %-10s %-10s %-12s %-28s %s' "$name" "$res_script" "$res_bwd" \
		"$res_complete" "$res_shares" "$ok")$'\n'
}

echo "== python: $(python3 -V 2>&1), $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1)"
# LOOPS picks some of them: "train attn attn-compile" (the default)
for l in ${LOOPS:-train attn attn-compile}; do
	case $l in
	# module methods, file-qualified: torch.profiler gives each backward node the stack of the
	# first forward event with its sequence number, which for batch norm is the
	# num_batches_tracked.add_ of the same _BatchNorm.forward, not its batch_norm call
	train) loop train samples/torch_train.py "Conv2d.forward@conv.py,_BatchNorm.forward@batchnorm.py,ReLU.forward@activation.py,AdaptiveAvgPool2d.forward@pooling.py,Linear.forward@linear.py,GELU.forward@activation.py,cross_entropy@functional.py" ;;
	attn) loop attn samples/torch_attn.py "conv_stem,attention,mlp" ;;
	attn-compile) loop attn-compile samples/torch_attn.py "" --compile ;;
	*) fail "unknown loop $l" ;;
	esac
done

echo
echo "=== summary (${SECONDS}s; '!' marks a failed check)"
printf '%-14s %-10s %-10s %-12s %-28s %s\n' loop "in script" backward "complete" "shares vs torch.profiler" result
printf '%s' "$summary"
exit $rc
