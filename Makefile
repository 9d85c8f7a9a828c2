# kmemsnoop build.
#
#   make            ./kmemsnoop, the unit tests and the test workload
#   make test       install what testing needs, then the whole test suite
#                   (root: it runs BPF programs), the VM
#                   matrix included (every x86 and arm64 kernel;
#                   VMTEST=0 leaves the VMs out)
#   make static     a fully static ./kmemsnoop-static (libbpf, libelf, libdw, ncurses...)
#   make static ARCH=arm64 (or make static-arm64)
#                   the same for arm64, cross-built: ./kmemsnoop-arm64, and the
#                   arm64 test programs under .output/arm64/tests
#   make vmtest     the integration tests on Debian's 5.10, 6.1 and 6.12 kernels
#                   under QEMU (tools/vmtest; downloads cached)
#   make vmtest-arm64  the same on Debian's arm64 kernels (5.10, 6.1, 6.12 and
#                   the newest) under qemu-system-aarch64
#   make vmtest-dwarf  --allocinfo's file:line tags on Debian's 6.1 kernel with
#                   its debug vmlinux (VMTEST_DWARF=1; about 280 MB to download
#                   once; DWARF_SERIES, VMTEST_TESTS pick others)
#   make bench      overhead against untraced runs and peer tools (root; not part of test)
#   make run        install what building needs, build, and run ./kmemsnoop $(ARGS)
#   make deps       install what building and running need (Debian, apt-get)
#   make deps-test  that, and what the tests need (make test runs it first)
#   make dist       a release tarball of HEAD, its version written in (DISTDIR=.)
#   make install    install ./kmemsnoop, its man page, bash completion and
#                   the kmemsnoop-exporter systemd unit (PREFIX=/usr/local,
#                   DESTDIR honoured); make uninstall removes them
#   make deb        a Debian package of the static binary, its manual page,
#                   completion, unit and documentation in DEBDIR (default .):
#                   kmemsnoop_<version>-1_amd64.deb, or ARCH=arm64 for arm64
#                   (tests/package.sh installs it in a fresh Debian root)
#   make clean
#
# libbpf and bpftool come from the libbpf/ and bpftool/ submodules when they
# are checked out, otherwise from the system (pkg-config libbpf >= 1.1, and
# bpftool on PATH or in /usr/sbin).

OUTPUT ?= .output
CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
PKG_CONFIG ?= pkg-config

# Goals that install the dependencies first and then make again: they must
# get that far on a machine that has none yet.
INSTALLER_GOALS := deps deps-test run test

HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
ARCH := $(HOST_ARCH)
VMLINUX_DIR := vmlinux/$(ARCH)

# --- cross builds ----------------------------------------------------------------
# ARCH=arm64 on another machine: aarch64-linux-gnu-gcc (with its own C
# library) and Debian's arm64 libbpf, libelf, libdw, ncurses... unpacked in a
# sysroot (tools/arm64-sysroot fetches them), in
# a separate OUTPUT (the skeletons embed the BPF objects of one
# architecture); pkg-config reads the sysroot's .pc files, so the flags
# below come out right for it.  Only the static build is meant to run.
CROSS_arm64 := aarch64-linux-gnu-
ifneq ($(ARCH),$(HOST_ARCH))
CROSS ?= $(CROSS_$(ARCH))
ifeq ($(CROSS),)
$(error ARCH=$(ARCH): no cross compiler known (set CROSS=<triplet>-))
endif
OUTPUT := .output/$(ARCH)
ifeq ($(filter clean dist $(INSTALLER_GOALS),$(MAKECMDGOALS)),)
SYSROOT ?= $(shell tools/$(ARCH)-sysroot)
ifeq ($(wildcard $(SYSROOT)/usr/include/bpf/libbpf.h),)
$(error ARCH=$(ARCH): no sysroot (tools/$(ARCH)-sysroot failed))
endif
endif
CC := $(CROSS)gcc
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
	PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/$(patsubst %-,%,$(CROSS))/pkgconfig:$(SYSROOT)/usr/share/pkgconfig \
	pkg-config
READELF := $(CROSS)readelf
TEST_BIN := $(OUTPUT)/tests
STATIC_COPY := kmemsnoop-$(ARCH)
endif
READELF ?= readelf
TEST_BIN ?= tests
STATIC_COPY ?= kmemsnoop-static

