// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * workload: make predictable kernel allocations for kmemsnoop's tests.
 *
 * Only libc (pthread is part of glibc since 2.34), so it links statically
 * and runs in a busybox initramfs as well as on the host:
 *
 *   gcc -std=gnu11 -Wall -Wextra -Werror -O2 -fno-omit-frame-pointer -static \
 *       -o tests/workload tests/workload.c
 *
 * Usage: workload [--wait] COMMAND ARGS [+ COMMAND ARGS]...
 *
 *   Commands separated by "+" run one after the other in this process
 *   (thread-msg must be alone), e.g. "msg 100 10 + openclose 5 + pipe 4".
 *
 *   --wait   Do every set-up step that is not part of the measurement
 *            (pre-fault the user buffers, create the helper thread), print
 *            "pid N" on stdout and block until a byte (or end of file)
 *            arrives on stdin, or SIGUSR1 arrives.  A test starts the
 *            workload with stdin on a FIFO, reads its pid, attaches its
 *            tracers to that pid and then writes one byte to let it go.
 *            Nothing the workload does after this point runs before the
 *            byte is read, so the tracers see all of it.
 *
 * Lines printed on stdout (always flushed at once): "pid N" (--wait),
 * "tid N" (thread-msg), "held" (msg-hold), "child N" (fork-msg, printed
 * after the child has been reaped so that the write happens after all the
 * child's allocations).
 *
 * What each command allocates, checked on 6.18 (x86-64, 4 KiB pages) with
 * the kmem tracepoints through tracefs filtered on the workload's pid; see
 * the comments at each command.  SIZE is the message text size in bytes,
 * the kernel's msg_msg header is 48 bytes on 64-bit kernels.
 *
 *   msg SIZE COUNT
 *       msgget(IPC_PRIVATE), then COUNT x msgsnd(SIZE) and COUNT x msgrcv,
 *       then msgctl(IPC_RMID).  For SIZE <= 4048 (PAGE_SIZE - 48) each
 *       msgsnd does exactly one kmalloc from load_msg+... with
 *       bytes_req = 48 + SIZE, bytes_alloc = the next kmalloc size class
 *       (8 16 32 64 96 128 192 256 512 1k 2k 4k 8k); each msgrcv frees it
 *       with one kfree from free_msg+... of the same pointer (and, on 6.18,
 *       one kfree(NULL) from security_msg_msg_free+..., ptr 0).  On 6.18
 *       the message comes from dedicated kmem_buckets (6.11) and is traced
 *       with gfp_flags=GFP_KERNEL accounted=false (older kernels pass
 *       GFP_KERNEL_ACCOUNT; not checked here).
 *       Larger messages are split: the first kmalloc is 48 + 4048 = 4096
 *       bytes and every further piece of up to 4088 (PAGE_SIZE - 8) bytes
 *       is a msg_msgseg kmalloc(8 + piece) from another load_msg+ offset
 *       with GFP_KERNEL_ACCOUNT, freed by free_msg (e.g. SIZE 4049 gives
 *       4096/4096 and 9/16; SIZE 8192 gives 4096, 4096 and 64/64).  SysV
 *       queues hold 16384 bytes by default (msgmnb) and at most 8192 bytes
 *       per message (msgmax): messages are sent in batches that fit the
 *       queue, each batch received before the next is sent, so a msgsnd
 *       never blocks and never fails (a failed msgsnd would still allocate
 *       and free a message).  msgget itself allocates the queue (kmalloc
 *       from newque, sometimes an idr radix_tree_node) and IPC_RMID frees
 *       it.
 *
 *   msg-hold SIZE COUNT
 *       Like msg but stops after the sends: prints "held", waits for a
 *       second byte on stdin (or SIGUSR1), then receives and removes.
 *       COUNT * SIZE must fit in one queue (16384 bytes by default).
 *
 *   fork-msg SIZE COUNT
 *       fork(); the child does "msg SIZE COUNT" and exits; the parent waits
 *       for it and prints "child PID".  The parent itself makes no
 *       load_msg allocation; the fork allocates (task_struct, mm, files
 *       ...) in the parent's context.
 *
 *   thread-msg SIZE COUNT
 *       A second thread (created before --wait blocks; its tid is printed
 *       as "tid N") does "msg SIZE COUNT" while the main thread does
 *       "openclose COUNT"; the main thread then joins it.  All load_msg
 *       allocations are in the second thread's context, none in the main
 *       thread's.
 *
 *   pingpong SIZE COUNT
 *       The main thread, pinned to CPU 0, sends COUNT messages of SIZE bytes
 *       to a second thread pinned to CPU 1 (created by the command), which
 *       receives them: each load_msg kmalloc is made on CPU 0 and its
 *       free_msg kfree on CPU 1 (COUNT frees on another CPU than their
 *       allocation).  Needs CPUs 0 and 1 (exit status 1 otherwise).
 *
 *   pipe PAGES
 *       pipe(), F_SETPIPE_SZ so that PAGES pages fit, PAGES writes of one
 *       page each (each allocates one order-0 page in the pipe write path:
 *       mm_page_alloc order=0 gfp_flags=GFP_HIGHUSER|__GFP_ACCOUNT), then reads
 *       them all back and closes both ends (the pages are freed, a couple
 *       of them cached by the pipe until the close).  The user buffer is
 *       touched before --wait blocks so it causes no page fault later.
 *
 *   numa NODE CPU
 *       Pins the process to CPU and binds its memory to NODE
 *       (set_mempolicy MPOL_BIND): the pages the commands after it
 *       allocate without asking for a node, large kmallocs' and new slabs'
 *       included, come from NODE, whatever node CPU is on.
 *
 *   piperesize N
 *       N times: two pipes, each set to 1 MiB with F_SETPIPE_SZ (256 slots:
 *       pipe_resize_ring kcalloc's 256 x 40 = 10240 bytes, above the
 *       largest kmalloc cache, so the page allocator serves it as one
 *       order-2 compound page: mm_page_alloc order=2, then kmalloc
 *       bytes_req=10240 bytes_alloc=16384 from pipe_resize_ring+...; it
 *       frees the 16-slot ring it replaces, a 640-byte kmalloc from
 *       alloc_pipe_info), then both closed (kfree of the 10240-byte ring,
 *       then mm_page_free order=2 of its page).  Nothing is written.
 *       Needs 1 MiB <= pipe-max-size (the default) or CAP_SYS_RESOURCE.
 *
 *   ustack-open N
 *       Opens and closes /dev/null N times through a known user call
 *       chain: ustack_outer() calls ustack_inner(), which enters the
 *       kernel itself (openat, no libc wrapper in between), so that a user
 *       stack read through frame pointers (this file is built with them)
 *       starts in ustack_inner, then ustack_outer, then main.  Each open
 *       allocates a struct file (kmem_cache_alloc, alloc_empty_file).
 *
 *   openfail N
 *       Makes itself unkillable by the OOM killer where it may (oom_score_adj
 *       -1000, CAP_SYS_RESOURCE; prints "unkillable 1", else
 *       "unkillable 0"), then opens /dev/null up to N times, keeping every
 *       file open, until an open fails: prints "opened K" and "failed
 *       ERRNO" (exit status 1 if all N succeeded), then closes them.  In a
 *       memory cgroup at its limit, the charge of a new file (filp,
 *       SLAB_ACCOUNT) fails, the OOM killer finds no victim, and the
 *       allocation returns NULL: kmem_cache_alloc with ptr 0.
 *
 *   pipe-hold N
 *       N pipes (at most as many as the descriptors allowed, the soft
 *       limit raised to the hard one), kept open: each allocates a
 *       pipe_inode_info (kmalloc from alloc_pipe_info), its ring of buffers,
 *       two files, an inode and a dentry, some 2.5 KiB of slab.  Prints
 *       "held K", waits for a byte on stdin (or SIGUSR1), closes them.
 *
 *   hog MIB
 *       Maps MIB MiB of anonymous memory and touches it a page at a time
 *       (a page fault, one order-0 mm_page_alloc, each), printing
 *       "touched N" every 256 pages: in a memory cgroup smaller than that,
 *       the OOM killer ends it, and the last line says how far it got.
 *
 *   openclose N
 *       N x open("/dev/null") + close: each pair makes three
 *       kmem_cache_alloc (names_cache from getname_flags, filp from
 *       alloc_empty_file, lsm_file_cache from security_file_alloc) and the
 *       three matching kmem_cache_free, and no kmalloc.
 *
 *   percpu-map-hold ENTRIES SIZE
 *       bpf(BPF_MAP_CREATE) of a BPF_MAP_TYPE_PERCPU_ARRAY of ENTRIES values
 *       of SIZE bytes, prints "held", waits for a byte (or SIGUSR1), closes
 *       the map, prints "closed" and waits for another before it exits.
 *       On 6.18 (2 possible CPUs) ENTRIES 16 SIZE 64 makes exactly 16
 *       percpu_alloc_percpu events in the workload, from
 *       bpf_map_alloc_percpu+... with size=64 align=8 (one area per
 *       element, none for the array itself); the 16 percpu_free_percpu of
 *       the same pointers come after the close from a kworker (the map is
 *       freed by deferred work), not from the workload.  Needs
 *       CAP_BPF / CAP_SYS_ADMIN.
 *
 *   noise SECONDS SIZE
 *       Repeats "msg SIZE 8" and "openclose 8" for SECONDS seconds: a
 *       steady stream of allocations from another process for filter tests.
 *
 *   msg-rounds SECONDS SIZE COUNT
 *       Repeats "msg SIZE COUNT" with a pause of 100 ms after each round
 *       until SECONDS have passed, then prints "rounds N": a known number
 *       (N x COUNT) of load_msg kmallocs spread over a long run, at a rate
 *       small enough for a tracefs instance to keep up with (tests/soak.sh).
 *
 *   rename NAME
 *       prctl(PR_SET_NAME, NAME): the task's comm is NAME (0..15 bytes)
 *       from here on, for the commands after it (tests/integration/
 *       test_comm.sh).  Makes no load_msg kmalloc.
 *
 *   exec-as NAME
 *       Re-executes this binary (readlink /proc/self/exe) through a
 *       symlink DIR/NAME, DIR a new mkdtemp directory in $TMPDIR (else
 *       /tmp), running the commands after it ("+ COMMAND ARGS..."; at
 *       least one, without --wait: the go has been given).  The process
 *       keeps its pid and the kernel sets its comm to the basename of the
 *       path given to execve: NAME (1..15 bytes, no "/", not "." or "..").
 *       The new image first removes DIR/NAME and DIR (told by the internal
 *       first option "--exec-cleanup DIR/NAME"), then runs the commands.
 *       The exec and the removal allocate (mm, page tables, the path,
 *       unlink) but make no load_msg kmalloc.
 *
 *   pages-rounds SECONDS PAGES
 *       Repeats, until SECONDS have passed: "pipe PAGES", then PAGES
 *       anonymous pages mapped, each touched (a page fault allocating one
 *       page, and page tables now and then) and unmapped.  Many page
 *       allocations from a few callers, for as long as asked.
 *
 *   bpfarray-hold KIB
 *       Creates a BPF array map (the bpf syscall) of KIB KiB of values:
 *       KIB / 4 entries of 4096 bytes, so that the map's one area is
 *       struct bpf_array plus KIB KiB, which bpf_map_area_alloc takes
 *       from vmalloc for anything above 32 KiB (one vmalloc area, its
 *       size rounded up to pages: KIB KiB + 4 KiB, as struct bpf_array
 *       is smaller than a page).  Prints "held", waits for a second byte
 *       on stdin (or SIGUSR1), then closes the map: the kernel frees the
 *       area (vfree) later, from a workqueue, not in this process.  Then
 *       prints "closed" and waits for a third byte, so that a tracer
 *       following the process is still there when the area is freed.
 *       Needs CAP_BPF (or root).
 *
 *   uring-hold N
 *       io_uring_setup of N entries, then N no-op requests (IORING_OP_NOP)
 *       submitted in one io_uring_enter that waits for their N
 *       completions.  io_uring takes its requests (struct io_kiocb) from
 *       the slab with kmem_cache_alloc_bulk, 8 at a time (5.10 asks for
 *       fewer when fewer are left to submit), which no kmem tracepoint
 *       sees: N objects at least, every one from the same call site
 *       (__io_alloc_req_refill on 6.x).  Prints "held", waits for a byte
 *       (or SIGUSR1), closes the ring, prints "closed" and waits for
 *       another: the ring's cached requests are freed by a kworker (one
 *       kmem_cache_free each on 6.x; 5.10 frees each at its completion and
 *       the unused ones with kmem_cache_free_bulk).
 *
 *   semundo-rm N
 *       Creates N System V semaphore sets of 100 semaphores and does one
 *       semop with SEM_UNDO on each: the kernel allocates one struct
 *       sem_undo per set (find_alloc_undo, inlined in __do_semtimedop on
 *       6.x: kvzalloc of the struct and two bytes per semaphore, 264
 *       bytes on 6.18).  Prints "held", waits for a byte (or SIGUSR1),
 *       removes the sets (IPC_RMID: freeary() hands each undo to
 *       kvfree_rcu(), whose batches a kworker frees with kfree_bulk()
 *       after a grace period, up to a page of pointers a call), prints
 *       "closed" and waits for another.
 *
 * Exit status: 0 done, 1 a system call failed, 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <libgen.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MSG_MAX_TEXT 8192 /* default msgmax; larger sizes are refused */
