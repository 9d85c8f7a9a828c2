#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF.
# Usage: tools/gen-vmlinux-h.sh [BTF_FILE] [ARCH]
#   BTF_FILE defaults to /sys/kernel/btf/vmlinux, ARCH to the machine's (x86, arm64, ...).
# CO-RE relocations make one header good for every kernel; regenerate it only to pick up
# types that newer kernels introduced.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
bpftool=${BPFTOOL:-bpftool}
top=$(cd "$(dirname "$0")/.." && pwd)
[ -r "$btf" ] || { echo "gen-vmlinux-h: cannot read BTF at $btf" >&2; exit 1; }
mkdir -p "$top/vmlinux/$arch"
out="$top/vmlinux/$arch/vmlinux.h"
"$bpftool" btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "gen-vmlinux-h: wrote $out from $btf ($(wc -l < "$out") lines)"
