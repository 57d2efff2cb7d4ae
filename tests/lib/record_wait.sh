# Sourced by e2e tests that signal or inspect a recording while it runs.
# wait_target REC: waits (at most 30 s) until xpu-record (pid REC) has started its command, and
# prints the command's pid. xpu-record starts it only once the BPF programs are loaded, and the
# default -g cfi walk takes the verifier seconds on a loaded machine, so a fixed sleep after
# launching xpu-record is not enough.
wait_target() {
	local rec=$1 tgt _
	for _ in $(seq 300); do
		tgt=$(pgrep -P "$rec" | head -1)
		[ -n "$tgt" ] && { echo "$tgt"; return 0; }
		kill -0 "$rec" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