#define PIPE_MAX_PAGES 256 /* default pipe-max-size is 1 MiB */

struct msgbuf_big {
	long mtype;
	char mtext[MSG_MAX_TEXT];
};

static struct msgbuf_big msgbuf;
static char pagebuf[PAGE];
static volatile sig_atomic_t got_usr1;

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("workload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n", stderr);
	va_end(ap);
	fputs("usage: workload [--wait] COMMAND ARGS [+ COMMAND ARGS]...\n"
	      "commands: msg SIZE COUNT | msg-hold SIZE COUNT | bpfarray-hold KIB | fork-msg SIZE COUNT |\n"
	      "          thread-msg SIZE COUNT (alone) | pingpong SIZE COUNT |\n"
	      "          pipe PAGES | piperesize N | openclose N | ustack-open N | openfail N |\n"
	      "          hog MIB |\n"
	      "          pipe-hold N |\n"
	      "          noise SECONDS SIZE | msg-rounds SECONDS SIZE COUNT |\n"
	      "          pages-rounds SECONDS PAGES |\n"
	      "          percpu-map-hold ENTRIES SIZE | uring-hold N | semundo-rm N |\n"
	      "          rename NAME | exec-as NAME (then more commands) | numa NODE CPU\n",
	      stderr);
	exit(2);
}

