#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Writes the seed inputs of the fuzz targets under tests/fuzz/corpus/.

Records follow docs/ABI.md byte by byte, with made-up addresses (a real
recording holds this boot's kernel addresses, which stay private).  Run it
again after a change of the record layout or of the fuzz input formats:
    tests/fuzz/make-seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SEPARATOR = b"\n--kmt--\n"  # fuzz_tracedir.c's

KALLSYMS = (
    b"ffffffff81000000 T _stext\n"
    b"ffffffff81000000 T _text\n"
    b"ffffffff81353ac0 T free_task\n"
    b"ffffffff816bbb50 T alloc_empty_file\n"
    b"ffffffff816ca420 t getname_flags.part.0\n"
    b"ffffffff81700000 T load_msg\n"
    b"ffffffff81700200 T free_msg\n"
    b"0000000000000000 T hidden_by_kptr_restrict\n"
    b"0000000000001000 A cpu_debug_store\n"
    b"ffffffffc0a01000 t mod_alpha\t[mymod]\n"
    b"ffffffffc0a03000 d mod_data\t[mymod]\n"
    b"ffffffffc0b00000 t bpf_prog_0123456789abcdef_probe\t[bpf]\n"
    b"ffffffffc0c00000 t ftrace_trampoline\t[__builtin__ftrace]\n"
    b"not a symbol line\n"
    b"ffffffffc0d00000 t no_newline_at_end\t[lastmod]"
)


# A header and GFP flag names as kmemsnoop -o writes them (docs/ABI.md).
HEADER = (
    b"kmemsnoop-recording 1\n"
    b"kmemtrace_abi=3\n"
    b"kmemsnoop_version=0.2\n"
    b"command=kmemsnoop -o /tmp/x 'a b' $'\\n'\n"
    b"arch=x86_64\n"
    b"page_size=4096\n"
    b"possible_cpus=4\n"
    b"kernel_release=6.18.0-1-amd64\n"
    b"kernel_version=#1 SMP PREEMPT_DYNAMIC Debian 6.18.1-1 (2025-12-01)\n"
    b"kernel_build_id=e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1\n"
    b"boot_id=9e63054a-bc7d-43e0-81c5-40bac02d0551\n"
    b"clock=CLOCK_MONOTONIC\n"
    b"clock_realtime_offset_ns=1763898271134976186\n"
    b"ring_size=8388608\n"
    b"start_ns=900\n"
    b"stop_ns=2000000900\n"
    b"events_written=12\n"
    b"events_lost=10\n"
    b"bytes_lost=1234\n"
    b"events_missed=1\n"
    b"a_newer_key=is ignored\n"
)
GFP = (
    b"0x1c24ca GFP_TRANSHUGE\n"
    b"0x1c20ca GFP_TRANSHUGE_LIGHT\n"
    b"0x100cca GFP_HIGHUSER_MOVABLE\n"
    b"0x100cc2 GFP_HIGHUSER\n"
    b"0x100cc0 GFP_USER\n"
    b"0x400cc0 GFP_KERNEL_ACCOUNT\n"
    b"0xcc0 GFP_KERNEL\n"
    b"0xc40 GFP_NOFS\n"
    b"0x820 GFP_ATOMIC\n"
    b"0xc00 GFP_NOIO\n"
    b"0x2800 GFP_NOWAIT\n"
    b"0x1 GFP_DMA\n"
    b"0x4 GFP_DMA32\n"
    b"0xc00 __GFP_RECLAIM\n"
    b"0x1 __GFP_DMA\n"
    b"0x2 __GFP_HIGHMEM\n"
    b"0x4 __GFP_DMA32\n"
    b"0x8 __GFP_MOVABLE\n"
    b"0x10 __GFP_RECLAIMABLE\n"
    b"0x20 __GFP_HIGH\n"
    b"0x40 __GFP_IO\n"
    b"0x80 __GFP_FS\n"
    b"0x100 __GFP_ZERO\n"
    b"0x400 __GFP_DIRECT_RECLAIM\n"
    b"0x800 __GFP_KSWAPD_RECLAIM\n"
    b"0x1000 __GFP_WRITE\n"
    b"0x2000 __GFP_NOWARN\n"
    b"0x4000 __GFP_RETRY_MAYFAIL\n"
    b"0x8000 __GFP_NOFAIL\n"
    b"0x10000 __GFP_NORETRY\n"
    b"0x20000 __GFP_MEMALLOC\n"
    b"0x40000 __GFP_COMP\n"
    b"0x80000 __GFP_NOMEMALLOC\n"
    b"0x100000 __GFP_HARDWALL\n"
    b"0x200000 __GFP_THISNODE\n"
    b"0x400000 __GFP_ACCOUNT\n"
    b"0x800000 __GFP_ZEROTAGS\n"
    b"0x1000000 __GFP_NO_OBJ_EXT\n"
)


def core(event, typ, size, seq, site, ptr):
    return struct.pack("<BBHiQQ", event, typ, size, seq, site, ptr)


def alloc(req, got, gfp, node):
    return struct.pack("<QQIi", req, got, gfp, node)


def feat_time(cpu, ns):
    return struct.pack("<HBBIQ", 16, 1, 0, cpu, ns)


def feat_task(pid, tid, comm):
    return struct.pack("<HBBII16sI", 32, 2, 0, pid, tid, comm, 0)


def feat_cache(flags, name):
    return struct.pack("<HBB36s", 40, 3, flags, name)


def feat_page(order, mt, pfn):
    return struct.pack("<HBBiQ", 16, 4, order, mt, pfn)


def feat_tid(flags, tid):
    return struct.pack("<HBBI", 8, 5, flags, tid)


def feat_time_tid(flags, tid, ns):
    return struct.pack("<HBBIQ", 16, 11, flags, tid, ns)


def feat_cache_ref(flags, addr):
    return struct.pack("<HBBIQ", 16, 6, flags, 0, addr)


def feat_cache_info(flags, objsize, size, slab_flags, name):
    return struct.pack("<HBBIII48s", 64, 7, flags, objsize, size, slab_flags, name)


def feat_heartbeat(written, lost):
    return struct.pack("<HBBIQQ", 24, 8, 0, 0, written, lost)


def feat_percpu(flags, off, base, align):
    return struct.pack("<HBBiQQ", 24, 9, flags, off, base, align)


def feat_vmalloc(flags):
    return struct.pack("<HBBI", 8, 10, flags, 0)


def feat_kstack(ips, nr=None):
    """The kernel stack feature (ABI 5): nr (the frames' count unless
    given) and the return addresses."""
    return struct.pack("<HBBI", 8 + 8 * len(ips), 12, 0, len(ips) if nr is None else nr) + \
        b"".join(struct.pack("<Q", ip) for ip in ips)


def feat_ustack(ips):
    """The user stack feature (ABI 6): the kernel stack's layout, id 13."""
    return struct.pack("<HBBI", 8 + 8 * len(ips), 13, 0, len(ips)) + \
        b"".join(struct.pack("<Q", ip) for ip in ips)


def record(event, typ, seq, site, ptr, body):
    size = 24 + len(body)
    return core(event, typ, size, seq, site, ptr) + body


def trace(cpu, t0):
    """One of each record kmemsnoop writes, on one CPU."""
    task = feat_task(4242, 4242, b"workload")
    a = alloc(248, 256, 0x400cc0, -1)
    recs = [
        record(0, 0, 0, 0xffffffff8170005c, 0xffff888104a1f000, a + feat_time(cpu, t0) + task),
        record(1, 0, 1, 0xffffffff81700231, 0xffff888104a1f000, feat_time(cpu, t0 + 7) + task),
        record(0, 1, 2, 0xffffffff816bbb8c, 0xffff888106b7acc0,
               alloc(184, 192, 0xcc0, -1) + feat_time(cpu, t0 + 9) + task + feat_cache(1, b"filp")),
        record(1, 1, 3, 0xffffffff81353adb, 0xffff888106b7acc0,
               feat_time(cpu, t0 + 11) + task + feat_cache(0, b"filp")),
        record(0, 2, 4, 0, 0xffffea000598bac0,
               alloc(4096, 4096, 0x140dca, -1) + feat_time(cpu, t0 + 13) + task + feat_page(0, 1, 0x1662eb)),
        record(1, 2, 5, 0, 0xffffea000598bac0,
               feat_time(cpu, t0 + 15) + task + feat_page(0, -1, 0x1662eb)),
    ]
    return b"".join(recs)


def trace_v4(cpu, t0):
    """ABI 4: task and cache records, then events that refer to them by
    tid and cache address; a rename, the idle task, an event id to skip."""
    filp = 0xffff888100042000
    recs = [
        record(2, 0, 0, 0, 0, feat_time(cpu, t0) + feat_task(4242, 4243, b"workload")),
        record(3, 1, 1, 0, filp, feat_time(cpu, t0 + 1) + feat_cache_info(1, 184, 192, 0x4000000, b"filp")),
        record(0, 1, 2, 0xffffffff816bbb8c, 0xffff888106b7acc0,
               alloc(184, 192, 0xcc0, -1) + feat_time(cpu, t0 + 9) + feat_tid(0, 4243) + feat_cache_ref(0, filp)),
        record(2, 3, 3, 0, 0, feat_time(cpu, t0 + 10) + feat_task(4242, 4243, b"renamed")),
        record(1, 1, 4, 0xffffffff81353adb, 0xffff888106b7acc0,
               feat_time(cpu, t0 + 11) + feat_tid(1, 4243) + feat_cache_ref(0, filp)),
        record(1, 0, 5, 0xffffffff81700231, 0xffff888104a1f000, feat_time_tid(0, 0, t0 + 12)),
        record(0, 0, 8, 0xffffffff8170005c, 0xffff888104a1f000,
               alloc(8, 8, 0xcc0, -1) + feat_time_tid(1, 4243, t0 + 15)),
        record(9, 0, 6, 0, 0, feat_time(cpu, t0 + 13) + struct.pack("<HB", 5, 77) + b"zz"),
        record(1, 0, 7, 0xffffffff81700231, 0xffff888104a1f000, feat_time(cpu, t0 + 14) + feat_tid(0, 999)),
    ]
    return b"".join(recs)


def trace_v4_classes(cpu, t0):
    """ABI 4, the other classes: a heartbeat, percpu areas (from 5.19 and
    computed before), vmalloc areas (fexit and vmap_area), bulk objects,
    pages, a failed allocation."""
    bulk = 0x01
    pcpu = 0x0000607fd2a0b2c0
    area = 0xffffc90000a85000
    recs = [
        record(4, 0, 0, 0, 0, feat_time(cpu, t0) + feat_heartbeat(0, 0)),
        record(2, 0, 1, 0, 0, feat_time(cpu, t0 + 1) + feat_task(7, 7, b"bpftool")),
        record(0, 4, 2, 0xffffffff8128a3c9, pcpu,
               alloc(64, 1088, 0xcc0, -1) + feat_time_tid(0, 7, t0 + 2) + feat_percpu(0x02, 4800, 0xffff88813fc00000, 8)),
        record(0, 4, 3, 0, pcpu + 64,
               alloc(16, 256, 0, -1) + feat_time_tid(0, 7, t0 + 3) + feat_percpu(0x05, 4864, 0xffff88813fc00000, 8)),
        record(1, 4, 4, 0, pcpu, feat_time_tid(0, 7, t0 + 4) + feat_percpu(0, 4800, 0xffff88813fc00000, 0)),
        record(0, 3, 5, 0xffffffff81297b2e, area,
               alloc(4194608, 4198400, 0x400dc0, -1) + feat_time_tid(0, 7, t0 + 5) + feat_vmalloc(0)),
        record(0, 3, 6, 0xffffffff81297b2e, area + 0x1000000,
               alloc(8192, 12288, 0, -1) + feat_time_tid(0, 7, t0 + 6) + feat_vmalloc(0x01)),
        record(1, 3, 7, 0xffffffff81298000, area, feat_time_tid(0, 7, t0 + 7) + feat_vmalloc(0)),
        record(0, 1, 8, 0xffffffff816bbb8c, 0xffff888106b7b000,
               alloc(184, 192, 0xcc0, -1) + feat_time_tid(bulk, 7, t0 + 8) + feat_cache_ref(1, 0)),
        record(1, 0, 9, 0xffffffff81700231, 0xffff888104a1f000, feat_time_tid(bulk, 7, t0 + 9)),
        record(0, 2, 10, 0, 0xffffea000598bac0,
               alloc(16384, 16384, 0x140cca, 0) + feat_time_tid(0, 7, t0 + 10) + feat_page(2, 0, 0x1662eb)),
        record(1, 2, 11, 0, 0xffffea000598bac0, feat_time_tid(0, 7, t0 + 11) + feat_page(2, -1, 0x1662eb)),
        record(0, 0, 12, 0xffffffff8170005c, 0, alloc(1 << 40, 0, 0xcc0, -1) + feat_time_tid(0, 7, t0 + 12)),
        record(2, 4, 13, 0, 0, feat_time(cpu, t0 + 13) + feat_task(7, 7, b"bpftool")),
        record(4, 0, 14, 0, 0, feat_time(cpu, t0 + 14) + feat_heartbeat(14, 3)),
    ]
    return b"".join(recs)


def trace_v5_stacks(cpu, t0):
    """ABI 5: events with their kernel stacks, one of them starting with
    BPF frames, an empty one, and one whose nr says more than it holds."""
    stack = [0xffffffffc0b00010, 0xffffffff816ca444, 0xffffffff816bbb8c, 0xffffffff81000010]
    recs = [
        record(2, 0, 0, 0, 0, feat_time(cpu, t0) + feat_task(4242, 4243, b"workload")),
        record(0, 0, 1, 0xffffffff8170005c, 0xffff888104a1f000,
               alloc(248, 256, 0xcc0, -1) + feat_time_tid(0, 4243, t0 + 1) + feat_kstack(stack)),
        record(1, 0, 2, 0xffffffff81700231, 0xffff888104a1f000,
               feat_time_tid(0, 4243, t0 + 2) + feat_kstack([])),
        record(1, 0, 3, 0xffffffff81700231, 0xffff888104a1f000,
               feat_time_tid(0, 4243, t0 + 3) + feat_kstack(stack[1:3], nr=1000)),
    ]
    return b"".join(recs)


def trace_v6_user_stacks(cpu, t0):
    """ABI 6: events with a kernel and a user stack, a user stack alone,
    and one whose addresses no mapping covers."""
    kstack = [0xffffffff816ca444, 0xffffffff816bbb8c]
    ustack = [0x40403d, 0x404069, 0x402865, 0x7f0000001234]
    recs = [
        record(2, 0, 0, 0, 0, feat_time(cpu, t0) + feat_task(4242, 4242, b"workload")),
        record(0, 0, 1, 0xffffffff8170005c, 0xffff888104a1f000,
               alloc(184, 192, 0xcc0, -1) + feat_time_tid(0, 4242, t0 + 1) + feat_kstack(kstack) +
               feat_ustack(ustack)),
        record(1, 0, 2, 0xffffffff81700231, 0xffff888104a1f000,
               feat_time_tid(0, 4242, t0 + 2) + feat_ustack(ustack[:2])),
        record(1, 0, 3, 0xffffffff81700231, 0xffff888104a1f000,
               feat_time_tid(0, 4242, t0 + 3) + feat_ustack([0x10, 0xffffffffffffffff])),
    ]
    return b"".join(recs)


# A recording's maps file: the workload's mapping, and objects that are not
# there or not what the line says.
MAPS = (b"# kmemsnoop user maps: PID START-END OFFSET BUILD-ID PATH\n"
        b"4242 401000-490000 1000 - /bin/true\n"
        b"4242 7f0000000000-7f0000100000 0 0011223344 /nonexistent/lib.so\n"
        b"4242 500000-501000 0 - /dev/null\n")


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # record: one cpuN file's bytes.
    write("record", "all_kinds", trace(0, 812503113000))
    write("record", "task_and_cache_records", trace_v4(0, 812503113000))
    write("record", "heartbeat_percpu_vmalloc_bulk", trace_v4_classes(0, 812503113000))
    write("record", "kernel_stacks", trace_v5_stacks(0, 812503113000))
    write("record", "user_stacks", trace_v6_user_stacks(0, 812503113000))
    write("record", "abi1_no_features",  # kmemtrace's own: core and alloc only
          record(0, 0, 7, 0xffffffff8170005c, 0xffff888104a1f000, alloc(8, 8, 0xcc0, 0)) +
          record(1, 0, 8, 0xffffffff81700231, 0xffff888104a1f000, b""))
    write("record", "unknown_feature_and_padding",
          record(0, 0, 1, 0xffffffff8170005c, 0xffff888104a1f000,
                 alloc(8, 8, 0, -1) + struct.pack("<HB", 5, 99) + b"xy" + b"\0\0"))
    write("record", "short_features",  # features shorter than what is read
          record(1, 1, 1, 0x1000, 0x2000, struct.pack("<HB", 3, 1) + struct.pack("<HB", 4, 2) + b"a" +
                 struct.pack("<HBB", 4, 3, 2) + struct.pack("<HBB", 4, 4, 3)))
    write("record", "long_cache_name",
          record(1, 1, 2, 0x1000, 0x2000, struct.pack("<HBB", 60, 3, 0) + b"n" * 56))
    # tracedir: abi_version, total_overruns, total_overrun_events,
    # kallsyms, cpu0..cpu3, separated.
    parts = [b"3\n", b"0\n", b"0\n", KALLSYMS, trace(0, 1000), trace(1, 1005)]
    write("tracedir", "two_cpus", SEPARATOR.join(parts))
    parts = [b"4\n", b"0\n", b"0\n", KALLSYMS, trace_v4(0, 1000), trace_v4(1, 1005)]
    write("tracedir", "abi4_task_and_cache_records", SEPARATOR.join(parts))
    parts = [b"4\n", b"0\n", b"0\n", KALLSYMS, trace_v4_classes(0, 1000), trace_v4(1, 1005),
             trace_v4_classes(2, 990)]
    write("tracedir", "abi4_heartbeat_percpu_vmalloc_bulk", SEPARATOR.join(parts))
    parts = [b"5\n", b"0\n", b"0\n", KALLSYMS, trace_v5_stacks(0, 1000), trace_v4(1, 1005)]
    write("tracedir", "abi5_kernel_stacks", SEPARATOR.join(parts))
    parts = [b"6\n", b"0\n", b"0\n", KALLSYMS, trace_v6_user_stacks(0, 1000), trace_v4(1, 1005),
             b"", b"", b"", b"", MAPS]
    write("tracedir", "abi6_user_stacks", SEPARATOR.join(parts))
    parts = [b"6\n", b"0\n", b"0\n", KALLSYMS, trace_v6_user_stacks(0, 1000), b"", b"", b"",
             b"", b"", b"4242 401000-490000 1000 zz /bin/true\n"]
    write("tracedir", "abi6_bad_maps", SEPARATOR.join(parts))
    parts = [b"3\n", b"1234\n", b"10\n", b"", trace(0, 5), b"", trace(2, 3)]
    write("tracedir", "lost_no_kallsyms", SEPARATOR.join(parts))
    # ... then header and gfp.
    parts = [b"3\n", b"1234\n", b"10\n", KALLSYMS, trace(0, 1000), trace(1, 1005), b"", b"",
             HEADER, GFP]
    write("tracedir", "header_and_gfp", SEPARATOR.join(parts))
    parts = [b"3\n", b"0\n", b"0\n", KALLSYMS, trace(0, 1000), b"", b"", b"",
             b"kmemsnoop-recording 1\nkmemtrace_abi=3\ncommand=a\\x0ab\\\\c\\td\n"
             b"clock_realtime_offset_ns=-5\nstart_ns=1000\n",
             b"0x400 __GFP_DIRECT_RECLAIM\n0xcc0 GFP_KERNEL\n0x1 GFP_DMA\n"]
    write("tracedir", "header_no_stop_small_gfp", SEPARATOR.join(parts))
    parts = [b"3\n", b"0\n", b"0\n", b"", trace(0, 1000), b"", b"", b"",
             b"kmemsnoop-recording 1\nkmemtrace_abi=3\nstart_ns=10", b"0xcc0 GFP_KERNEL"]
    write("tracedir", "truncated_header_and_gfp", SEPARATOR.join(parts))
    parts = [b"1\n", b"0\n", b"0\n", KALLSYMS,
             record(0, 0, 2, 0xffffffff8170005c, 0x10, alloc(8, 8, 0, -1)),
             record(1, 0, 1, 0xffffffff81700231, 0x10, b"")]
    write("tracedir", "abi1", SEPARATOR.join(parts))
    # ksyms: a kallsyms file.
    write("ksyms", "kallsyms", KALLSYMS)
    write("ksyms", "unsorted_modules",
          b"ffffffffc0a02000 t b\t[m2]\nffffffffc0a01000 t a\t[m1]\nffffffff81000000 T _text\n")
    # options: arguments separated by NUL bytes.
    for i, args in enumerate([
        ["-p", "1234", "-d", "1.5"],
        ["-t", "1", "-c", "bash", "-C", "1", "-e", "kmalloc,page"],
        ["--min-size", "100", "--max-size", "4K", "-b", "64M"],
        ["-o", "/tmp/x", "--raw-tp", "--nice", "-5", "-v"],
        ["-i", "/tmp/x"],
        ["--hist=req", "5", "3"],
        ["--hist-by", "cache", "--top", "5", "--hist-keys", "4096", "--live"],
        ["--allocinfo=total", "--stacks", "--folded", "--max-ptrs", "100000",
         "--max-stacks", "1000", "--vmlinux", "/x", "10", "2"],
        ["--stacks", "-o", "/tmp/x", "-e", "cache"],
        ["--help"],
        ["--version"],
        ["--user-stacks", "--stacks", "-c", "server", "--json"],
    ]):
        write("options", "args%d" % i, b"\0".join(a.encode() for a in args))


main()
