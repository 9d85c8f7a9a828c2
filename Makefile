# kmemsnoop build.
#
#   make            ./kmemsnoop, the unit tests and the test workload
#   make test       the whole test suite (root: it runs BPF programs), the VM
#                   matrix included
#   make static     a fully static ./kmemsnoop (libbpf, libelf, libdw, ncurses...)
#   make vmtest     the integration tests on Debian's 5.10, 6.1 and 6.12 kernels
#                   under QEMU (tools/vmtest; downloads cached)
#   make bench      overhead against untraced runs and peer tools (root; not part of test)
#   make run        install what is missing, build, and run ./kmemsnoop $(ARGS)
#   make deps       install the build and test dependencies (Debian, apt-get)
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

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
VMLINUX_DIR := vmlinux/$(ARCH)

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror
USER_CFLAGS := -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -Isrc -Isrc/bpf -I$(OUTPUT)

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
$(error libbpf not found: check out the submodule (git submodule update --init) or install libbpf-dev (make deps))
endif
LIBBPF_FROM := system libbpf $(LIBBPF_VERSION)
LIBBPF_INC := $(shell $(PKG_CONFIG) --variable=includedir libbpf)
LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf)
LIBBPF_LIBS := $(shell $(PKG_CONFIG) --libs libbpf)
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
endif

ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
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

APP_SRCS := src/kmemsnoop.c src/env.c src/session.c src/sources.c src/kernel_features.c \
	src/pfn.c src/record.c src/ringbuf.c src/text.c src/binout.c src/binin.c src/ksyms.c \
	src/gfp.c src/stream.c src/allocinfo.c src/aitable.c src/alloctag.c src/srcline.c \
	src/hist.c src/histacc.c src/histfmt.c src/histtext.c src/live.c src/kstat.c \
	src/statsink.c
LIB_SRCS := $(filter-out src/kmemsnoop.c,$(APP_SRCS))
APP_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(APP_SRCS))
LIB_OBJS := $(patsubst src/%.c,$(OUTPUT)/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)

.PHONY: all test unit run deps clean vmlinux bench static vmtest
.DELETE_ON_ERROR:

all: kmemsnoop tests/unit/unit_tests tests/dwarf_fixture tests/nodwarf_fixture tests/workload \
	tests/bpf_progs

kmemsnoop: $(APP_OBJS) $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(LDFLAGS) $(APP_OBJS) $(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) -lm -o $@

# The BPF objects, each with its bpftool-generated skeleton: the main one,
# and the small one that calibrates page frame numbers.
BPF_OBJS := kmemsnoop pfn
SKELETONS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_OBJS))

$(OUTPUT)/%.o: src/%.c $(wildcard src/*.h) $(wildcard src/bpf/*.h) $(SKELETONS) | $(OUTPUT)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $(LIBDW_CFLAGS) -c $< -o $@

$(OUTPUT)/live.o: USER_CFLAGS += $(CURSES_CFLAGS)

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

tests/unit/unit_tests: $(UNIT_SRCS) $(LIB_OBJS) $(wildcard tests/unit/*.h) $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) -Itests/unit $(UNIT_SRCS) $(LIB_OBJS) \
		$(LIBBPF_LIBS) $(LIBDW_LIBS) -lelf -lz $(CURSES_LIBS) -lm -o $@

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
BPF_PROGS_OBJS := $(OUTPUT)/kernel_features.o $(OUTPUT)/sources.o $(OUTPUT)/record.o

tests/bpf_progs: tests/bpf_progs.c $(BPF_PROGS_OBJS) $(SKELETONS) $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) -static $< $(BPF_PROGS_OBJS) $(STATIC_LIBS) -o $@

# Static, libc only: the same binary runs in the test VMs' busybox initramfs.
tests/workload: tests/workload.c
	$(CC) $(CFLAGS) -std=gnu11 $(WARNINGS) -static $< -o $@

# The same objects linked with -static, checked to need no shared library:
# this binary runs in the test VMs' initramfs and on machines without libbpf.
$(STATIC_KMEMSNOOP): $(APP_OBJS) $(LIBBPF_DEP)
	mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -static $(APP_OBJS) $(STATIC_LIBS) -o $@
	@if readelf -d $@ | grep -q NEEDED; then \
		echo "kmemsnoop: $@ still needs shared libraries:" >&2; readelf -d $@ | grep NEEDED >&2; \
		rm -f $@; exit 1; fi

static: $(STATIC_KMEMSNOOP)
	cp $(STATIC_KMEMSNOOP) kmemsnoop

# tests/run.sh runs tools/vmtest after the host's tests, so that its
# closing totals count the VMs' results too.
test: all $(STATIC_KMEMSNOOP)
	KMEMSNOOP_STATIC=$(abspath $(STATIC_KMEMSNOOP)) tests/run.sh

vmtest: $(STATIC_KMEMSNOOP) tests/workload tests/bpf_progs
	KMEMSNOOP_STATIC=$(abspath $(STATIC_KMEMSNOOP)) tools/vmtest

# Benchmark programs: the workloads and the empty-program floor.
BENCH_PROGS := bench/churn bench/floor

bench/churn: bench/churn.c
	$(CC) $(CFLAGS) -std=gnu11 $(WARNINGS) -pthread $< -o $@

$(OUTPUT)/floor.bpf.o: bench/floor.bpf.c $(VMLINUX_DIR)/vmlinux.h $(LIBBPF_DEP) | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/floor.skel.h: $(OUTPUT)/floor.bpf.o $(BPFTOOL_DEP)
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@

bench/floor: bench/floor.c $(OUTPUT)/floor.skel.h $(LIBBPF_DEP)
	$(CC) $(CFLAGS) $(USER_CFLAGS) $(LIBBPF_CFLAGS) $< $(LIBBPF_LIBS) -lelf -lz -o $@

bench: all $(BENCH_PROGS)
	bench/overhead.sh

deps:
	tools/install-deps.sh

run: deps
	$(MAKE) kmemsnoop
	./kmemsnoop $(ARGS)

vmlinux:
	tools/gen-vmlinux-h.sh

clean:
	rm -rf $(OUTPUT) kmemsnoop tests/unit/unit_tests tests/dwarf_fixture \
		tests/nodwarf_fixture tests/workload tests/bpf_progs $(BENCH_PROGS)