static long number(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage("bad %s '%s' (%ld..%ld)", what, s, min, max);
	return v;
}

/* One line on stdout, written at once (stdout may be a file or a pipe). */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	if (write(STDOUT_FILENO, line, n) != n)
		die("write stdout");
}

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/*
 * Block until one byte or end of file arrives on stdin, or SIGUSR1.
 * SIGUSR1 stays blocked except inside ppoll(), so it cannot be lost
 * between the check and the sleep.
 */
static void wait_for_go(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	sigset_t during;
	char c;

	sigemptyset(&during);
	for (;;) {
		if (got_usr1) {
			got_usr1 = 0;
			return;
		}
		int r = ppoll(&pfd, 1, NULL, &during);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll stdin");
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
			if (pfd.revents & POLLNVAL)
				return; /* no stdin at all: nothing to wait for */
			if (read(STDIN_FILENO, &c, 1) < 0 && errno != EINTR)
				die("read stdin");
			return;
		}
	}
}

static void setup_signals(void)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &block, NULL))
		die("sigprocmask");
}

/* Touch the user buffers so that using them later faults in no page. */
static void prefault(void)
{
	memset(&msgbuf, 'm', sizeof(msgbuf));
	memset(pagebuf, 'p', sizeof(pagebuf));
}

static int msg_queue(void)
{
	int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (q < 0)
		die("msgget");
	return q;
}

