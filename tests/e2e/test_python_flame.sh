#!/bin/bash
# The default flame graph of each committed PyTorch trace (samples/traces/torch*.xpu) reads at
# first sight: opened in headless Chromium in a 1400x900 window (tests/viewers/browse.js
# svg-screen), frames of the traced script are in sight with their names drawn. And its
# default folded output has no interpreter frames (CPython's own: python3.12+0x..., Py* but a module's PyInit_*,
# _Py*) between two Python frames, while --python-interp keeps them; both have the same
# total, and every other frame name is in both (only the interpreter's frames went).
# Exit 0 pass, 77 skip, else fail.
set -u
NAME=test_python_flame
source "$(dirname "$0")/../viewers/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
[ -x "$REPORT" ] || fail "$REPORT not built (run make)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

traces=()
for f in "$ROOT"/samples/traces/torch*.xpu; do
	[ -f "$f" ] && traces+=("$f")
done
[ ${#traces[@]} -gt 0 ] || skip "no PyTorch traces in samples/traces"

# The script a trace ran: the file of the first Python frame of most of its weight.
script_of() {
	python3 -c '
import collections, re, sys
c = collections.Counter()
for l in open(sys.argv[1], encoding="utf-8", errors="replace"):
    st, w = l.rsplit(" ", 1)
    for f in st.split(";"):
        m = re.search(r"\(([^()]*\.py)(:\d+)?\)$", f)
        if m:
            c[m.group(1)] += int(w)
            break
print(c.most_common(1)[0][0] if c else "")' "$1"
}

for f in "${traces[@]}"; do
	n=$(basename "$f" .xpu)
	"$REPORT" -F folded "$f" >"$tmp/$n.folded" 2>"$tmp/err" ||
		fail "xpu-report -F folded $n.xpu: $(head -1 "$tmp/err")"
	"$REPORT" -F folded --python-interp "$f" >"$tmp/$n.interp.folded" 2>"$tmp/err" ||
		fail "xpu-report -F folded --python-interp $n.xpu: $(head -1 "$tmp/err")"
	r=$(python3 - "$tmp/$n.folded" "$tmp/$n.interp.folded" <<'CHECK'
import re, sys
PYFRAME = re.compile(r"\([^()]*\.py(:\d+)?\)$|\(<frozen [^>]*>(:\d+)?\)$")
INTERP = re.compile(r"^(python3(\.\d+)?\+0x[0-9a-f]+|_?Py(?!Init_)[A-Z][A-Za-z_]*)$")
def read(path):
    lines = []
    for l in open(path, encoding="utf-8", errors="replace"):
        st, w = l.rsplit(" ", 1)
        lines.append((st.split(";"), int(w)))
    return lines
def between(frames):
    # interpreter frames in runs with a Python frame on both sides: a run that leads into
    # native code (a C extension's call, e.g. CUDAGraph.replay's pybind11 dispatch before a
    # replayed graph's capture stack) is where the native code was entered, and stays
    out, i = [], 0
    while i < len(frames):
        j = i
        while j < len(frames) and INTERP.match(frames[j]):
            j += 1
        if j > i and i > 0 and j < len(frames) and PYFRAME.search(frames[i - 1]) and \
                PYFRAME.search(frames[j]):
            out += frames[i:j]
        i = max(j, i + 1)
    return out
fold, keep = read(sys.argv[1]), read(sys.argv[2])
left = sum(len(between(st)) for st, _ in fold)
kept = sum(len(between(st)) for st, _ in keep)
if left:
    ex = next(st for st, _ in fold if between(st))
    print("%d interpreter frames left between Python frames, e.g. %s" % (left, between(ex)[0])); sys.exit(1)
if not kept:
    print("--python-interp shows no interpreter frames between Python frames either"); sys.exit(1)
tf, tk = sum(w for _, w in fold), sum(w for _, w in keep)
if tf != tk:
    print("totals differ: %d folded, %d with --python-interp" % (tf, tk)); sys.exit(1)
names = lambda ls: {f for st, _ in ls for f in st}
gone = {f for f in names(keep) - names(fold) if not INTERP.match(f)}
if gone:
    print("frames other than the interpreter's went: %s" % sorted(gone)[:5]); sys.exit(1)
print("%d interpreter frames folded, total %d" % (kept, tf))
CHECK
) || fail "$n: $r"
	echo "$n.folded: $r"
done

setup_browser
# every graph in one browser (tests/viewers/browse.js batch), a fresh page each: a Chromium
# started per graph was 8 starts; each graph keeps its own first-screen check
: >"$tmp/jobs"
for f in "${traces[@]}"; do
	n=$(basename "$f" .xpu)
	script=$(script_of "$tmp/$n.folded")
	[ -n "$script" ] || fail "$n: no Python frames in its folded output"
	"$REPORT" -F svg "$f" >"$tmp/$n.svg" 2>"$tmp/err" ||
		fail "xpu-report -F svg $n.xpu: $(head -1 "$tmp/err")"
	# the other orientation opens scrolled to its root: the same first-screen check
	"$REPORT" -F svg --svg-root=bottom "$f" >"$tmp/$n.bottom.svg" 2>"$tmp/err" ||
		fail "xpu-report -F svg --svg-root=bottom $n.xpu: $(head -1 "$tmp/err")"
	for g in "$n" "$n.bottom"; do
		printf 'svg-screen\t%s\t%s\t%s\n' "$tmp/$g.svg" "$tmp/$g.png" "$script" >>"$tmp/jobs"
	done
done
# a bound for a hung browser only: 150 s a graph was the bound when each had its own
njobs=$(wc -l <"$tmp/jobs")
timeout $((150 * njobs)) node "$ROOT/tests/viewers/browse.js" batch "$tmp/jobs" >"$tmp/browse.out" 2>&1
rc=$?
cat "$tmp/browse.out"
[ $rc = 0 ] || fail "$(grep -m1 'FAIL' "$tmp/browse.out" || tail -1 "$tmp/browse.out") (exit $rc)"
[ "$(grep -c ': ok: ' "$tmp/browse.out")" = "$njobs" ] ||
	fail "$(grep -c ': ok: ' "$tmp/browse.out") of $njobs graphs said ok"
echo "PASS $NAME: ${#traces[@]} PyTorch traces"