CFLAGS ?= -O2 -g
# One version string for -V, recordings, metrics, the manual page and the
# package (tools/version: VERSION, and git when building from a checkout).
VERSION_STRING := $(shell tools/version)
WARNINGS := -Wall -Wextra -Werror
USER_CFLAGS := -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -Isrc -I$(OUTPUT)

# --- libbpf ------------------------------------------------------------------
ifneq ($(wildcard libbpf/src/Makefile),)
LIBBPF_FROM := submodule libbpf/
LIBBPF_A := $(abspath $(OUTPUT)/libbpf/lib/libbpf.a)
LIBBPF_INC := $(abspath $(OUTPUT)/libbpf/include)
LIBBPF_CFLAGS := -I$(LIBBPF_INC)
LIBBPF_LIBS := $(LIBBPF_A) -lelf -lz
LIBBPF_DEP := $(LIBBPF_A)
else
LIBBPF_VERSION := $(shell $(PKG_CONFIG) --modversion libbpf 2>/dev/null)
ifeq ($(LIBBPF_VERSION),)
MISSING += libbpf (check out the submodule: git submodule update --init, or install libbpf-dev)
endif
LIBBPF_FROM := system libbpf $(LIBBPF_VERSION)
LIBBPF_INC := $(shell $(PKG_CONFIG) --variable=includedir libbpf 2>/dev/null)
LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null)
LIBBPF_DEP :=
endif

# --- bpftool -----------------------------------------------------------------
ifneq ($(wildcard bpftool/src/Makefile),)
BPFTOOL_FROM := submodule bpftool/
BPFTOOL := $(abspath $(OUTPUT)/bpftool/bootstrap/bpftool)
BPFTOOL_DEP := $(BPFTOOL)
else
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),$(wildcard /usr/sbin/bpftool))
BPFTOOL_FROM := system bpftool $(BPFTOOL)
BPFTOOL_DEP :=
ifeq ($(BPFTOOL),)
MISSING += bpftool (check out the submodule, or install bpftool)
endif
endif

# Without them nothing builds; the installer goals install them first.
ifeq ($(filter clean dist $(INSTALLER_GOALS),$(MAKECMDGOALS)),)
ifneq ($(MISSING),)
$(error not found: $(MISSING); sudo make deps installs what is missing)
endif
$(info kmemsnoop: using $(LIBBPF_FROM), $(BPFTOOL_FROM))
endif

# --- libdw (elfutils): DWARF file:line for --allocinfo ----------------------------
# Every link of libdw goes through LIBDW_LIBS.
LIBDW_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdw 2>/dev/null)
LIBDW_LIBS := $(or $(shell $(PKG_CONFIG) --libs libdw 2>/dev/null),-ldw -lelf)

# --- ncurses (the --hist live view) --------------------------------------------
# One place for the flags, so that other link modes (e.g. static) reuse them.
CURSES_PC ?= ncursesw
CURSES_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags $(CURSES_PC) 2>/dev/null)
CURSES_LIBS ?= $(or $(shell $(PKG_CONFIG) --libs $(CURSES_PC) 2>/dev/null),-lncursesw -ltinfo)

# --- libevent's evhttp (the --listen endpoint) -----------------------------------
# The HTTP server of every build, the static ones too: evhttp is in
# libevent_extra, built on libevent_core; neither needs TLS, and Debian's
# libevent-dev ships both as .a files.  Extra before core: the order a
# static link needs.
HTTPD_PC := libevent_extra libevent_core
HTTPD_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(HTTPD_PC) 2>/dev/null)
HTTPD_LIBS := $(or $(shell $(PKG_CONFIG) --libs $(HTTPD_PC) 2>/dev/null),-levent_extra -levent_core) \
	-lpthread

