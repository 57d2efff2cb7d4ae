#!/bin/sh
# The top launch site of each committed GPU trace is the program's own code with the framework
# op beside it (report/model/user_code.c): a line of the script for the PyTorch traces (not
# PyTorch's run_conv_plan, the rule before), the program's launcher for the CUDA ones; and a
# site, as the table names it, is a function --callees takes.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPORT=${REPORT:-"$ROOT/${BUILD:-build}/xpu-report"}
T="$ROOT/samples/traces"
fail=0

[ -x "$REPORT" ] || { echo "not built: $REPORT"; exit 77; }
top_site() {	# the first row of the launch-sites table: "site<TAB>op"
	"$REPORT" --no-host-files "$1" 2>/dev/null | awk '
		/^# top gpu launch sites/ { t = 1; next }
		t && /^ +share/ { at = index($0, "site"); opat = index($0, "op / "); next }
		t && at { s = substr($0, at, opat - at); sub(/ +$/, "", s)
			  print s "\t" substr($0, opat); exit }'
}
expect() {	# trace site-regex op-regex
	row=$(top_site "$T/$1.xpu")
	site=${row%%	*}
	op=${row#*	}
	if echo "$site" | grep -Eq "$2" && echo "$op" | grep -Eq "$3"; then
		echo "ok $1: $site | $(echo "$op" | cut -c1-60)"
	else
		echo "FAIL $1: site '$site' op '$(echo "$op" | cut -c1-80)'"
		fail=1
	fi
}
for n in torch-python torch-backward torch-small; do
	expect "$n" '^Net\.forward \(torch_train\.py:34\)$' '^at::native::run_conv_plan\('
done
for n in pipeline pipeline-graph pipeline-static; do
	expect "$n" '^launch_matmul\(bufs&\)$' '^-$'
done
# a site as the table names it, line and all, is a function --callers/--callees take
h=$("$REPORT" --no-host-files --callees="Net.forward (torch_train.py:34)" --rows=1 \
	"$T/torch-python.xpu" 2>&1 | head -1)
if [ "$h" = "# callees of Net.forward (torch_train.py)" ]; then
	echo "ok --callees of a site"
else
	echo "FAIL --callees of a site: $h"
	fail=1
fi
exit $fail
