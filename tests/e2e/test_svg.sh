#!/bin/bash
# xpu-report --format=svg: one well-formed, self-contained SVG per view and weight, whose
# total equals the folded output's, with GPU frames in their own colours; opened in headless
# Chromium (tests/viewers/browse.js), its script runs without errors, search highlights and
# reports the matched percent, zoom widens a frame to the full width and reset restores it,
# root at the top (the default) and at the bottom (--svg-root=bottom).
# Exit 0 pass, 77 skip, else fail.
set -u
NAME=test_svg
source "$(dirname "$0")/../viewers/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
make_traces

svgs=()
for f in "${TRACES[@]}"; do
	n=$(basename "$f" .xpu)
	for v in "merged samples" "gpu time" "cpu samples"; do
		set -- $v
		out=$tmp/$n-$1-$2.svg
		# an empty view (the gpu view of a CPU-only trace) says so and exits 1
		if ! "$REPORT" -F svg --view="$1" --weight="$2" "$f" >"$out" 2>"$tmp/err"; then
			grep -q "nothing to report" "$tmp/err" ||
				fail "xpu-report -F svg --view=$1 --weight=$2 $n.xpu: $(head -1 "$tmp/err")"
			[ ! -s "$out" ] || fail "$n --view=$1: svg written for an empty view"
			continue
		fi
		"$REPORT" -F folded --view="$1" --weight="$2" "$f" >"$tmp/folded" 2>/dev/null
		# well-formed XML; no external references; root total = sum of the folded weights
		r=$(python3 - "$out" "$tmp/folded" <<'PY'
import re, sys, xml.etree.ElementTree as ET
# ElementTree, not minidom: the same checks, and the graphs of 110,000 frames parse in a
# second instead of half a minute each
svg, folded = sys.argv[1], sys.argv[2]
doc = ET.parse(svg).getroot()
NS = "{http://www.w3.org/2000/svg}"
tag = lambda e: e.tag[len(NS):] if e.tag.startswith(NS) else e.tag
text = open(svg, encoding="utf-8").read()
if re.search(r'(href|src)\s*=\s*"(https?:|//)', text):
    print("external reference"); sys.exit(1)
total = sum(int(l.rsplit(" ", 1)[1]) for l in open(folded, encoding="utf-8", errors="replace") if l.strip())
titles = [t.text or "" for t in doc.iter() if tag(t) == "title"]
root = [t for t in titles if t.startswith("all (")]
if total == 0:
    print("empty" if not titles else "frames drawn for an empty view"); sys.exit(0 if not titles else 1)
if len(root) != 1:
    print("no root frame"); sys.exit(1)
w = float(re.match(r"all \(([0-9.]+)", root[0]).group(1))
unit = re.match(r"all \([0-9.]+ (\w+)", root[0]).group(1)
scale = {"s": 1e6, "ms": 1e3}.get(unit, 1)
if abs(w * scale - total) > max(1, total * 1e-3):
    print("root %s %s != folded total %d" % (w, unit, total)); sys.exit(1)
def first(e, name):	# the first descendant named so, as minidom's getElementsByTagName(...)[0]
    return next((d for d in e.iter() if d is not e and tag(d) == name), None)
gpu = []
for g in doc.iter():
    if tag(g) != "g":
        continue
    t = first(g, "title")
    if t is not None and (t.text or "").startswith("[gpu] "):
        gpu.append(g)
for g in gpu:
    r, gg, b = map(int, re.findall(r"\d+", first(g, "rect").get("fill")))
    if not (b > r and gg > r):
        print("GPU frame not in GPU colours"); sys.exit(1)
print("%d frames, total %d, %d gpu" % (len(titles), total, len(gpu)))
PY
) || fail "$n --view=$1 --weight=$2: $r"
		if [ "$r" != empty ]; then
			# in the browser: every graph, but of those over 30,000 frames (the
			# recorded PyTorch traces: a minute of Chromium each, the same script
			# as every other graph) the largest only
			nf=${r%% frames*}
			if [ "$nf" -le 30000 ]; then
				svgs+=("$out")
			elif [ "$nf" -gt "${big_n:-0}" ]; then
				big=$out big_n=$nf
			fi
		fi
	done
done
# a GPU view of the synthetic GPU trace must have GPU frames
grep -q '<title>\[gpu\] ' "$tmp/gpu-gpu-time.svg" || fail "no [gpu] frames in the gpu view"

# the other orientation (root at the bottom): its zoom and search work the same
"$REPORT" -F svg --svg-root=bottom "$tmp/synthetic.xpu" >"$tmp/synthetic-bottom.svg" 2>"$tmp/err" ||
	fail "xpu-report -F svg --svg-root=bottom: $(head -1 "$tmp/err")"
svgs+=("$tmp/synthetic-bottom.svg")

[ -n "${big:-}" ] && svgs+=("$big")
setup_browser
# one browser for every graph (tests/viewers/browse.js batch), a fresh page each: starting
# Chromium per graph was most of this test's time
for s in "${svgs[@]}"; do printf 'svg\t%s\t%s\n' "$s" "$s.png"; done >"$tmp/jobs"
timeout $((120 + 30 * ${#svgs[@]})) node "$ROOT/tests/viewers/browse.js" batch "$tmp/jobs" \
	>"$tmp/browse.out" 2>&1
rc=$?
cat "$tmp/browse.out"
[ $rc = 0 ] || fail "$(grep -m1 'FAIL' "$tmp/browse.out" || tail -1 "$tmp/browse.out") (exit $rc)"
[ "$(grep -c ': ok: ' "$tmp/browse.out")" = "${#svgs[@]}" ] ||
	fail "$(grep -c ': ok: ' "$tmp/browse.out") of ${#svgs[@]} graphs said ok"
[ -z "$CPU_NOTE" ] || echo "note: $CPU_NOTE"
echo "PASS $NAME: ${#svgs[@]} flame graphs in the browser${big:+ (of over 30,000 frames: $(basename "$big") alone)}"
