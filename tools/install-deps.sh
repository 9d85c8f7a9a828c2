#!/bin/sh
# Installs what kmemsnoop needs on Debian 12 (or newer), skipping what is
# already there.  Run as root (or through sudo).
#
#   tools/install-deps.sh [build]   to build and run kmemsnoop (make deps)
#   tools/install-deps.sh test      that, and what the tests need (make deps-test)
set -eu

# To build and run: compilers, libbpf and bpftool, libelf/zlib (libbpf's own
# needs), libdw (DWARF file:line tags of --allocinfo), ncurses (the --hist
# live view), libevent (--listen: evhttp), protobuf-c (--pprof: the runtime,
# and protoc-c, which turns src/allocinfo/pprof.proto into C at build
# time).  The -dev packages also ship the .a files make static links; libdw's
# static link needs libbz2's (libbz2-dev, which libdw-dev does not pull in).
build="make gcc libc6-dev clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev
       zlib1g-dev libbz2-dev libncurses-dev libevent-dev libprotobuf-c-dev
       protobuf-c-compiler"

# To test, on top of that: make fuzz: clang's libFuzzer runtime
# (libclang-rt-dev, which clang only recommends); util-linux (setpriv);
# tmux drives the live view in a terminal; prometheus (with promtool), curl
# and python3 scrape and query the --listen endpoint (python3 also reads
# recordings apart from kmemsnoop); golang-go: test_pprof reads the --pprof
# profiles with go tool pprof; linux-perf: test_stat compares --stat with
# perf kmem stat; man-db and groff-base render kmemsnoop.8 with warnings on;
# systemd has systemd-analyze, which verifies and rates the units
# (test_install; no running systemd needed);
# stress-ng: make soak's allocation load; strace: test_diskfull sees the cpu
# files opened O_DIRECT (e2fsprogs makes its ext4 image); tools/vmtest:
# qemu, busybox and bash linked statically for the VMs' initramfs, cpio to
# pack it (apt-get and dpkg-deb fetch the kernels); VMTEST_DWARF=1:
# e2fsprogs (mke2fs -d) makes the debug vmlinux's disk, and llvm's
# llvm-addr2line/llvm-dwarfdump with binutils' objdump find the lines it
# checks (tools/dwarf-expect); arm64: the cross compiler and its C library
# (make static ARCH=arm64; tools/arm64-sysroot fetches the other arm64
# libraries it links) and qemu-system-aarch64; tests/fresh-machine.sh:
# debootstrap makes the fresh Debian 12 root in which it follows README.md's
# "Installing"; tests/package.sh: lintian checks make deb's package (which
# it installs in such a root too).
test="libclang-rt-dev util-linux tmux linux-perf golang-go man-db groff-base systemd stress-ng
      qemu-system-x86 busybox-static bash-static cpio e2fsprogs binutils prometheus curl python3
      strace gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm debootstrap lintian"

case ${1:-build} in
build) pkgs=$build ;;
test) pkgs="$build $test" ;;
*)
	echo "usage: $0 [build|test]" >&2
	exit 2
	;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything ${1:-build} needs is installed"
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