static long queue_bytes(int q)
{
	struct msqid_ds ds;

	if (msgctl(q, IPC_STAT, &ds))
		die("msgctl IPC_STAT");
	return (long)ds.msg_qbytes;
}

static void msg_send(int q, long size)
{
	msgbuf.mtype = 1;
	if (msgsnd(q, &msgbuf, (size_t)size, 0))
		die("msgsnd");
}

static void msg_recv(int q, long size)
{
	ssize_t n = msgrcv(q, &msgbuf, sizeof(msgbuf.mtext), 0, IPC_NOWAIT);

	if (n < 0)
		die("msgrcv");
	if (n != size) {
		errno = EPROTO;
		die("msgrcv size");
	}
}

static void msg_remove(int q)
{
	if (msgctl(q, IPC_RMID, NULL))
		die("msgctl IPC_RMID");
}

static void do_msg(long size, long count)
{
	int q = msg_queue();
	long qbytes = queue_bytes(q);
	long batch = size ? qbytes / size : qbytes - 1;

	if (batch < 1) {
		errno = EMSGSIZE;
		die("message larger than the queue");
	}
	while (count > 0) {
		long n = count < batch ? count : batch;

		for (long i = 0; i < n; i++)
			msg_send(q, size);
		for (long i = 0; i < n; i++)
			msg_recv(q, size);
		count -= n;
	}
	msg_remove(q);
}

static void do_msg_hold(long size, long count)
{
	int q = msg_queue();
	long qbytes = queue_bytes(q);

	if (size * count > qbytes || count >= qbytes) {
		msg_remove(q);
		usage("msg-hold: %ld messages of %ld bytes do not fit in a queue of %ld bytes",
		      count, size, qbytes);
	}
	for (long i = 0; i < count; i++)
		msg_send(q, size);
	say("held\n");
	wait_for_go();
	for (long i = 0; i < count; i++)
		msg_recv(q, size);
	msg_remove(q);
}

/* Creates a BPF map, prints "held", waits; closes it, prints "closed",
 * waits again (the kernel frees the map's memory later, from a kworker). */
static void hold_bpf_map(__u32 map_type, long value_size, long entries)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	union bpf_attr attr;
	int fd;

	/* Before 5.11 a map is charged to RLIMIT_MEMLOCK (64 KiB by default),
	 * not to the memory cgroup. */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	memset(&attr, 0, sizeof(attr));
	attr.map_type = map_type;
	attr.key_size = 4;
	attr.value_size = value_size;
	attr.max_entries = entries;
	fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		die("bpf(BPF_MAP_CREATE)");
	say("held\n");
	wait_for_go();
	close(fd);
	say("closed\n");
	wait_for_go();
}

static void do_percpu_map_hold(long entries, long size)
{
	hold_bpf_map(BPF_MAP_TYPE_PERCPU_ARRAY, size, entries);
}

static void do_bpfarray_hold(long kib)
{
	hold_bpf_map(BPF_MAP_TYPE_ARRAY, 4096, kib / 4);
}

/* A ring of n entries and n no-ops through it; see uring-hold above. */
static void do_uring_hold(long n)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned char *sq;
	size_t sq_len, sqes_len;
	__u32 *array;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, (unsigned)n, &p);
	if (fd < 0)
		die("io_uring_setup");
	sq_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	sqes = mmap(NULL, sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED)
		die("mmap(io_uring)");
	array = (__u32 *)(sq + p.sq_off.array);
	memset(sqes, 0, sqes_len);
	for (long i = 0; i < n; i++) {
		sqes[i].opcode = IORING_OP_NOP;
		sqes[i].user_data = i;
		array[i] = i;
	}
	__atomic_store_n((__u32 *)(sq + p.sq_off.tail), (__u32)n, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, (unsigned)n, (unsigned)n, IORING_ENTER_GETEVENTS, NULL,
		    0) != n)
		die("io_uring_enter");
	say("held\n");
	wait_for_go();
	munmap(sqes, sqes_len);
	munmap(sq, sq_len);
	close(fd);
	say("closed\n");
	wait_for_go();
}

#define SEMUNDO_SEMS 100
#define SEMUNDO_MAX 4096

/* Removes the first n sets of ids (they outlive the process otherwise);
 * the first failure's errno is kept for die(). */
