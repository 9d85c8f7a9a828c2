#!/bin/sh
# Installs what kmemsnoop needs to build and test on Debian 12 (or newer),
# skipping what is already there.  Run as root (or through sudo).
set -eu
# build: compilers, libbpf, bpftool, libelf/zlib (libbpf's own needs), libdw
# (DWARF file:line tags of --allocinfo), ncurses (the --hist live view); the
# -dev packages also ship the .a files make static links, and libdw's static
# link needs libbz2's (libbz2-dev, which libdw-dev does not pull in);
# --pprof: libprotobuf-c-dev (its runtime, and the .a make static links) and
# protobuf-c-compiler (protoc-c turns src/allocinfo/pprof.proto into C at build time);
# make fuzz: clang's libFuzzer runtime (libclang-rt-dev, which clang only
# recommends);
# tests: coreutils, gawk/mawk and util-linux (setpriv) are on every Debian;
# tmux drives the live view in a terminal; prometheus (with promtool), curl and
# python3 scrape and query the --listen endpoint; golang-go: test_pprof reads
# the --pprof profiles with go tool pprof; linux-perf: test_stat compares
# --stat with perf kmem stat; man-db and groff-base render kmemsnoop.8 with
# warnings on, systemd has systemd-analyze, which verifies and rates the
# kmemsnoop-exporter unit (test_install; no running systemd needed);
# stress-ng: the vm, malloc and fork stressors of make soak's allocation
# load (tests/soak.sh); strace: test_diskfull sees the cpu files opened
# O_DIRECT (e2fsprogs makes its ext4 image);
# tools/vmtest: qemu, and for the VMs' initramfs busybox and bash linked
# statically, cpio to pack it (apt-get and dpkg-deb fetch the kernels);
# VMTEST_DWARF=1: e2fsprogs (mke2fs -d) makes the debug vmlinux's disk, and
# llvm's llvm-addr2line/llvm-dwarfdump with binutils' objdump find the lines
# it checks (tools/dwarf-expect);
# arm64: the cross compiler and its C library (make static ARCH=arm64;
# tools/arm64-sysroot fetches the other arm64 libraries it links) and
# qemu-system-aarch64.
pkgs="make gcc libc6-dev clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
      libbz2-dev libclang-rt-dev libncurses-dev libmicrohttpd-dev libprotobuf-c-dev
      protobuf-c-compiler util-linux tmux linux-perf golang-go man-db groff-base systemd stress-ng
      qemu-system-x86 busybox-static bash-static cpio e2fsprogs binutils prometheus curl python3 strace
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing:$missing; run as root (sudo make deps)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
