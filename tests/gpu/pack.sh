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

# wall seconds and the peaks of the child's resident memory, anonymous and file-backed (MiB;
# file pages are the mapped ELF files' read-only pages, shared with the page cache)
measure() {
	python3 - "$@" <<'EOF'
import subprocess, sys, time
t = time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
peak = {}
while p.poll() is None:
    try:
        for l in open(f"/proc/{p.pid}/status"):
            k = l.split(":")[0]
            if k in ("VmRSS", "RssAnon", "RssFile"):
                peak[k] = max(peak.get(k, 0), int(l.split()[1]) // 1024)
    except OSError:
        pass
    time.sleep(0.002)
print(f"{time.time() - t:.2f} s, peak rss {peak.get('VmRSS', 0)} MiB "
      f"(anon {peak.get('RssAnon', 0)}, file {peak.get('RssFile', 0)}) rc={p.returncode}")
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
echo "== report -F folded, host files: $(measure "$B/xpu-report" -F folded -o /dev/null "$O/train.xpu")"
"$B/xpu-report" -F folded "$O/train.xpu" >"$O/host.folded" 2>"$O/host.err" || fail "host folded"
"$B/xpu-report" -F text "$O/train.xpu" >"$O/host.text" 2>>"$O/host.err" || fail "host text"
mv "$O/train.pack" "$O/train.xpu.xpa"
# and with the pack only, here: the same, or the pack misses something
"$B/xpu-report" -F folded --no-host-files "$O/train.xpu" >"$O/pack.folded" 2>/dev/null
"$B/xpu-report" -F text --no-host-files "$O/train.xpu" >"$O/pack.text" 2>/dev/null
echo "== here, pack vs host files: folded $(diff "$O/host.folded" "$O/pack.folded" | grep -c '^[<>]') lines differ, text $(diff "$O/host.text" "$O/pack.text" | grep -c '^[<>]')"
# the folded output is tens of MB: its digest comes back, for the CPU machine to compare
echo "== host folded: $(sha256sum <"$O/host.folded" | cut -c1-64) $(wc -l <"$O/host.folded") lines"
rm -f "$O/host.folded"
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