static int remove_sem_sets(const int *ids, long n)
{
	int err = 0;

	for (long i = 0; i < n; i++)
		if (semctl(ids[i], 0, IPC_RMID) && !err)
			err = errno;
	errno = err;
	return err ? -1 : 0;
}

/* N sets, an undo in each, then removed; see semundo-rm above. */
static void do_semundo_rm(long n)
{
	static int ids[SEMUNDO_MAX];
	struct sembuf up = { .sem_num = 0, .sem_op = 1, .sem_flg = SEM_UNDO };

	for (long i = 0; i < n; i++) {
		ids[i] = semget(IPC_PRIVATE, SEMUNDO_SEMS, IPC_CREAT | 0600);
		if (ids[i] < 0 || semop(ids[i], &up, 1)) {
			int err = errno;

			remove_sem_sets(ids, ids[i] < 0 ? i : i + 1);
			errno = err;
			die(ids[i] < 0 ? "semget" : "semop");
		}
	}
	say("held\n");
	wait_for_go();
	if (remove_sem_sets(ids, n))
		die("semctl(IPC_RMID)");
	say("closed\n");
	wait_for_go();
}

/* ustack-open: functions of their own, entered in this order, which the
 * compiler neither inlines, clones nor leaves by a jump (a tail call has
 * no frame). */
#ifdef __clang__
#define OWN_FRAME __attribute__((noinline))
#else
#define OWN_FRAME __attribute__((noipa))
#endif
static volatile long ustack_calls;

OWN_FRAME int ustack_count(long ret)
{
	ustack_calls++;
	return ret < 0 ? -1 : (int)ret;
}

/* Not a leaf (it calls ustack_count()): compilers leave a leaf's frame
 * out whatever -fno-omit-frame-pointer says. */
OWN_FRAME int ustack_inner(const char *path)
{
	long ret;
	int fd;

#if defined(__x86_64__)
	register long flags4 asm("r10") = 0;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_openat), "D"((long)AT_FDCWD), "S"(path),
		       "d"((long)(O_RDONLY | O_CLOEXEC)), "r"(flags4)
		     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 asm("x8") = SYS_openat;
	register long x0 asm("x0") = AT_FDCWD;
	register long x1 asm("x1") = (long)path;
	register long x2 asm("x2") = O_RDONLY | O_CLOEXEC;
	register long x3 asm("x3") = 0;

	asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	ret = x0;
#else
	ret = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
#endif
	fd = ustack_count(ret);
	ustack_calls++; /* after the call: not a tail call */
	return fd;
}

OWN_FRAME int ustack_outer(const char *path)
{
	int fd = ustack_inner(path);

	ustack_calls++; /* after the call: not a tail call */
	return fd;
}

static void do_ustack_open(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = ustack_outer("/dev/null");

		if (fd < 0)
			die("open /dev/null");
		close(fd);
	}
}

static void do_openclose(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open /dev/null");
		close(fd);
	}
}

/* Writes "-1000" to /proc/self/oom_score_adj, so that the OOM killer
 * never chooses this process: needs CAP_SYS_RESOURCE.  Whether it could. */
static int never_oom_killed(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, "-1000", 5) == 5;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The soft limit of open files raised to the hard one (raising that
 * needs CAP_SYS_RESOURCE): how many files may be open. */
static long open_files_allowed(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit(RLIMIT_NOFILE)");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(RLIMIT_NOFILE)");
	return rl.rlim_max == RLIM_INFINITY ? LONG_MAX : (long)rl.rlim_max;
}

static void do_openfail(long n)
{
	long opened = 0, allowed;

	say("unkillable %d\n", never_oom_killed());
	allowed = open_files_allowed();
	if (allowed < n + 64)
		n = allowed - 64;
	int err = 0;

	for (; opened < n; opened++) {
		if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0) {
			err = errno;
			break;
		}
	}
	/* Closed before anything is written: at its limit, the cgroup has no
	 * room for the output's page either. */
	for (long fd = 3; fd < n + 64; fd++)
		close((int)fd);
	say("opened %ld\n", opened);
	if (!err) {
		fprintf(stderr, "workload: openfail: all %ld opens succeeded\n", opened);
		exit(1);
	}
	say("failed %d\n", err);
}

static void do_pipe_hold(long n)
{
	long made = 0, allowed = open_files_allowed();
	int fds[2];

	if (allowed / 2 - 32 < n)
		n = allowed / 2 - 32;
	for (; made < n; made++)
		if (pipe(fds))
			die("pipe");
	say("held %ld\n", made);
	wait_for_go();
	for (long fd = 3; fd < 2 * n + 32; fd++)
		close((int)fd);
}

static void do_hog(long mib)
{
	long page = sysconf(_SC_PAGESIZE), pages = mib * (1024 * 1024 / page);
	char *p = mmap(NULL, (size_t)pages * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* Order-0 pages, one per fault, even where THP is always on. */
	madvise(p, (size_t)pages * page, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++) {
		p[i * page] = 1;
		if ((i + 1) % 256 == 0)
			say("touched %ld\n", i + 1);
	}
	say("touched %ld\n", pages);
	munmap(p, (size_t)pages * page);
}

static void do_fork_msg(long size, long count)
{
	int status;
	pid_t child;

	fflush(NULL);
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		do_msg(size, count);
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = ECHILD;
		die("child failed");
	}
	say("child %d\n", (int)child);
}

