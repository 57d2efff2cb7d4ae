#!/bin/bash
# On the GPU machine: the symbol pack of a PyTorch training loop (samples/torch_train.py, 30
# steps) as xpu-record makes it at the end of the recording, what it costs (time and peak
# memory of `xpu-report archive`, against the whole-file `--elf` archive of the same trace),
# and the host's reports without the pack, which the CPU machine then compares with its own
# `--no-host-files` reports from the trace and pack alone. From the repo root as root:
#   tests/gpu/pack.sh [OUT_DIR]      (BUNDLE=.device/bundle-pack to use another bundle)
set -u
cd "$(dirname "$0")/../.."
O=$(realpath -m "${1:-${OUT:-/tmp/xpu-pack}}")
BD=${BUNDLE:-.device/bundle}
B=$PWD/$BD/build
export LD_LIBRARY_PATH="$PWD/$BD/lib:$PWD/$BD/lib-cuda"
mkdir -p "$O"
fail() { echo "FAIL pack: $*"; exit 1; }

# wall seconds and the child's peak RSS (MiB) of a command: "SECONDS MIB"
measure() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(f"{time.time() - t:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} rc={r.returncode}")
EOF
}

XPU_TORCH_STEPS=30 "$B/xpu-record" -o "$O/train.xpu" -- python3 samples/torch_train.py \
	>"$O/record.out" 2>"$O/record.err" || fail "recording: $(tail -2 "$O/record.err")"
echo "== record: $(tail -1 "$O/record.err")"
[ -s "$O/train.xpu.xpa" ] || fail "no pack beside the trace"
echo "== sizes: trace $(stat -c %s "$O/train.xpu") pack $(stat -c %s "$O/train.xpu.xpa")"
echo "== archive (pack) again: $(measure "$B/xpu-report" archive -o "$O/again.xpa" "$O/train.xpu")"
echo "== archive --elf: $(measure "$B/xpu-report" archive --elf -o "$O/elf.xpa" "$O/train.xpu") size $(stat -c %s "$O/elf.xpa" 2>/dev/null)"
rm -f "$O/elf.xpa" "$O/again.xpa"

# the host's reports, from its own files (the pack set aside)
mv "$O/train.xpu.xpa" "$O/train.pack"
"$B/xpu-report" -F folded "$O/train.xpu" >"$O/host.folded" 2>"$O/host.err" || fail "host folded"
"$B/xpu-report" -F text "$O/train.xpu" >"$O/host.text" 2>>"$O/host.err" || fail "host text"
mv "$O/train.pack" "$O/train.xpu.xpa"
# and with the pack only, here: the same, or the pack misses something
"$B/xpu-report" -F folded --no-host-files "$O/train.xpu" >"$O/pack.folded" 2>/dev/null
"$B/xpu-report" -F text --no-host-files "$O/train.xpu" >"$O/pack.text" 2>/dev/null
echo "== here, pack vs host files: folded $(diff "$O/host.folded" "$O/pack.folded" | grep -c '^[<>]') lines differ, text $(diff "$O/host.text" "$O/pack.text" | grep -c '^[<>]')"
grep -E "^# (stacks|  )" "$O/host.text" | head -4
rm -f "$O/pack.folded" "$O/pack.text" "$O/record.out" "$O/record.err" "$O/host.err"
# the shipped PyTorch traces' packs, where this host has their files (same build-ids)
mkdir -p "$O/shipped"
for t in samples/traces/torch-*.xpu; do
	n=$(basename "$t")
	cp "$t" "$O/shipped/$n"
	"$B/xpu-report" archive "$O/shipped/$n" 2>&1 | tail -1
	rm -f "$O/shipped/$n"
done
ls -la "$O" "$O/shipped"
