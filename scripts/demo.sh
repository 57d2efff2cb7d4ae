#!/usr/bin/env bash
# make demo: shows every part of xpu-perf this machine can show. Records a C program and a
# Python script with real eBPF (CPU samples, Python frames), then reads the traces recorded on
# an H200 that ship in samples/traces (GPU flame graph, text and timeline views,
# PyTorch backward work under its forward code), so the GPU
# views show without a GPU. Fails loudly when a part it expects is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=${DEMO_OUT:-$B/demo}
mkdir -p "$out"

die() { echo "demo: FAILED: $*" >&2; exit 1; }
say() { printf '\n== %s\n' "$*"; }
# heaviest folded stacks, each shortened to its weight and last frames so it fits a terminal
top_stacks() {	# N FRAMES < folded
	# the weight is the last field (C++ names hold spaces): put it first to sort on it; awk,
	# not head, takes the first N: head exits early and pipefail then fails the demo on sort's
	# SIGPIPE
	awk '{ print $NF "\t" $0 }' | sort -k1,1nr |
		awk -F'\t' -v top="$1" -v k="$2" 'NR <= top {
		line = $2; w = $1; sub(/ [0-9]+$/, "", line); nf = split(line, f, ";"); s = ""
		for (i = (nf > k ? nf - k + 1 : 1); i <= nf; i++) s = s (s == "" ? "" : ";") f[i]
		printf "%8d  %s%s\n", w, (nf > k ? "...;" : ""), s }'
}

[ "$(id -u)" -eq 0 ] ||
	die "xpu-record loads BPF programs and needs root (or CAP_BPF+CAP_PERFMON): run 'sudo make demo'"
for f in xpu-record xpu-report samples/cpu_burn; do
	[ -x "$B/$f" ] || die "$B/$f is missing: the build did not finish"
done
for f in pipeline.xpu pipeline.xpu.xpa torch-python.xpu torch-python.xpu.xpa torch-backward.xpu \
	torch-backward.xpu.xpa; do
	[ -f "samples/traces/$f" ] || die "samples/traces/$f is missing from this checkout"
done
command -v python3 >/dev/null || die "python3 is missing (scripts/install-deps.sh installs it)"

say "1. A C program on the CPU: xpu-record -o $out/cpu.xpu -- $B/samples/cpu_burn"
"$B"/xpu-record -o "$out/cpu.xpu" -- "$B"/samples/cpu_burn >/dev/null
echo "   the text report (xpu-report $out/cpu.xpu --rows=5): its header, then the functions by"
echo "   self samples and by total (with what they call)"
# up to the end of the by-total table: a cut at a fixed line count once left its heading alone
"$B"/xpu-report --rows=5 "$out/cpu.xpu" |
	awk '/^# top functions by total/ { t = 1 } t && /^$/ { exit } { print }' >"$out/cpu.text"
cat "$out/cpu.text"
grep -A2 '^# top functions by total' "$out/cpu.text" | grep -q '%' ||
	die "the text report of the C recording has no functions by total"
say "   its heaviest stacks (xpu-report --format=folded: flamegraph.pl, speedscope, inferno)"
"$B"/xpu-report --format=folded "$out/cpu.xpu" | top_stacks 4 5
[ -s "$out/cpu.xpu" ] || die "the C recording is empty"

say "2. A Python script: xpu-record -o $out/py.xpu -- python3 samples/py_demo.py 2"
"$B"/xpu-record -o "$out/py.xpu" -- python3 samples/py_demo.py 2 >/dev/null
"$B"/xpu-report "$out/py.xpu" | grep -E '^# (python|stacks):' || true
say "   the script's Python functions, share of samples with each on the stack (from --format=folded)"
"$B"/xpu-report --format=folded --view=cpu "$out/py.xpu" >"$out/py.folded"
awk '{ w = $NF; all += w; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); delete seen
	for (i = 1; i <= n; i++) if (f[i] ~ /\(py_demo\.py\)$/ && !(f[i] in seen)) { seen[f[i]]; t[f[i]] += w } }
	END { for (k in t) printf "%7.1f%%  %s\n", 100 * t[k] / all, k }' "$out/py.folded" | sort -rn
grep -q 'count (py_demo\.py)' "$out/py.folded" || die "no Python frame of py_demo.py in the profile"