struct thread_arg {
	sem_t go;
	long size, count;
	pid_t tid;
	sem_t started;
};

static void *msg_thread(void *p)
{
	struct thread_arg *a = p;

	a->tid = (pid_t)syscall(SYS_gettid);
	sem_post(&a->started);
	while (sem_wait(&a->go) && errno == EINTR)
		;
	do_msg(a->size, a->count);
	return NULL;
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

#define WL_MPOL_BIND 2 /* linux/mempolicy.h */

static void do_numa(long node, long cpu)
{
	unsigned long mask = 1UL << node;

	pin_to_cpu(cpu);
	if (syscall(SYS_set_mempolicy, WL_MPOL_BIND, &mask, 64UL))
		die("set_mempolicy");
}

struct pingpong {
	int q;
	long size, count;
};

static void *pingpong_receiver(void *p)
{
	static struct msgbuf_big inbox; /* msgbuf is the sender's */
	const struct pingpong *pp = p;

	pin_to_cpu(1);
	for (long i = 0; i < pp->count; i++) {
		ssize_t n;

		while ((n = msgrcv(pp->q, &inbox, sizeof(inbox.mtext), 0, 0)) < 0 &&
		       errno == EINTR)
			;
		if (n != pp->size)
			die("msgrcv");
	}
	return NULL;
}

static void do_pingpong(long size, long count)
{
	struct pingpong pp = { .q = msg_queue(), .size = size, .count = count };
	pthread_t t;
	int err;

	pin_to_cpu(0);
	err = pthread_create(&t, NULL, pingpong_receiver, &pp);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	for (long i = 0; i < count; i++) {
		msgbuf.mtype = 1;
		while (msgsnd(pp.q, &msgbuf, (size_t)size, 0)) {
			if (errno != EINTR)
				die("msgsnd");
		}
	}
	err = pthread_join(t, NULL);
	if (err) {
		errno = err;
		die("pthread_join");
	}
	msg_remove(pp.q);
}

static void do_pipe(long pages)
{
	long want = pages * PAGE;
	int p[2];

	if (pipe(p))
		die("pipe");
	if (want > PAGE * 16 && fcntl(p[1], F_SETPIPE_SZ, (int)want) < 0)
		die("F_SETPIPE_SZ");
	for (long i = 0; i < pages; i++)
		if (write(p[1], pagebuf, PAGE) != PAGE)
			die("write pipe");
	for (long i = 0; i < pages; i++)
		if (read(p[0], pagebuf, PAGE) != PAGE)
			die("read pipe");
	close(p[0]);
	close(p[1]);
}

#define PIPE_RESIZE_BYTES (PIPE_MAX_PAGES * PAGE)

static void do_piperesize(long n)
{
	int p[2][2];

	for (long i = 0; i < n; i++) {
		for (int j = 0; j < 2; j++) {
			if (pipe(p[j]))
				die("pipe");
			if (fcntl(p[j][1], F_SETPIPE_SZ, PIPE_RESIZE_BYTES) < 0)
				die("F_SETPIPE_SZ");
		}
		for (int j = 0; j < 2; j++) {
			close(p[j][0]);
			close(p[j][1]);
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void do_noise(long seconds, long size)
{
	double end = now() + seconds;

	while (now() < end) {
		do_msg(size, 8);
		do_openclose(8);
	}
}

static void do_pages_rounds(long seconds, long pages)
{
	double end = now() + seconds;
	long rounds = 0;

	while (now() < end) {
		char *m;

		do_pipe(pages);
		m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (m == MAP_FAILED)
			die("mmap");
		for (long i = 0; i < pages; i++)
			m[i * PAGE] = 1;
		munmap(m, pages * PAGE);
		rounds++;
	}
	say("rounds %ld\n", rounds);
}

static void do_msg_rounds(long seconds, long size, long count)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	double end = now() + seconds;
	long rounds = 0;

	while (now() < end) {
		do_msg(size, count);
		rounds++;
		/* EINTR only shortens a pause: the count stays exact. */
		nanosleep(&pause, NULL);
	}
	say("rounds %ld\n", rounds);
}

#define COMM_MAX 15 /* TASK_COMM_LEN - 1 */

static void do_rename(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		die("prctl(PR_SET_NAME)");
}

/*
 * Runs argv[0] = DIR/NAME --exec-cleanup DIR/NAME REST... where DIR/NAME is
 * a symlink to this binary in a new directory; REST: the commands after
 * exec-as (argv of this process from index "rest").  Returns only on error.
 */
static void do_exec_as(const char *name, char **argv, int argc, int rest)
{
	const char *tmp = getenv("TMPDIR");
	char self[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
	char **av;
	ssize_t n;
	int ai = 0;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die("readlink /proc/self/exe");
	self[n] = '\0';
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(dir, sizeof(dir), "%s/workload-exec.XXXXXX", tmp) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		die("exec-as directory");
	}
	if (!mkdtemp(dir))
		die("mkdtemp");
	if ((size_t)snprintf(link, sizeof(link), "%s/%s", dir, name) >= sizeof(link)) {
		errno = ENAMETOOLONG;
		die("exec-as path");
	}
	if (symlink(self, link))
		die("symlink");
	av = calloc((size_t)(argc - rest) + 4, sizeof(*av));
	if (!av)
		die("calloc");
	av[ai++] = link;
	av[ai++] = "--exec-cleanup";
	av[ai++] = link;
	for (int i = rest; i < argc; i++)
		av[ai++] = argv[i];
	av[ai] = NULL;
	fflush(NULL);
	execv(link, av);
	die("execv");
}

/* The start of an image run by exec-as: remove its symlink and directory. */
static void exec_cleanup(const char *link)
{
	char copy[PATH_MAX];

	if (unlink(link))
		die("unlink exec-as symlink");
	snprintf(copy, sizeof(copy), "%s", link);
	if (rmdir(dirname(copy)))
		die("rmdir exec-as directory");
}

/* One parsed command of the "+"-separated list. */
struct step {
	const char *cmd;
	long a, b, c;
	const char *name; /* rename, exec-as */
	int next;         /* argv index of the command after this one */
};

#define MAX_STEPS 32

static void parse_step(char **av, int n, struct step *st)
{
	const char *cmd = av[0];
	int want;

	st->cmd = cmd;
	if (!strcmp(cmd, "msg") || !strcmp(cmd, "msg-hold") ||
	    !strcmp(cmd, "fork-msg") || !strcmp(cmd, "thread-msg") || !strcmp(cmd, "pingpong"))
		want = 2;
	else if (!strcmp(cmd, "pipe") || !strcmp(cmd, "openclose") || !strcmp(cmd, "piperesize") ||
		 !strcmp(cmd, "ustack-open") ||
		 !strcmp(cmd, "bpfarray-hold") || !strcmp(cmd, "uring-hold") ||
		 !strcmp(cmd, "semundo-rm") || !strcmp(cmd, "openfail") || !strcmp(cmd, "hog") ||
		 !strcmp(cmd, "pipe-hold"))
		want = 1;
	else if (!strcmp(cmd, "noise") || !strcmp(cmd, "pages-rounds"))
		want = 2;
	else if (!strcmp(cmd, "msg-rounds"))
		want = 3;
	else if (!strcmp(cmd, "percpu-map-hold") || !strcmp(cmd, "numa"))
		want = 2;
	else if (!strcmp(cmd, "rename") || !strcmp(cmd, "exec-as"))
		want = 1;
	else
		usage("unknown command '%s'", cmd);
	if (n - 1 != want)
		usage("%s takes %d argument%s", cmd, want, want == 1 ? "" : "s");

	if (!strcmp(cmd, "pipe")) {
		st->a = number(av[1], 1, PIPE_MAX_PAGES, "PAGES");
	} else if (!strcmp(cmd, "openclose") || !strcmp(cmd, "piperesize") ||
		   !strcmp(cmd, "ustack-open")) {
		st->a = number(av[1], 0, 100000000, "N");
	} else if (!strcmp(cmd, "openfail") || !strcmp(cmd, "pipe-hold")) {
		st->a = number(av[1], 1, 10000000, "N");
	} else if (!strcmp(cmd, "hog")) {
		st->a = number(av[1], 1, 1 << 20, "MIB");
	} else if (!strcmp(cmd, "bpfarray-hold")) {
		st->a = number(av[1], 4, 1024 * 1024, "KIB");
	} else if (!strcmp(cmd, "uring-hold")) {
		st->a = number(av[1], 1, 256, "N");
	} else if (!strcmp(cmd, "semundo-rm")) {
		st->a = number(av[1], 1, SEMUNDO_MAX, "N");
	} else if (!strcmp(cmd, "noise")) {
		st->a = number(av[1], 0, 86400, "SECONDS");
		st->b = number(av[2], 0, MSG_MAX_TEXT, "SIZE");
	} else if (!strcmp(cmd, "pages-rounds")) {
		st->a = number(av[1], 0, 86400, "SECONDS");
		st->b = number(av[2], 1, PIPE_MAX_PAGES, "PAGES");
	} else if (!strcmp(cmd, "percpu-map-hold")) {
		st->a = number(av[1], 1, 65536, "ENTRIES");
		st->b = number(av[2], 1, 32768, "SIZE");
	} else if (!strcmp(cmd, "numa")) {
		st->a = number(av[1], 0, 63, "NODE");
		st->b = number(av[2], 0, CPU_SETSIZE - 1, "CPU");
	} else if (!strcmp(cmd, "rename")) {
		if (strlen(av[1]) > COMM_MAX)
			usage("bad NAME '%s' (at most %d bytes)", av[1], COMM_MAX);
		st->name = av[1];
	} else if (!strcmp(cmd, "exec-as")) {
		if (!av[1][0] || strlen(av[1]) > COMM_MAX || strchr(av[1], '/') ||
		    !strcmp(av[1], ".") || !strcmp(av[1], ".."))
			usage("bad NAME '%s' (a file name of 1..%d bytes)", av[1], COMM_MAX);
		st->name = av[1];
	} else if (!strcmp(cmd, "msg-rounds")) {
		st->a = number(av[1], 0, 86400 * 7, "SECONDS");
		st->b = number(av[2], 0, MSG_MAX_TEXT, "SIZE");
		st->c = number(av[3], 0, 1000000, "COUNT");
	} else {
		st->a = number(av[1], 0, MSG_MAX_TEXT, "SIZE");
		st->b = number(av[2], 0, 1000000, "COUNT");
	}
}

static void run_step(const struct step *st)
{
	if (!strcmp(st->cmd, "msg"))
		do_msg(st->a, st->b);
	else if (!strcmp(st->cmd, "msg-hold"))
		do_msg_hold(st->a, st->b);
	else if (!strcmp(st->cmd, "fork-msg"))
		do_fork_msg(st->a, st->b);
	else if (!strcmp(st->cmd, "pingpong"))
		do_pingpong(st->a, st->b);
	else if (!strcmp(st->cmd, "pipe"))
		do_pipe(st->a);
	else if (!strcmp(st->cmd, "openclose"))
		do_openclose(st->a);
	else if (!strcmp(st->cmd, "openfail"))
		do_openfail(st->a);
	else if (!strcmp(st->cmd, "ustack-open"))
		do_ustack_open(st->a);
	else if (!strcmp(st->cmd, "hog"))
		do_hog(st->a);
	else if (!strcmp(st->cmd, "pipe-hold"))
		do_pipe_hold(st->a);
	else if (!strcmp(st->cmd, "piperesize"))
		do_piperesize(st->a);
	else if (!strcmp(st->cmd, "bpfarray-hold"))
		do_bpfarray_hold(st->a);
	else if (!strcmp(st->cmd, "uring-hold"))
		do_uring_hold(st->a);
	else if (!strcmp(st->cmd, "semundo-rm"))
		do_semundo_rm(st->a);
	else if (!strcmp(st->cmd, "noise"))
		do_noise(st->a, st->b);
	else if (!strcmp(st->cmd, "msg-rounds"))
		do_msg_rounds(st->a, st->b, st->c);
	else if (!strcmp(st->cmd, "pages-rounds"))
		do_pages_rounds(st->a, st->b);
	else if (!strcmp(st->cmd, "percpu-map-hold"))
		do_percpu_map_hold(st->a, st->b);
	else if (!strcmp(st->cmd, "rename"))
		do_rename(st->name);
	else if (!strcmp(st->cmd, "numa"))
		do_numa(st->a, st->b);
}

static void run_thread_msg(int wait, long size, long count)
{
	struct thread_arg a = { .size = size, .count = count };
	pthread_t t;
	int err;

	if (sem_init(&a.go, 0, 0) || sem_init(&a.started, 0, 0))
		die("sem_init");
	err = pthread_create(&t, NULL, msg_thread, &a);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	while (sem_wait(&a.started) && errno == EINTR)
		;
	if (wait) {
		say("pid %d\ntid %d\n", (int)getpid(), (int)a.tid);
		wait_for_go();
	} else {
		say("tid %d\n", (int)a.tid);
	}
	sem_post(&a.go);
	do_openclose(count);
	err = pthread_join(t, NULL);
	if (err) {
		errno = err;
		die("pthread_join");
	}
}

int main(int argc, char **argv)
{
	struct step steps[MAX_STEPS];
	int wait = 0, ai = 1, nsteps = 0;

	/* Internal, first: this image was started by exec-as. */
	if (ai + 1 < argc && !strcmp(argv[ai], "--exec-cleanup")) {
		exec_cleanup(argv[ai + 1]);
		ai += 2;
	}
	if (ai < argc && !strcmp(argv[ai], "--wait")) {
		wait = 1;
		ai++;
	}
	if (ai >= argc)
		usage("no command");

	/* COMMAND ARGS [+ COMMAND ARGS]...: run one after the other. */
	while (ai < argc) {
		int end = ai;

		while (end < argc && strcmp(argv[end], "+"))
			end++;
		if (end == ai)
			usage("empty command");
		if (nsteps == MAX_STEPS)
			usage("more than %d commands", MAX_STEPS);
		parse_step(argv + ai, end - ai, &steps[nsteps]);
		steps[nsteps++].next = end + 1;
		ai = end + 1;
		if (end < argc && ai == argc)
			usage("nothing after '+'");
	}
	if (!strcmp(steps[nsteps - 1].cmd, "exec-as"))
		usage("exec-as must be followed by '+ COMMAND ARGS'");

	setup_signals();
	prefault();

	if (!strcmp(steps[0].cmd, "thread-msg")) {
		if (nsteps != 1)
			usage("thread-msg cannot be combined with other commands");
		run_thread_msg(wait, steps[0].a, steps[0].b);
		return 0;
	}
	for (int i = 0; i < nsteps; i++)
		if (!strcmp(steps[i].cmd, "thread-msg"))
			usage("thread-msg cannot be combined with other commands");

	if (wait) {
		say("pid %d\n", (int)getpid());
		wait_for_go();
	}
	for (int i = 0; i < nsteps; i++) {
		if (!strcmp(steps[i].cmd, "exec-as"))
			do_exec_as(steps[i].name, argv, argc, steps[i].next);
		run_step(&steps[i]);
	}
	return 0;
}