# --- protobuf-c (the --pprof profiles) ------------------------------------------------
# src/allocinfo/pprof.proto becomes C at build time (protoc-c), in $(OUTPUT).
PROTOC_C ?= protoc-c
PROTOBUF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libprotobuf-c 2>/dev/null)
PROTOBUF_LIBS := $(or $(shell $(PKG_CONFIG) --libs libprotobuf-c 2>/dev/null),-lprotobuf-c)
PB_SRC := $(OUTPUT)/pprof.pb-c.c
PB_HDR := $(OUTPUT)/pprof.pb-c.h
# The static build links libprotobuf-c.a when this system (or the cross
# sysroot) has it, else pprof_none.c, whose --pprof says why it cannot.
MULTIARCH := $(if $(CROSS),$(patsubst %-,%,$(CROSS)),$(shell $(CC) -print-multiarch 2>/dev/null))
PROTOBUF_A := $(firstword $(wildcard $(SYSROOT)/usr/lib/$(MULTIARCH)/libprotobuf-c.a \
	$(SYSROOT)/usr/lib/libprotobuf-c.a $(SYSROOT)/usr/lib64/libprotobuf-c.a))

# --- static linking ------------------------------------------------------------
# The static libraries behind libbpf, libdw and ncurses: pkg-config --static
# knows what this system's need (libelf: zlib; libdw: bzip2, lzma...).
STATIC_PC_LIBS = $(shell $(PKG_CONFIG) --static --libs $(1) 2>/dev/null)
ifneq ($(LIBBPF_A),)
STATIC_LIBS := $(LIBBPF_A) $(or $(call STATIC_PC_LIBS,libelf zlib),-lelf -lz)
else
STATIC_LIBS := $(or $(call STATIC_PC_LIBS,libbpf),-lbpf -lelf -lz)
endif
STATIC_LIBS += $(or $(call STATIC_PC_LIBS,libdw),$(LIBDW_LIBS)) \
	$(or $(call STATIC_PC_LIBS,$(CURSES_PC)),$(CURSES_LIBS)) -lm
STATIC_KMEMSNOOP := $(OUTPUT)/static/kmemsnoop

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(VMLINUX_DIR) -Isrc/bpf $(LIBBPF_CFLAGS)

# The sources, found by folder (docs/ARCHITECTURE.md): the top (main, the
# options, the session), the shared layers, then one folder per mode.
# pprof_none.c stands in for pprof.c where a static build has no library
# for it.
SRC_DIRS := util kernel names recording stream stat hist allocinfo exporter flight
STAND_INS := src/allocinfo/pprof_none.c
APP_SRCS := src/kmemsnoop.c src/env.c src/env_help.c src/env_check.c src/session.c src/session_configure.c src/session_run.c \
	$(filter-out $(STAND_INS),$(foreach d,$(SRC_DIRS),$(sort $(wildcard src/$(d)/*.c))))
LIB_SRCS := $(filter-out src/kmemsnoop.c,$(APP_SRCS))
HDRS := $(wildcard src/*.h src/*/*.h)
# The generated protobuf-c code goes with every set of objects.
APP_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(APP_SRCS)) $(OUTPUT)/pprof.pb-c.o
LIB_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(LIB_SRCS)) $(OUTPUT)/pprof.pb-c.o
UNIT_SRCS := $(wildcard tests/unit/*.c tests/unit/*/*.c)

.PHONY: all test unit run deps deps-test clean dist vmlinux bench static vmtest static-arm64 vmtest-arm64 \
	install uninstall vmtest-dwarf soak deb
.DELETE_ON_ERROR:

all: kmemsnoop tests/unit/unit_tests tests/dwarf_fixture tests/nodwarf_fixture tests/workload \
	tests/bpf_progs tests/recwalk

kmemsnoop: $(APP_OBJS) $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(LDFLAGS) $(APP_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) \
		$(HTTPD_LIBS) $(PROTOBUF_LIBS) -lm -o $@

# The BPF objects, each with its bpftool-generated skeleton: the main one,
# and the small one that calibrates page frame numbers.
BPF_OBJS := kmemsnoop pfn
SKELETONS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_OBJS))