T=samples/traces
say "3. GPU, from a trace recorded on an H200 ($T/pipeline.xpu, symbols from its symbol pack .xpa)"
echo "   GPU time under the CPU stacks that launched it (--view=gpu --weight=time, microseconds):"
"$B"/xpu-report --format=folded --view=gpu --weight=time "$T/pipeline.xpu" >"$out/gpu.folded"
top_stacks 4 3 <"$out/gpu.folded"
grep -q '\[gpu\] ' "$out/gpu.folded" || die "no GPU frame in the GPU view of $T/pipeline.xpu"
say "   the text report's GPU sections (top kernels, launch sites, busy time)"
"$B"/xpu-report "$T/pipeline.xpu" >"$out/gpu.text"
sed -n '/^# top gpu kernels/,/^$/p' "$out/gpu.text" | sed -n '1,8p'
sed -n '/^# gpu busy/,/^$/p' "$out/gpu.text" | sed -n '1,5p'
grep -q '^# top gpu kernels' "$out/gpu.text" || die "the text report of $T/pipeline.xpu has no GPU section"
say "   flame graph of GPU time under the stacks that launched it: $out/gpu.svg"
"$B"/xpu-report --format=svg --view=gpu --weight=time "$T/pipeline.xpu" >"$out/gpu.svg"
say "   timeline: $out/timeline.json (open it in ui.perfetto.dev or chrome://tracing)"
"$B"/xpu-report --format=chrome "$T/pipeline.xpu" >"$out/timeline.json"
grep -q '"cat":"kernel"' "$out/timeline.json" || die "the timeline has no GPU kernel"
echo "   $(grep -o '"cat":"kernel"' "$out/timeline.json" | wc -l) kernels on GPU tracks," \
	"$(grep -o '"cat":"cuda_api"' "$out/timeline.json" | wc -l) CUDA API calls on CPU threads"

say "4. PyTorch with Python frames, from $T/torch-python.xpu (H200), named by its symbol pack (--no-host-files: nothing of this machine's)"
"$B"/xpu-report --no-host-files "$T/torch-python.xpu" >"$out/torch.text"
grep -E '^# (stacks|symbols):' "$out/torch.text" || true
echo "   top GPU launch sites: the script's line, then the framework op (cut to fit a terminal)"
sed -n '/^# top gpu launch sites/,/^$/p' "$out/torch.text" | awk '$1 ~ /%$/ && n++ < 4 {
	printf "   %7s %9s us  %s\n", $1, $2, substr($0, index($0, $6), 80) }'
"$B"/xpu-report --no-host-files --format=folded --view=gpu --weight=time "$T/torch-python.xpu" \
	>"$out/torch.folded"
echo "   GPU time from the script's innermost line of code through PyTorch's Python to the kernel (us):"
awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); own = ""; py = "(no Python frame)"
	for (i = 1; i <= n; i++) if (f[i] ~ /\.py\)$/) { py = f[i]; if (f[i] ~ /\(torch_train\.py\)$/) own = f[i] }
	by[(own == "" || own == py ? "" : own " > ... > ") py " > " substr(f[n], 1, 50)] += w }
	END { for (k in by) printf "%8d  %s\n", by[k], k }' "$out/torch.folded" | sort -nr | awk 'NR <= 4'
echo "   (backward kernels are under the forward function that made their node: section 5)"
grep -q 'train_step (torch_train\.py)' "$out/torch.folded" || die "no train_step frame in $T/torch-python.xpu"
say "   flame graph of the whole run, CPU and GPU: $out/torch.svg (root at the top, so it opens on"
echo "   the script's frames; CPython's own frames between Python frames are folded away:"
echo "   --python-interp keeps them, --svg-root=bottom draws the root at the bottom)"
"$B"/xpu-report --no-host-files --format=svg "$T/torch-python.xpu" >"$out/torch.svg" 2>/dev/null
grep -q '<title>main (torch_train\.py)' "$out/torch.svg" || die "no main (torch_train.py) frame in $out/torch.svg"

say "5. PyTorch's backward pass under the forward code that caused it, from $T/torch-backward.xpu (H200)"
# --no-host-files: the trace's PyTorch files are not this machine's; Python frames are in it
"$B"/xpu-report --no-host-files --format=folded --view=gpu --weight=time \
	"$T/torch-backward.xpu" >"$out/backward.folded"
# the same trace's symbol warning was said just above: once is enough
"$B"/xpu-report --no-host-files --format=folded --view=gpu --weight=time --no-backward \
	"$T/torch-backward.xpu" >"$out/backward-off.folded" 2>/dev/null
share() { awk '{ w = $NF; t += w; if (index($0, "(torch_train.py)")) s += w }
	END { printf "%.1f%%", t ? 100 * s / t : 0 }' "$1"; }
echo "   GPU time under a line of torch_train.py: $(share "$out/backward.folded")" \
	"($(share "$out/backward-off.folded") with --no-backward: the backward runs on autograd's thread)"
echo "   GPU time by backward node and the forward function above it (us):"
grep '\[backward\]' "$out/backward.folded" | awk '{ w = $NF; sub(/ [0-9]+$/, "")
	n = split($0, f, ";"); py = ""
	for (i = 1; i <= n && f[i] !~ /^\[backward\]/; i++) if (f[i] ~ /\.py\)$/) py = f[i]
	by[py " > " f[i]] += w }
	END { for (k in by) printf "%8d  %s\n", by[k], k }' | sort -nr | awk 'NR <= 4'
grep -q '\[backward\] ConvolutionBackward0' "$out/backward.folded" ||
	die "no backward node under its forward stack in $T/torch-backward.xpu"

if [ -e "$B/libxpu-cupti.so" ]; then
	say "GPU recording is built ($B/libxpu-cupti.so): on a GPU host, sudo $B/xpu-record -- ./app"
else
	say "GPU recording is not built here (no CUDA toolkit with CUPTI at \$CUDA_HOME); the views above need none"
fi
echo
echo "demo: traces and outputs are in $out/; try: $B/xpu-report --format=info $out/py.xpu"
