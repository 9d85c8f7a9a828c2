#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# src/'s layout keeps its include rule (tools/check-layers,
# docs/ARCHITECTURE.md): a folder includes from itself and from the layers
# below it, a mode from no other mode but those it is built from.
#
#   layers.src        tools/check-layers finds no broken rule in src/
#   layers.catches    on a copy of src/ where the stat mode includes the hist
#                     mode's header, a shared layer includes a mode's and
#                     another folder is included by a bare name, it names
#                     each of the three and exits 1
#
# vmtest: host only: it reads the source tree.
. "$(dirname "$0")/../lib.sh"

TESTS=(layers.src layers.catches)
CHECK="$TOP/tools/check-layers"
command -v python3 >/dev/null || skip_all "no python3"

"$CHECK" >"$WORK/src.out" 2>&1
check $? layers.src "$(head -n 3 "$WORK/src.out")" "$WORK/src.out"

cp -r "$TOP/src" "$WORK/src"
echo '#include "hist/hist.h"' >>"$WORK/src/stat/kstat.c"
echo '#include "stream/text.h"' >>"$WORK/src/names/ksyms.c"
echo '#include "ksyms.h"' >>"$WORK/src/recording/record.c"
"$CHECK" "$WORK/src" >"$WORK/copy.out" 2>&1
rc=$?
n=$(grep -cE '^(stat/kstat\.c .*hist/hist\.h|names/ksyms\.c .*stream/text\.h|recording/record\.c includes ksyms\.h)' \
	"$WORK/copy.out")
[ "$rc" -eq 1 ] && [ "$n" -eq 3 ] && [ "$(wc -l <"$WORK/copy.out")" -eq 3 ]
check $? layers.catches "exit $rc, $n of the 3 broken rules named: $(head -n 3 "$WORK/copy.out")" \
	"$WORK/copy.out"
finish