$(OUTPUT)/%.o: src/%.c $(HDRS) $(SKELETONS) | $(OUTPUT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $(LIBDW_CFLAGS) -c $< -o $@

$(OUTPUT)/hist/live.o: USER_CFLAGS += $(CURSES_CFLAGS)

# The version as a header, rewritten only when it changes, so that a new
# commit rebuilds util/version.o and nothing else.
VERSION_H := $(OUTPUT)/kmemsnoop_version.h
$(VERSION_H): FORCE | $(OUTPUT)
	@printf '#define KMEMSNOOP_VERSION "%s"\n' '$(VERSION_STRING)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(OUTPUT)/util/version.o: $(VERSION_H)
.PHONY: FORCE
FORCE:

$(OUTPUT)/exporter/httpd.o: USER_CFLAGS += $(HTTPD_CFLAGS)

$(PB_SRC) $(PB_HDR) &: src/allocinfo/pprof.proto | $(OUTPUT)
	$(PROTOC_C) --proto_path=src/allocinfo --c_out=$(OUTPUT) $<

$(OUTPUT)/allocinfo/pprof.o: $(PB_HDR)
$(OUTPUT)/allocinfo/pprof.o: USER_CFLAGS += $(PROTOBUF_CFLAGS)

$(OUTPUT)/pprof.pb-c.o: $(PB_SRC) $(PB_HDR)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(PROTOBUF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.bpf.o: src/bpf/%.bpf.c $(wildcard src/bpf/*.h) $(VMLINUX_DIR)/vmlinux.h $(LIBBPF_DEP) | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(LLVM_STRIP) -g $@.tmp -o $@ 2>/dev/null || mv $@.tmp $@
	rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o $(BPFTOOL_DEP)
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT):
	mkdir -p $@

# libbpf from the submodule, static, headers installed under $(OUTPUT)/libbpf.
$(LIBBPF_A):
	$(MAKE) -C libbpf/src BUILD_STATIC_ONLY=1 OBJDIR=$(abspath $(OUTPUT)/libbpf/obj) \
		DESTDIR=$(abspath $(OUTPUT)/libbpf) PREFIX= INCLUDEDIR=/include LIBDIR=/lib \
		UAPIDIR=/include install install_uapi_headers

# bpftool from the submodule: only its bootstrap build is needed for skeletons.
$(OUTPUT)/bpftool/bootstrap/bpftool:
	$(MAKE) -C bpftool/src OUTPUT=$(abspath $(OUTPUT)/bpftool)/ bootstrap

tests/unit/unit_tests: $(UNIT_SRCS) $(LIB_OBJS) $(wildcard tests/unit/*.h) $(LIBBPF_DEP) $(PB_HDR)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $(PROTOBUF_CFLAGS) -Itests/unit $(UNIT_SRCS) \
		$(LIB_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) $(HTTPD_LIBS) \
		$(PROTOBUF_LIBS) -lm -o $@

# Executables at fixed addresses for the source line tests: one with DWARF
# (-g whatever CFLAGS say), one without.
tests/dwarf_fixture: tests/dwarf_fixture.c
	$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-pie -no-pie -Wl,--build-id $< -o $@

tests/nodwarf_fixture: tests/dwarf_fixture.c
	$(CC) -std=gnu11 $(WARNINGS) -O1 -g0 -fno-pie -no-pie $< -o $@

unit: tests/unit/unit_tests tests/dwarf_fixture tests/nodwarf_fixture
	tests/unit/unit_tests

# The BPF programs run on crafted arguments (BPF_PROG_TEST_RUN); static,
# so that it runs in the test VMs too.
BPF_PROGS_OBJS := $(OUTPUT)/kernel/kernel_features.o $(OUTPUT)/kernel/sources.o \
	$(OUTPUT)/recording/record.o $(OUTPUT)/util/idtab.o $(OUTPUT)/recording/tasktab.o \
	$(OUTPUT)/stream/ringbuf.o

$(TEST_BIN)/bpf_progs: tests/bpf_progs.c $(BPF_PROGS_OBJS) $(SKELETONS) $(LIBBPF_DEP)
	mkdir -p $(@D)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) -static $< $(BPF_PROGS_OBJS) $(STATIC_LIBS) -o $@

# Static, libc only: the same binary runs in the test VMs' busybox initramfs.
# Frame pointers: --user-stacks follows them.
$(TEST_BIN)/workload: tests/workload.c
	mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARNINGS) -fno-omit-frame-pointer -static $< -o $@

$(TEST_BIN)/recwalk: tests/recwalk.c
	mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARNINGS) -static $< -o $@

# The same objects linked with -static, checked to need no shared library:
# this binary runs in the test VMs' initramfs and on machines without libbpf.
# The HTTP server of --listen: libevent's archives (HTTPD_PC, as the
# dynamic build).  --pprof: libprotobuf-c.a if there is one, else
# pprof_none.c.
STATIC_OBJS := $(APP_OBJS)
HTTPD_STATIC_LIBS := $(or $(call STATIC_PC_LIBS,$(HTTPD_PC)),-levent_extra -levent_core)
ifeq ($(PROTOBUF_A),)
STATIC_OBJS := $(filter-out $(OUTPUT)/allocinfo/pprof.o $(OUTPUT)/pprof.pb-c.o,$(STATIC_OBJS)) \
	$(OUTPUT)/allocinfo/pprof_none.o
endif

$(STATIC_KMEMSNOOP): $(STATIC_OBJS) $(LIBBPF_DEP)
	mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -static $(STATIC_OBJS) $(PROTOBUF_A) $(HTTPD_STATIC_LIBS) $(STATIC_LIBS) \
		-o $@
	@if $(READELF) -d $@ | grep -q NEEDED; then \
		echo "kmemsnoop: $@ still needs shared libraries:" >&2; $(READELF) -d $@ | grep NEEDED >&2; \
		rm -f $@; exit 1; fi

static: $(STATIC_KMEMSNOOP) $(if $(CROSS),$(TEST_BIN)/workload $(TEST_BIN)/recwalk $(TEST_BIN)/bpf_progs)
	cp $(STATIC_KMEMSNOOP) $(STATIC_COPY)

# arm64 from any machine: the static binaries (ARCH=arm64 above) and the
# tests on Debian's arm64 kernels under qemu-system-aarch64.
ARM64_OUTPUT := .output/arm64
static-arm64:
	$(MAKE) static ARCH=arm64

vmtest-arm64: static-arm64
	KMEMSNOOP_STATIC=$(abspath $(ARM64_OUTPUT)/static/kmemsnoop) \
		WORKLOAD=$(abspath $(ARM64_OUTPUT)/tests/workload) \
		BPF_PROGS=$(abspath $(ARM64_OUTPUT)/tests/bpf_progs) tools/vmtest --arch arm64

# tests/run.sh runs tools/vmtest after the host's tests, so that its
# closing totals count the VMs' results too.
# With the VMs, the arm64 build too: tests/run.sh boots every arm64
# kernel alongside the x86 matrix (VMTEST_ARM64: which ones; 0 none).
test: deps-test
	$(MAKE) all $(STATIC_KMEMSNOOP) $(if $(filter 0,$(VMTEST)),,static-arm64)
	KMEMSNOOP_STATIC=$(abspath $(STATIC_KMEMSNOOP)) tests/run.sh

vmtest: $(STATIC_KMEMSNOOP) tests/workload tests/recwalk tests/bpf_progs
	KMEMSNOOP_STATIC=$(abspath $(STATIC_KMEMSNOOP)) tools/vmtest

# The kernel's debug vmlinux in the VM: test_dwarf_kernel checks the tags
# against the lines its DWARF gives (tools/dwarf-expect).
DWARF_SERIES ?= 6.1
vmtest-dwarf: $(STATIC_KMEMSNOOP) tests/workload tests/recwalk tests/bpf_progs
	VMTEST_DWARF=1 VMTEST_TESTS="$${VMTEST_TESTS:-test_dwarf_kernel}" \
		KMEMSNOOP_STATIC=$(abspath $(STATIC_KMEMSNOOP)) tools/vmtest $(DWARF_SERIES)

# Benchmark programs: the workloads and the empty-program floor.
BENCH_PROGS := bench/churn bench/floor

# Frame pointers: the user stacks of its events (--user-stacks) are whole.
bench/churn: bench/churn.c
	$(CC) $(CFLAGS) -std=gnu11 $(WARNINGS) -fno-omit-frame-pointer -pthread $< -o $@

$(OUTPUT)/floor.bpf.o: bench/floor.bpf.c $(VMLINUX_DIR)/vmlinux.h $(LIBBPF_DEP) | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/floor.skel.h: $(OUTPUT)/floor.bpf.o $(BPFTOOL_DEP)
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@

bench/floor: bench/floor.c $(OUTPUT)/floor.skel.h $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $< $(LIBBPF_LIBS) -lelf -lz -o $@

bench: all $(BENCH_PROGS)
	bench/overhead.sh

# A long mixed allocation load (stress-ng and the workload) under three
# kmemsnoop instances at once: memory levels off, nothing lost or lost
# and said, the recording complete and equal to the kernel's own trace of
# the workload, every BPF object gone at the end (tests/soak.sh,
# docs/SOAK.md).  Root; SOAK_SECONDS=90 for a short one.
SOAK_SECONDS ?= 600

soak: all
	SOAK_SECONDS=$(SOAK_SECONDS) tests/soak.sh

deps:
	tools/install-deps.sh build

deps-test:
	tools/install-deps.sh test

run: deps
	$(MAKE) kmemsnoop
	./kmemsnoop $(ARGS)

vmlinux:
	tools/gen-vmlinux-h.sh

# A release tarball of HEAD, kmemsnoop-<version>.tar.gz in DISTDIR: the
# sources without git, VERSION holding the whole version (tools/version
# reads it there).  Uncommitted changes would not be in it: it refuses them.
DISTDIR ?= .
dist:
	@case '$(VERSION_STRING)' in *dirty*) \
		echo "make dist: uncommitted changes (git archive packs HEAD)" >&2; exit 1;; esac
	@d=kmemsnoop-$(VERSION_STRING); t=$$(mktemp -d) && \
	git archive --prefix=$$d/ HEAD | tar -x -C $$t && \
	echo '$(VERSION_STRING)' > $$t/$$d/VERSION && \
	tar -C $$t -czf $(DISTDIR)/$$d.tar.gz $$d && rm -rf $$t && \
	echo "$(DISTDIR)/$$d.tar.gz"

# --- installing ---------------------------------------------------------------
# The GNU directory variables: PREFIX (default /usr/local), DESTDIR for a
# staging root, each directory overridable.  sbin: kmemsnoop needs root (or
# its capabilities).  SYSCONFDIR is /etc for PREFIX=/usr, else PREFIX/etc:
# the units read their optional settings from there.  The units are written
# from their templates at each install, so that ExecStart= names the binary
# that this install puts in place, whatever PREFIX was, and so is the bash
# completion, which falls back on that binary (straight into place:
# make install writes nothing in the source tree, which may be another
# user's).
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
INSTALL ?= install
UNITS := kmemsnoop-exporter.service kmemsnoop-flight.service

# install_template IN,OUT: IN with the installed paths filled in, mode 644.
install_template = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	$(1) > $(2) && chmod 644 $(2)

install: kmemsnoop
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 kmemsnoop $(DESTDIR)$(SBINDIR)/kmemsnoop
	sed -e '/^\.TH /s/"kmemsnoop [^"]*"/"kmemsnoop $(VERSION_STRING)"/' man/kmemsnoop.8 \
		> $(DESTDIR)$(MANDIR)/man8/kmemsnoop.8 && chmod 644 $(DESTDIR)$(MANDIR)/man8/kmemsnoop.8
	$(call install_template,dist/kmemsnoop.bash.in,$(DESTDIR)$(BASHCOMPDIR)/kmemsnoop)
	$(foreach u,$(UNITS),$(call install_template,dist/$(u).in,$(DESTDIR)$(SYSTEMDUNITDIR)/$(u)) &&) true

# The files only: the directories may hold others' files.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/kmemsnoop $(DESTDIR)$(MANDIR)/man8/kmemsnoop.8 \
		$(DESTDIR)$(BASHCOMPDIR)/kmemsnoop $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(UNITS))

# --- the Debian package ---------------------------------------------------------
# make deb [ARCH=arm64] [DEBDIR=dir]: DEBDIR/kmemsnoop_<version>-1_<arch>.deb,
# built with dpkg-deb (no debhelper), for Debian 12 and later.  It holds the
# static binary (.output/static/kmemsnoop; for ARCH=arm64 the cross-built
# .output/arm64/static/kmemsnoop), so that it depends on no other package.
# The files are make install's with PREFIX=/usr, from the same sources and
# templates; make install itself does not fit: it installs ./kmemsnoop, the
# dynamically linked build, which it would build first (for ARCH=arm64, an
# arm64 ./kmemsnoop over the native one).  dist/deb/mkdeb adds the rest: the
# stripped binary, the compressed manual page, /usr/share/doc/kmemsnoop,
# the lintian overrides, DEBIAN/ (control, md5sums, the maintainer scripts:
# the units are installed disabled).  The version is tools/version's with
# Debian revision -1 (DEB_REVISION); DEB_MAINTAINER names the maintainer
# (dist/deb/mkdeb).
DEBDIR ?= .
DEB_REVISION ?= 1
DEB_ARCH_x86 := amd64
DEB_ARCH_arm64 := arm64
DEB_ROOT := $(OUTPUT)/deb/root

# The installed paths that the templates name, whatever PREFIX says.
deb: override SBINDIR = /usr/sbin
deb: override SYSCONFDIR = /etc
deb: $(STATIC_KMEMSNOOP)
	@[ -n '$(DEB_ARCH_$(ARCH))' ] || { echo "make deb: no Debian architecture for ARCH=$(ARCH)" >&2; exit 1; }
	rm -rf $(DEB_ROOT)
	$(INSTALL) -d $(DEB_ROOT)$(SBINDIR) $(DEB_ROOT)/usr/share/man/man8 \
		$(DEB_ROOT)/usr/share/bash-completion/completions $(DEB_ROOT)/usr/lib/systemd/system
	$(INSTALL) -m 755 $(STATIC_KMEMSNOOP) $(DEB_ROOT)$(SBINDIR)/kmemsnoop
	sed -e '/^\.TH /s/"kmemsnoop [^"]*"/"kmemsnoop $(VERSION_STRING)"/' man/kmemsnoop.8 \
		> $(DEB_ROOT)/usr/share/man/man8/kmemsnoop.8
	$(call install_template,dist/kmemsnoop.bash.in,$(DEB_ROOT)/usr/share/bash-completion/completions/kmemsnoop)
	$(foreach u,$(UNITS),$(call install_template,dist/$(u).in,$(DEB_ROOT)/usr/lib/systemd/system/$(u)) &&) true
	DEB_VERSION='$(VERSION_STRING)-$(DEB_REVISION)' DEB_ARCH='$(DEB_ARCH_$(ARCH))' \
		STRIP='$(CROSS)strip' CC='$(CC)' SYSROOT='$(SYSROOT)' \
		STATIC_LIBS='$(PROTOBUF_A) $(HTTPD_STATIC_LIBS) $(STATIC_LIBS)' \
		dist/deb/mkdeb $(DEB_ROOT) $(DEBDIR)

clean:
	rm -rf $(OUTPUT) kmemsnoop tests/unit/unit_tests tests/dwarf_fixture \
		tests/nodwarf_fixture tests/workload tests/recwalk tests/bpf_progs $(BENCH_PROGS) kmemsnoop-arm64 \
		kmemsnoop-static kmemsnoop_*.deb

# --- sanitizers and fuzzing ------------------------------------------------------
#
#   make sanitize   kmemsnoop and the unit tests built with ASan and UBSan
#                   (under $(SAN_OUT); SAN_CC=gcc works too, but gcc's UBSan
#                   writes its reports to stderr whatever UBSAN_OPTIONS say,
#                   where only the failing test sees them), then the unit tests and
#                   the host integration tests run with that binary (root;
#                   SANITIZE_TESTS="test_msg ..." runs some); any sanitizer
#                   report fails it (tests/sanitize.sh)
#
# Objects of their own, so that the normal build is left as it is.
SAN_OUT := $(OUTPUT)/sanitize
SAN_CC ?= clang
SAN_CFLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
SAN_OBJS := $(patsubst src/%.c,$(SAN_OUT)/%.o,$(APP_SRCS)) $(SAN_OUT)/pprof.pb-c.o
SAN_LIB_OBJS := $(patsubst src/%.c,$(SAN_OUT)/%.o,$(LIB_SRCS)) $(SAN_OUT)/pprof.pb-c.o

.PHONY: sanitize

$(SAN_OUT)/%.o: src/%.c $(HDRS) $(SKELETONS)
	@mkdir -p $(@D)
	$(SAN_CC) $(SAN_CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $(LIBDW_CFLAGS) -c $< -o $@

$(SAN_OUT)/hist/live.o: USER_CFLAGS += $(CURSES_CFLAGS)
$(SAN_OUT)/util/version.o: $(VERSION_H)
$(SAN_OUT)/exporter/httpd.o: USER_CFLAGS += $(HTTPD_CFLAGS)
$(SAN_OUT)/allocinfo/pprof.o: $(PB_HDR)
$(SAN_OUT)/allocinfo/pprof.o: USER_CFLAGS += $(PROTOBUF_CFLAGS)

$(SAN_OUT)/pprof.pb-c.o: $(PB_SRC) $(PB_HDR)
	@mkdir -p $(@D)
	$(SAN_CC) $(SAN_CFLAGS) $(USER_CFLAGS) $(PROTOBUF_CFLAGS) -c $< -o $@

$(SAN_OUT)/kmemsnoop: $(SAN_OBJS) $(LIBBPF_DEP)
	$(SAN_CC) $(SAN_CFLAGS) $(LDFLAGS) $(SAN_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz \
		$(CURSES_LIBS) $(HTTPD_LIBS) $(PROTOBUF_LIBS) -lm -o $@

# In tests/unit like the plain one: the unit tests find their fixtures one up.
SAN_UNIT := tests/unit/unit_tests-sanitize

$(SAN_UNIT): $(UNIT_SRCS) $(SAN_LIB_OBJS) $(wildcard tests/unit/*.h) $(LIBBPF_DEP) $(PB_HDR)
	$(SAN_CC) $(SAN_CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $(PROTOBUF_CFLAGS) -Itests/unit \
		$(UNIT_SRCS) $(SAN_LIB_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) \
		$(HTTPD_LIBS) $(PROTOBUF_LIBS) -lm -o $@

sanitize: $(SAN_OUT)/kmemsnoop $(SAN_UNIT) tests/dwarf_fixture tests/nodwarf_fixture tests/workload
	SAN_KMEMSNOOP=$(abspath $(SAN_OUT)/kmemsnoop) SAN_UNIT=$(abspath $(SAN_UNIT)) \
		tests/sanitize.sh $(SANITIZE_TESTS)

# make clean removes these too.
clean: clean-sanitize
.PHONY: clean-sanitize
clean-sanitize:
	rm -f $(SAN_UNIT)

#   make fuzz       libFuzzer targets (tests/fuzz/fuzz_*.c: a recording's
#                   records, a whole recording directory, kallsyms, the
#                   command line) built with clang, the kept regression
#                   inputs run, then each target fuzzed for FUZZ_SECONDS
#                   from the committed seeds (tests/fuzz/run.sh)
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= record tracedir ksyms options
FUZZ_OUT := $(OUTPUT)/fuzz
FUZZ_CFLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
FUZZ_LIB_OBJS := $(patsubst src/%.c,$(FUZZ_OUT)/%.o,$(LIB_SRCS)) $(FUZZ_OUT)/pprof.pb-c.o
FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_TARGETS))

.PHONY: fuzz
# Only pattern rules name these objects: without this make deletes them.
.SECONDARY: $(FUZZ_LIB_OBJS)

$(FUZZ_OUT)/%.o: src/%.c $(HDRS) $(SKELETONS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(USER_CFLAGS) $(LIBBPF_CFLAGS) \
		$(LIBDW_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/hist/live.o: USER_CFLAGS += $(CURSES_CFLAGS)
$(FUZZ_OUT)/util/version.o: $(VERSION_H)
$(FUZZ_OUT)/exporter/httpd.o: USER_CFLAGS += $(HTTPD_CFLAGS)
$(FUZZ_OUT)/allocinfo/pprof.o: $(PB_HDR)
$(FUZZ_OUT)/allocinfo/pprof.o: USER_CFLAGS += $(PROTOBUF_CFLAGS)

$(FUZZ_OUT)/pprof.pb-c.o: $(PB_SRC) $(PB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(USER_CFLAGS) $(PROTOBUF_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(LIBBPF_DEP)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(USER_CFLAGS) $(LIBBPF_CFLAGS) $< \
		$(FUZZ_LIB_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) $(HTTPD_LIBS) \
		$(PROTOBUF_LIBS) -lm -o $@

fuzz: $(FUZZ_BINS)
	FUZZ_OUT=$(abspath $(FUZZ_OUT)) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_TARGETS)
