#!/bin/bash
# A real viewer reads our files: the speedscope web app (npm package, served on localhost)
# opens the --format=chrome JSON, the --format=folded and --format=pprof output of each trace in
# headless Chromium (tests/viewers/browse.js); each must import without an error message or
# console error and draw a non-blank flame chart (a JSON over 8 MB: a slice of its run, about
# 6 MB). For the traces with CPU samples, what
# speedscope draws of the JSON (saved by its own Export button) must nest every sampled
# stack root first (tests/viewers/stacks.py). Exit 0 pass, 77 skip, else fail.
set -u
NAME=test_viewers
source "$(dirname "$0")/../viewers/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
tmp=$(mktemp -d) || exit 1
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
setup_browser
make_traces

site=$tmp/site
mkdir -p "$site/files"
ln -s "$VIEWERS_DIR/node_modules/speedscope/dist/release" "$site/speedscope"
files=()
stacks=()
for f in "${TRACES[@]}"; do
	n=$(basename "$f" .xpu)
	"$REPORT" -F chrome "$f" >"$site/files/$n.json" 2>"$tmp/err" ||
		fail "xpu-report -F chrome $n.xpu: $(head -1 "$tmp/err")"
	# the recorded PyTorch traces' JSON is 28-39 MB, and speedscope took two minutes of
	# the test's three to import each; a slice of about 6 MB from the middle of the run
	# (--time-range) is opened instead: the viewers import it as they would the whole, though
	# it need not hold every kind of event (torch-backward's middle has no kernel)
	bytes=$(wc -c <"$site/files/$n.json")
	if [ "$bytes" -gt $((8 << 20)) ]; then
		dur=$("$REPORT" -F info "$f" 2>/dev/null | awk '$1 == "duration" { print $2 }')
		range=$(awk -v d="${dur:-0}" -v b="$bytes" 'BEGIN { w = d * (6 * 1048576) / b
			printf "%.3f,%.3f", d / 2 - w / 2, d / 2 + w / 2 }')
		"$REPORT" -F chrome --time-range="$range" "$f" >"$site/files/$n.json" 2>"$tmp/err" ||
			fail "xpu-report -F chrome --time-range=$range $n.xpu: $(head -1 "$tmp/err")"
		echo "$n.json: $((bytes >> 20)) MB whole; opened: --time-range=$range of ${dur}s, $(($(wc -c <"$site/files/$n.json") >> 20)) MB"
	fi
	"$REPORT" -F folded "$f" >"$site/files/$n.folded" 2>"$tmp/err" ||
		fail "xpu-report -F folded $n.xpu: $(head -1 "$tmp/err")"
	files+=("$n.json" "$n.folded")
	# speedscope imports pprof's gzipped protobuf too (a build without protobuf-c: none)
	if "$REPORT" -F pprof -o "$site/files/$n.pb.gz" "$f" 2>"$tmp/err"; then
		files+=("$n.pb.gz")
	else
		grep -q 'not in this build' "$tmp/err" ||
			fail "xpu-report -F pprof $n.xpu: $(head -1 "$tmp/err")"
	fi
	case $n in
	synthetic|cpu|pipeline)
		"$REPORT" -F folded --view=cpu "$f" >"$tmp/$n.cpu.folded" 2>"$tmp/err" ||
			fail "xpu-report -F folded --view=cpu $n.xpu: $(head -1 "$tmp/err")"
		stacks+=("$n")
		;;
	esac
done

# port 0: the kernel picks a free one; http.server prints it
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$site" >"$tmp/http.log" 2>&1 &
srv=$!
port=""
# 30 s: python's start is seconds on a loaded machine
for _ in $(seq 300); do
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/http.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || fail "python3 -m http.server said no port in 30 s: $(head -1 "$tmp/http.log")"

# one browser for every file (tests/viewers/browse.js batch): starting Chromium per file was
# most of this test's time; each file still gets a fresh page
: >"$tmp/jobs"
for f in "${files[@]}"; do
	url="http://127.0.0.1:$port/speedscope/index.html#profileURL=http://127.0.0.1:$port/files/$f"
	printf 'speedscope\t%s\t%s\n' "$url" "$tmp/$f.png" >>"$tmp/jobs"
done
for n in "${stacks[@]}"; do
	url="http://127.0.0.1:$port/speedscope/index.html#profileURL=http://127.0.0.1:$port/files/$n.json"
	printf 'speedscope-export\t%s\t%s\n' "$url" "$tmp/$n.speedscope.json" >>"$tmp/jobs"
done
# a bound for a hung browser only: 120 s a job was the bound when each had its own
njobs=$(wc -l <"$tmp/jobs")
timeout $((120 + 30 * njobs)) node "$ROOT/tests/viewers/browse.js" batch "$tmp/jobs" >"$tmp/browse.out" 2>&1
rc=$?
cat "$tmp/browse.out"
[ $rc = 0 ] || fail "speedscope: $(grep -m1 'FAIL' "$tmp/browse.out" || tail -1 "$tmp/browse.out") (exit $rc)"
[ "$(grep -c ': ok: ' "$tmp/browse.out")" = "$njobs" ] ||
	fail "speedscope: $(grep -c ': ok: ' "$tmp/browse.out") of $njobs files said ok"
for n in "${stacks[@]}"; do
	out=$(python3 "$ROOT/tests/viewers/stacks.py" "$tmp/$n.speedscope.json" "$tmp/$n.cpu.folded") ||
		fail "speedscope's drawing of $n.json: $out"
	echo "$n.json stacks: $out"
done
[ -z "$CPU_NOTE" ] || echo "note: $CPU_NOTE"
echo "PASS $NAME: ${#files[@]} files opened in speedscope"
