/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The stream: one kmemtrace record (kmemtrace.h) per event, written into
 * the ring buffer of the CPU it happened on.  There is no per-CPU ring
 * buffer map type: one BPF_MAP_TYPE_RINGBUF per CPU sits in an
 * ARRAY_OF_MAPS indexed by the CPU, all polled by user space from one
 * epoll loop.  #included by kmemsnoop.bpf.c; its handlers call the
 * stream_*() functions below when do_stream is set.
 */
#ifndef KMEMSNOOP_STREAM_BPF_H
#define KMEMSNOOP_STREAM_BPF_H

/* Wake the consumer once per this many records on a CPU. */
const volatile __u64 wakeup_records = 4096;
/* Where struct page 0 lives, for page frame numbers: measured by user
 * space before load (pfn.c), 0 when unknown. */
const volatile __u64 vmemmap_base = 0;

struct kmt_loss losses[KMT_MAX_CPUS] = {};
struct kmt_cpu_counters cpu_counters[KMT_MAX_CPUS] = {};

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16); /* a template: user space makes the real rings */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* one per possible CPU, set by user space */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

static __always_inline void count_loss(__u32 cpu, __u32 size)
{
	if (cpu >= KMT_MAX_CPUS)
		return;
	__sync_fetch_and_add(&losses[cpu].events, 1);
	__sync_fetch_and_add(&losses[cpu].bytes, size);
}

/* A task record lost: apart from the events, whose count must match the
 * kernel's own count of them. */
static __always_inline void count_name_loss(__u32 cpu)
{
	if (cpu < KMT_MAX_CPUS)
		__sync_fetch_and_add(&losses[cpu].names, 1);
}

/*
 * Sequence numbers count per CPU: one counter for all CPUs was a cache line
 * every allocating CPU wrote on every event.  Atomic even so, because a
 * program on another tracepoint can interrupt this one on the same CPU.
 */
static __always_inline __s32 next_seq(const struct event_ctx *ev, enum prog_run atomic_fetch)
{
	__u32 *counter, seq;

	if (ev->cpu >= KMT_MAX_CPUS)
		return 0;
	counter = &cpu_counters[ev->cpu].seq;
	if (atomic_fetch)
		return __sync_fetch_and_add(counter, 1);
	/* No fetch-add before 5.12: a nested program may repeat a number. */
	seq = *counter;
	__sync_fetch_and_add(counter, 1);
	return seq;
}

static __always_inline void fill_core(struct kmt_core *core, const struct event_ctx *ev, __u8 event,
				      __u8 type, __u16 size, enum prog_run atomic_fetch,
				      __u64 call_site, __u64 ptr)
{
	core->event_id = event;
	core->type_id = type;
	core->event_size = size;
	core->seq_num = next_seq(ev, atomic_fetch);
	core->call_site = call_site;
	core->ptr = ptr;
}

static __always_inline void fill_alloc(struct kmt_alloc *a, __u64 req, __u64 alloc, __u32 gfp,
				       __s32 node)
{
	a->bytes_req = req;
	a->bytes_alloc = alloc;
	a->gfp_flags = gfp;
	a->numa_node = node;
}

static __always_inline void fill_time(struct kmt_feat_time *time, const struct event_ctx *ev)
{
	time->size = sizeof(*time);
	time->id = KMT_FEAT_TIME;
	time->reserved = 0;
	time->cpu = ev->cpu;
	time->timestamp = bpf_ktime_get_ns();
}

/* The event's time and task: the tid only, its comm is in a task record;
 * the CPU is the ring's. */
static __always_inline void fill_when(struct kmt_feat_time_tid *when, __u8 ev_flags,
				      const struct event_ctx *ev)
{
	when->size = sizeof(*when);
	when->id = KMT_FEAT_TIME_TID;
	when->ev_flags = ev_flags;
	when->tid = (__u32)ev->pid_tgid;
	when->timestamp = bpf_ktime_get_ns();
}

static __always_inline __u32 slab_account_mask(void)
{
	if (bpf_core_enum_value_exists(enum _slab_flag_bits, _SLAB_ACCOUNT))
		return 1U << bpf_core_enum_value(enum _slab_flag_bits, _SLAB_ACCOUNT);
	return 0x04000000U; /* SLAB_ACCOUNT before slab flags became an enum */
}

/*
 * A cache's name and sizes go once into a cache record, a task's pid and
 * comm into a task record; events carry the cache's address and the tid.
 * A small per-CPU table holds the caches and tasks this CPU wrote records
 * for: a record that describes is written on the CPU, and before the
 * records there that refer to it, so that a reader of that CPU's records
 * in order knows the name first.  One pushed out of its slot is described
 * again.  A task's later names (exec, rename) and a tid used again (fork)
 * come from the sched and task tracepoints, in time order across CPUs.
 */
#define CACHE_SLOTS 64
#define TASK_SLOTS 256

struct described {
	__u64 cache[CACHE_SLOTS];
	__u32 tid[TASK_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct described);
} described SEC(".maps");

/*
 * The stream's records are staged: written into a per-CPU area and copied
 * into the CPU's ring a block at a time (bpf_ringbuf_output), where
 * reserving each one in the ring and submitting it took 35-45 ns of a
 * record's 120 above an empty program (docs/PERFORMANCE.md).  A ring
 * sample then holds whole records one after the other.
 *
 * A program that interrupts another on the same CPU while that one is
 * writing a record (its level busy) writes into the next level.  The
 * levels are copied lowest first, and only while none is busy, by the
 * program that finds a level full or one above its own staged: a CPU's
 * records reach its ring in the order they were written, a task or cache
 * record before the events that refer to it.  The heartbeat, which user
 * space runs on every CPU once a second and at the end, copies what an
 * idle CPU staged; the live text's reader also runs it on a CPU whose
 * oldest staged record (staged_since) has waited longer than the time
 * order waits, so that no line waits for a block to fill.
 */
const volatile bool stage_records = false;
/* --stacks when streaming: the frames of each event's kernel stack kept
 * (reserve_stacked()); 0: none. */
const volatile __u32 stream_kstack_depth = 0;
/* --user-stacks: the frames of each event's user stack kept; 0: none. */
const volatile __u32 stream_ustack_depth = 0;

#define STAGE_LEVELS 3       /* a program, one that interrupted it, and one that interrupted that */
#define STAGE_BLOCK 4096     /* copied into the ring once this much is staged */
#define STAGE_RECORD_MAX 1024 /* no record is larger (with its stacks) */
#define STAGE_END (STAGE_BLOCK + STAGE_RECORD_MAX) /* len stays below */

struct stage_level {
	__u32 start;       /* [start, len): staged, not yet copied into the ring */
	__u32 len;
	__u32 busy;        /* a record is being written at len, or start and len read or set */
	/* Staged since the start, counted by the writers; what of it a
	 * flush took (copied or lost), by the flushes: [start, len) holds
	 * the difference.  Apart, so that a flush never writes what a
	 * writer may be adding to. */
	__u32 events;      /* allocation and free records */
	__u32 event_bytes; /* their bytes */
	__u32 tasks;       /* task records */
	__u32 taken_events, taken_event_bytes, taken_tasks;
	__u32 index;       /* its place in stages.level, written by the run holding it */
	/* Twice STAGE_END: the verifier cannot relate a copy's start to its
	 * length, each below STAGE_END, so their sum must fit. */
	__u8 data[2 * STAGE_END];
};

struct stages {
	struct stage_level level[STAGE_LEVELS];
	__u32 flushing; /* stage_flush() is running on the CPU */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stages);
} stages SEC(".maps");

static __always_inline struct stages *cpu_stages(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stages, &zero);
}

/* A lost block took task and cache records with it: every task and cache
 * is described again before its next record on this CPU. */
static __always_inline void forget_described(void)
{
	__u32 zero = 0;
	struct described *seen = bpf_map_lookup_elem(&described, &zero);

	if (!seen)
		return;
	/* The barriers keep clang from making the loops a memset, which BPF
	 * cannot call. */
	for (int i = 0; i < CACHE_SLOTS; i++) {
		seen->cache[i] = 0;
		barrier();
	}
	for (int i = 0; i < TASK_SLOTS; i++) {
		seen->tid[i] = 0;
		barrier();
	}
}

/* A forced wakeup once wakeup_records records were written on the CPU
 * since the last, else none. */
static __always_inline __u64 wakeup_due(const struct kmt_cpu_counters *cc)
{
	return cc->records < wakeup_records ? BPF_RB_NO_WAKEUP : BPF_RB_FORCE_WAKEUP;
}

/* The same, the count reset with the wakeup: the submit of a record. */
static __always_inline __u64 wakeup_flags(struct kmt_cpu_counters *cc)
{
	__u64 flags = wakeup_due(cc);

	if (flags == BPF_RB_FORCE_WAKEUP)
		cc->records = 0;
	return flags;
}

/* 6.10+ (fc7566ad0a82): called only where runs_preemptible (7.0+), on
 * older kernels code the verifier never walks. */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

/*
 * Where runs are preempted (7.x: the tp_btf, raw_tp and fentry programs),
 * a run keeps preemption off while it holds a stage level or the flush: a
 * run preempted while it held a level left the CPU's other runs only the
 * levels above until it ran again, and what did not fit there was lost
 * (hundreds of events a run under the timeorder test's load on 7.2).  So
 * only an interrupt can come between a look at a flag and its store, as
 * on every kernel before, and it gives the flag back before this run goes
 * on.
 */
static __always_inline void hold_cpu(void)
{
	if (runs_preemptible)
		bpf_preempt_disable();
}

static __always_inline void let_cpu_go(void)
{
	if (runs_preemptible)
		bpf_preempt_enable();
}

/* The flag alone, where this run holds the CPU already (a flush). */
static __always_inline bool take_flag(__u32 *flag)
{
	if (*flag)
		return false;
	*flag = 1;
	barrier();
	return true;
}

static __always_inline void drop_flag(__u32 *flag)
{
	barrier();
	*flag = 0;
}

/* Takes a flag and the CPU for this run: true when the flag was free (the
 * flush's; a level is held from stage_reserve() to stage_submit()). */
static __always_inline bool stage_claim(__u32 *flag)
{
	hold_cpu();
	if (take_flag(flag))
		return true;
	let_cpu_go();
	return false;
}

static __always_inline void stage_release(__u32 *flag)
{
	drop_flag(flag);
	let_cpu_go();
}

/*
 * Every record the programs write has its time right after the core (and
 * the allocation's sizes): a time feature, or a time and tid feature, whose
 * timestamps are at one place.
 */
static __always_inline __u64 record_time(const struct kmt_core *rec)
{
	__u32 off = sizeof(struct kmt_core) + __builtin_offsetof(struct kmt_feat_time, timestamp);

	_Static_assert(__builtin_offsetof(struct kmt_feat_time, timestamp) ==
			       __builtin_offsetof(struct kmt_feat_time_tid, timestamp),
		       "both time features keep the time at one place");
	if (rec->event_id == KMT_EVENT_ALLOC)
		off += sizeof(struct kmt_alloc);
	return *(const __u64 *)((const void *)rec + off);
}

/*
 * A record staged: its time is the CPU's oldest staged one, if none was.
 * From the record, not the clock: a call here would spill values across
 * it, and 5.10 to 6.1 forget a spilled value's bound, and every byte of
 * stack counts against 512 in the bulk programs' chain of calls.  Until
 * it is set the record is being written, its time a moment ago: within
 * the time the reader waits for clocks (reorder.h): the level is held
 * from before the time is taken until after this, and with it the CPU
 * (stage_reserve(), hold_cpu()), so only an interrupt can come between.
 */
static __always_inline void note_staged(struct kmt_cpu_counters *cc, const struct kmt_core *rec)
{
	if (!cc->staged_since)
		cc->staged_since = record_time(rec);
}

static __always_inline bool stages_empty(const struct stages *all)
{
	for (int i = 0; i < STAGE_LEVELS; i++)
		if (all->level[i].start < all->level[i].len)
			return false;
	return true;
}

/*
 * After a flush: nothing staged is left, unless a run that interrupted
 * this one took a level or staged since;
 * then the time stays, older than what is left.  Cleared, then looked at
 * again: a record staged between the two looks found a time set and set
 * none; 1 then, older than any record, until the next flush, which the
 * reader runs at once (flush_stale).  No clock here: stage_flush() is at
 * the end of the bulk programs' chain of calls, whose stack is full.
 */
static __always_inline void note_flushed(struct kmt_cpu_counters *cc, const struct stages *all)
{
	if (!stages_empty(all))
		return;
	cc->staged_since = 0;
	barrier();
	if (!stages_empty(all))
		cc->staged_since = 1;
}

#include "flight.bpf.h"

/* A level's records out: into the CPU's ring, or with --flight into its
 * store.  Nonzero when they did not fit. */
static __always_inline long stage_copy_out(void *ring, struct kmt_cpu_counters *cc, void *data,
					   __u32 n, __u64 flags)
{
	if (flight)
		return flight_store_block(cc, data, n);
	return !ring || bpf_ringbuf_output(ring, data, n, flags);
}

/* What a flush copies of a level: its records then, and their counts. */
struct stage_span {
	__u32 start, len, events, event_bytes, tasks;
};

/*
 * Copies every level's records into the CPU's ring, lowest level first.
 * Not while a level is busy (a program this one interrupted is writing a
 * record: it copies once done), nor within another flush.  A level is
 * taken only while its length and counts are read and set: a program that
 * interrupts the copy stages its records after the ones copied, and they
 * stay.  Once a level's block is lost, so are those above it: their events
 * may refer to its task and cache records.  A global function: the
 * verifier checks it once, not at every call.
 */
__noinline int stage_flush(__u32 cpu)
{
	__u64 flags, events = 0, bytes = 0, tasks = 0;
	struct kmt_cpu_counters *cc;
	struct kmt_loss *lost;
	struct stages *all;
	bool gone = false, group_ends = false;
	void *ring;

	if (cpu >= KMT_MAX_CPUS)
		return 0;
	/* The counters first, while cpu is known to be in bounds: the
	 * lookup spills it to the stack, where the verifier forgets that. */
	cc = &cpu_counters[cpu];
	lost = &losses[cpu];
	all = cpu_stages();
	if (!all || all->flushing)
		return 0;
	for (int i = 0; i < STAGE_LEVELS; i++)
		if (all->level[i].busy)
			return 0;
	if (!stage_claim(&all->flushing))
		return 0;
	ring = flight ? NULL : bpf_map_lookup_elem(&rings, &cpu);
	/* The count reset only once a block is copied with the wakeup: a
	 * flush that copies nothing (a heartbeat's, of empty levels) raised
	 * none, and the reader slept until wakeup_records more were written. */
	flags = wakeup_due(cc);
	for (int i = 0; i < STAGE_LEVELS; i++) {
		struct stage_level *l = &all->level[i];
		struct stage_span span;
		__u32 n;

		/* Taken since the look above by a run that interrupted this
		 * one: it copies once done; the levels above wait, in order. */
		if (!take_flag(&l->busy))
			break;
		span = (struct stage_span){ l->start, l->len, l->events - l->taken_events,
					    l->event_bytes - l->taken_event_bytes,
					    l->tasks - l->taken_tasks };
		drop_flag(&l->busy);
		n = span.start < span.len ? span.len - span.start : 0;
		/* Clamped where they cannot be larger, each in the register
		 * passed: the verifier bounds the copy by them. */
		if (n > STAGE_END)
			n = STAGE_END;
		if (span.start > STAGE_END)
			span.start = STAGE_END;
		barrier_var(n);
		barrier_var(span.start);
		if (n && (gone || stage_copy_out(ring, cc, l->data + span.start, n, flags))) {
			gone = true;
			events += span.events;
			bytes += span.event_bytes;
			tasks += span.tasks;
		} else if (n && flight) {
			/* The store's next block starts a group. */
			if (!(cc->flight_head & (flight_group_blocks - 1)))
				group_ends = true;
		} else if (n && flags == BPF_RB_FORCE_WAKEUP) {
			cc->records = 0;
			flags = BPF_RB_NO_WAKEUP;
		}
		/* Only a flush writes these: no claim needed. */
		l->taken_events += span.events;
		l->taken_event_bytes += span.event_bytes;
		l->taken_tasks += span.tasks;
		l->start = span.len;
		barrier();
		/* Back to the beginning when nothing was staged meanwhile,
		 * holding the level.  A writer holding it: a later flush
		 * copies from start, and the levels above wait for what it
		 * writes (their events may refer to its task record). */
		if (!take_flag(&l->busy))
			break;
		if (l->len == span.len) {
			l->start = 0;
			l->len = 0;
		}
		drop_flag(&l->busy);
	}
	note_flushed(cc, all);
	stage_release(&all->flushing);
	if (gone) {
		__sync_fetch_and_add(&lost->events, events);
		__sync_fetch_and_add(&lost->bytes, bytes);
		__sync_fetch_and_add(&lost->names, tasks);
	}
	/* --flight: every group of the store's blocks describes its tasks
	 * and caches (flight.bpf.h). */
	if (gone || (flight && group_ends))
		forget_described();
	return 0;
}

/*
 * A place for a record of size bytes in the lowest level no program on
 * this CPU is writing into; NULL when every level is busy or full.
 *
 * The level found is named again by its index read back from the map,
 * a number the verifier does not know: otherwise it goes on with one
 * state per level from here to the submit, and the bulk programs, which
 * reserve in a loop, with one per level per pass (5.10 took 30 s under
 * emulation to check them).
 */
static __always_inline void *stage_reserve(struct event_ctx *ev, __u32 size)
{
	struct stages *all = cpu_stages();
	struct stage_level *l = NULL;
	__u32 level, off;

	if (!all || size > STAGE_RECORD_MAX)
		return NULL;
	hold_cpu(); /* until stage_submit() gives the level back */
	for (int i = 0; i < STAGE_LEVELS; i++) {
		struct stage_level *at = &all->level[i];

		if (at->busy)
			continue;
		if (at->len >= STAGE_BLOCK) {
			/* Left full while a level below was busy.  The flush
			 * holds the CPU itself: not called holding it, which
			 * some verifiers refuse. */
			let_cpu_go();
			stage_flush(ev->cpu);
			hold_cpu();
		}
		/* Taken before its length is read: a program interrupting this
		 * one in between writes elsewhere. */
		if (!take_flag(&at->busy))
			continue;
		if (at->len >= STAGE_BLOCK) {
			drop_flag(&at->busy); /* still full: a level below is busy */
			continue;
		}
		at->index = i;
		l = at;
		break;
	}
	if (!l) {
		let_cpu_go();
		return NULL;
	}
	level = *(volatile __u32 *)&l->index;
	if (level >= STAGE_LEVELS) {
		let_cpu_go(); /* never: only this run writes the index of the level it holds */
		return NULL;
	}
	l = &all->level[level];
	off = l->len;
	if (off >= STAGE_BLOCK) {
		stage_release(&l->busy); /* never: held since its length was checked */
		return NULL;
	}
	ev->stages = all;
	ev->stage_level = level;
	ev->stage_size = size;
	return l->data + off;
}

/* The record stage_reserve() gave is written: counted, and the levels
 * copied into the ring when this one is full or one above it has records
 * (of a program that interrupted this one). */
static __always_inline void stage_submit(struct event_ctx *ev, const struct kmt_core *rec)
{
	__u32 level = ev->stage_level, next = level + 1;
	struct stages *all = ev->stages;
	struct stage_level *l;
	bool flush;

	if (level >= STAGE_LEVELS) {
		let_cpu_go(); /* never: stage_reserve() gave a level below */
		return;
	}
	l = &all->level[level];
	if (rec->event_id <= KMT_EVENT_FREE) {
		l->events++;
		l->event_bytes += ev->stage_size;
	} else if (rec->event_id == KMT_EVENT_TASK) {
		l->tasks++;
	}
	l->len += ev->stage_size;
	if (level && ev->cpu < KMT_MAX_CPUS)
		__sync_fetch_and_add(&cpu_counters[ev->cpu].nested, 1);
	/* Decided while the level is held, so that little lives across the
	 * release's call (7.x): the bulk programs' chain of calls has no
	 * stack to spare.  A run that interrupts after the release finds
	 * the level full itself. */
	flush = l->len >= STAGE_BLOCK || (next < STAGE_LEVELS && all->level[next].len);
	stage_release(&l->busy);
	if (flush)
		stage_flush(ev->cpu);
}

/* events: losses count (the event records); a record that describes is
 * written again by the next event that needs it. */
static __always_inline void *reserve_record(struct event_ctx *ev, __u32 size, bool event)
{
	void *rec, *ring;

	if (stage_records) {
		rec = stage_reserve(ev, size);
		if (!rec && event)
			count_loss(ev->cpu, size);
		return rec;
	}
	ring = bpf_map_lookup_elem(&rings, &ev->cpu);
	if (!ring) {
		if (event)
			count_loss(ev->cpu, size);
		return NULL;
	}
	rec = bpf_ringbuf_reserve(ring, size, 0);
	if (!rec && event)
		count_loss(ev->cpu, size);
	return rec;
}

static __always_inline void *reserve(struct event_ctx *ev, __u32 size)
{
	return reserve_record(ev, size, true);
}

/*
 * Batch wakeups: a wakeup per record would cost more than the record.  A
 * per-CPU count rather than bpf_ringbuf_query(), which reads the consumer
 * position another CPU writes: a cache miss per event.
 */
static __always_inline void submit(struct event_ctx *ev, void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct kmt_cpu_counters *cc;

	if (stage_records) {
		__u32 cpu = ev->cpu;

		/* One register for the test and the index: 5.10's verifier
		 * forgets the bound of a number loaded again. */
		barrier_var(cpu);
		/* The stack's frames that reserve_stacked() found. */
		if ((stream_kstack_depth || stream_ustack_depth) &&
		    ((struct kmt_core *)rec)->event_id <= KMT_EVENT_FREE)
			((struct kmt_core *)rec)->event_size = ev->stage_size;
		if (cpu < KMT_MAX_CPUS) {
			cpu_counters[cpu].records++;
			note_staged(&cpu_counters[cpu], rec);
		}
		/* Before the submit, whose flush may reuse the record's place. */
		if (flight && ((struct kmt_core *)rec)->event_id == KMT_EVENT_ALLOC &&
		    !((struct kmt_core *)rec)->ptr)
			flight_failed(rec);
		stage_submit(ev, rec);
		return;
	}
	if (ev->cpu < KMT_MAX_CPUS) {
		cc = &cpu_counters[ev->cpu];
		cc->records++;
		flags = wakeup_flags(cc);
	}
	bpf_ringbuf_submit(rec, flags);
}

/* The cache's record, and the CPU's mark that it is described (*mark). */
static __always_inline void write_cache_record(struct event_ctx *ev, enum prog_run atomic_fetch,
					       struct kmem_cache *s, bool btf, __u64 addr,
					       __u64 *mark)
{
	struct kmt_rec_cache *rec = reserve_record(ev, sizeof(*rec), false);
	__u32 flags;

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_CACHE, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch, 0,
		  addr);
	fill_time(&rec->time, ev);
	flags = KREAD(btf, s, flags);
	rec->info.size = sizeof(rec->info);
	rec->info.id = KMT_FEAT_CACHE_INFO;
	rec->info.flags = (flags & slab_account_mask()) ? KMT_CACHE_ACCOUNTED : 0;
	rec->info.object_size = KREAD(btf, s, object_size);
	rec->info.size_alloc = KREAD(btf, s, size);
	rec->info.slab_flags = flags;
	if (bpf_probe_read_kernel_str(rec->info.name, sizeof(rec->info.name), KREAD(btf, s, name)) < 0)
		rec->info.name[0] = 0;
	/* Marked before the submit, whose flush may lose the block and then
	 * forget every mark: one set after it would outlive the record.  Not
	 * before the record is reserved: a program interrupting this one
	 * would write an event of the cache ahead of its record. */
	*mark = addr;
	submit(ev, rec);
}

/*
 * Before an event of cache s is reserved (the ring keeps reservation
 * order): its cache record, where this CPU has not written one.  Returns
 * the address for the event's reference.
 */
static __always_inline __u64 describe_cache(struct event_ctx *ev, enum prog_run atomic_fetch,
					    struct kmem_cache *s, bool btf)
{
	__u64 addr = (__u64)s;
	__u32 zero = 0;
	struct described *seen;
	__u64 *slot;

	if (!s)
		return 0;
	seen = bpf_map_lookup_elem(&described, &zero);
	if (!seen)
		return addr;
	slot = &seen->cache[(addr >> 8 ^ addr >> 16) & (CACHE_SLOTS - 1)];
	/* Marked only once written: a record lost to a full ring is tried
	 * again with the next event. */
	if (*slot != addr)
		write_cache_record(ev, atomic_fetch, s, btf, addr, slot);
	return addr;
}

/* The same for an event that may be an object of a bulk call, whose
 * cache was described once before its loop (the verifier walks every
 * pass: another reservation in each made 5.10 take seconds). */
static __always_inline __u64 bulk_or_described(struct event_ctx *ev, enum prog_run atomic_fetch,
					       struct kmem_cache *s, bool btf, __u8 ev_flags)
{
	return (ev_flags & KMT_EV_BULK) ? (__u64)s : describe_cache(ev, atomic_fetch, s, btf);
}

/* cache: describe_cache()'s address, 0 where the event names no cache. */
static __always_inline void fill_cache_ref(struct kmt_feat_cache_ref *ref, __u64 cache)
{
	ref->size = sizeof(*ref);
	ref->id = KMT_FEAT_CACHE_REF;
	ref->flags = cache ? 0 : KMT_CACHE_NO_NAME;
	ref->reserved = 0;
	ref->cache = cache;
}

/* A task record: its pid, tid and comm, filled by the caller. */
static __always_inline struct kmt_rec_task *reserve_task_record(struct event_ctx *ev,
								 enum prog_run atomic_fetch,
								 __u8 why, __u64 parent_tid)
{
	struct kmt_rec_task *rec = reserve_record(ev, sizeof(*rec), false);

	if (!rec)
		return NULL;
	fill_core(&rec->core, ev, KMT_EVENT_TASK, why, sizeof(*rec), atomic_fetch, 0, parent_tid);
	fill_time(&rec->time, ev);
	rec->task.size = sizeof(rec->task);
	rec->task.id = KMT_FEAT_TASK;
	rec->task.ev_flags = 0;
	rec->task.reserved2 = 0;
	return rec;
}

/*
 * Before an event of the current task is reserved: its task record, where
 * this CPU has not written one.  Not for the idle task (tid 0): a reader
 * names it swapper/CPU, as the kernel does, one per CPU.
 */
static __always_inline void describe_task(struct event_ctx *ev, enum prog_run atomic_fetch)
{
	__u32 tid = (__u32)ev->pid_tgid, zero = 0;
	struct kmt_rec_task *rec;
	struct described *seen;
	__u32 *slot;

	if (!tid)
		return;
	seen = bpf_map_lookup_elem(&described, &zero);
	if (!seen)
		return;
	slot = &seen->tid[tid & (TASK_SLOTS - 1)];
	if (*slot == tid)
		return;
	rec = reserve_task_record(ev, atomic_fetch, KMT_TASK_SEEN, 0);
	if (!rec) {
		/* Counted: the event may still fit, without its name.  Tried
		 * again with the next event. */
		count_name_loss(ev->cpu);
		return;
	}
	rec->task.pid = ev->pid_tgid >> 32;
	rec->task.tid = tid;
	read_comm(rec->task.comm);
	/* Before the submit, as write_cache_record() marks. */
	*slot = tid;
	submit(ev, rec);
}

/*
 * --stacks when streaming: each event's record ends with its kernel stack
 * (struct kmt_feat_kstack), stream_kstack_depth frames at most, and with
 * --user-stacks its thread's user stack (the same layout), at most
 * stream_ustack_depth.  Room for all of them is reserved, the record then
 * staged with the frames the stacks had (submit() sets its size).  Copied
 * per event rather than kept once in a stack map: a record read much later
 * (a recording, the flight recorder's store) must not find its stack's
 * slot taken by another.
 */

#define KSTACK_ROOM (sizeof(struct kmt_feat_kstack) + KMT_KSTACK_MAX_DEPTH * sizeof(__u64))
#define USTACK_ROOM (sizeof(struct kmt_feat_kstack) + KMT_USTACK_MAX_DEPTH * sizeof(__u64))
#define STACK_FRAMES_MAX \
	(KMT_KSTACK_MAX_DEPTH > KMT_USTACK_MAX_DEPTH ? KMT_KSTACK_MAX_DEPTH : KMT_USTACK_MAX_DEPTH)

_Static_assert(sizeof(struct kmt_rec_cache_free_named) + KSTACK_ROOM + USTACK_ROOM <=
		       STAGE_RECORD_MAX,
	       "the largest event record with the deepest stacks is staged");

/* Where the stack starts, as allocinfo.bpf.h's ai_stack_skip(): the
 * tp_btf and raw_tp programs' own two frames left out. */
static __always_inline __u64 kstack_skip(enum prog_run run)
{
	return run == RUN_CLASSIC ? 0 : (2 & BPF_F_SKIP_FIELD_MASK);
}

/* The event's program context, for its stacks; only with --stacks or
 * --user-stacks. */
static __always_inline void kstack_from(struct event_ctx *ev, void *regs)
{
	if (stream_kstack_depth || stream_ustack_depth)
		ev->regs = regs;
}

/* What the stacks take in a record: their features' room. */
static __always_inline __u32 stacks_room(void)
{
	__u32 room = 0;

	if (stream_kstack_depth)
		room += sizeof(struct kmt_feat_kstack) + stream_kstack_depth * sizeof(__u64);
	if (stream_ustack_depth)
		room += sizeof(struct kmt_feat_kstack) + stream_ustack_depth * sizeof(__u64);
	return room;
}

/* One stack feature at rec + off: depth frames at most, bpf_get_stack()'s
 * flags (skip count, BPF_F_USER_STACK); its size.  0 when the stack
 * cannot be read, which a kernel thread's user stack never can. */
static __always_inline __u32 stack_feature(void *regs, void *rec, __u32 off, __u32 depth,
					   __u8 id, __u64 flags)
{
	struct kmt_feat_kstack *ks;
	__u32 room = depth * sizeof(__u64);
	long n;

	if (off > STAGE_RECORD_MAX - sizeof(*ks) - STACK_FRAMES_MAX * sizeof(__u64) ||
	    room > STACK_FRAMES_MAX * sizeof(__u64) || !room)
		return 0; /* never: the record's room was reserved */
	ks = rec + off;
	n = bpf_get_stack(regs, ks->ip, room, flags);
	if (n <= 0 || n > room)
		return 0;
	ks->size = sizeof(*ks) + n;
	ks->id = id;
	ks->reserved = 0;
	ks->nr = n / sizeof(__u64);
	return sizeof(*ks) + n;
}

/*
 * Writes the stacks after the record's size bytes at rec; their features'
 * size.  A function of its own: inlined, its calls' registers made the
 * bulk programs' frames grow, whose chain has no stack to spare on 6.1.
 */
static __noinline __u32 stacks_fill(void *regs, void *rec, __u32 size, __u64 skip)
{
	__u32 off = size;

	if (size > STAGE_RECORD_MAX - KSTACK_ROOM - USTACK_ROOM)
		return 0; /* never: the record's room was reserved */
	if (stream_kstack_depth)
		off += stack_feature(regs, rec, off, stream_kstack_depth, KMT_FEAT_KSTACK, skip);
	if (stream_ustack_depth)
		off += stack_feature(regs, rec, off, stream_ustack_depth, KMT_FEAT_USTACK,
				     BPF_F_USER_STACK);
	return off - size;
}

static __always_inline void *reserve_stacked(struct event_ctx *ev, enum prog_run atomic_fetch,
					     __u32 size)
{
	void *rec;

	if (!stream_kstack_depth && !stream_ustack_depth)
		return reserve(ev, size);
	rec = reserve(ev, size + stacks_room());
	if (rec)
		ev->stage_size = size + stacks_fill(ev->regs, rec, size, kstack_skip(atomic_fetch));
	return rec;
}

/* An event's record, its task described first. */
static __always_inline void *reserve_event(struct event_ctx *ev, enum prog_run atomic_fetch,
					   __u32 size)
{
	describe_task(ev, atomic_fetch);
	return reserve_stacked(ev, atomic_fetch, size);
}

/* The same for an event that may be an object of a bulk call, whose loop
 * described the task once before it (the verifier walks every pass). */
static __always_inline void *reserve_object(struct event_ctx *ev, enum prog_run atomic_fetch,
					    __u8 ev_flags,
					    __u32 size)
{
	return (ev_flags & KMT_EV_BULK) ? reserve_stacked(ev, atomic_fetch, size) :
					  reserve_event(ev, atomic_fetch, size);
}

/*
 * The page pointer is stored, then read back from the ring: with tp_btf it
 * is a typed pointer the verifier will not do arithmetic on, but a value
 * loaded from ring memory is a plain number.
 */
static __always_inline __u64 page_to_pfn(volatile __u64 *stored_page)
{
	__u64 page = *stored_page;

	if (!page)
		return KMT_PFN_NONE;
	if (!vmemmap_base) /* calibration failed: said at start */
		return KMT_PFN_NONE;
	return (page - vmemmap_base) / bpf_core_type_size(struct page);
}

static __always_inline void fill_page(struct kmt_feat_page *fp, __u64 *stored_page, __u32 order,
				      __s32 migratetype)
{
	fp->size = sizeof(*fp);
	fp->id = KMT_FEAT_PAGE;
	fp->order = order;
	fp->migratetype = migratetype;
	fp->pfn = page_to_pfn(stored_page);
}


/* --- one record per event ------------------------------------------------------ */

static __always_inline void stream_kmalloc(__u64 *ctx, struct event_ctx *ev,
					   enum prog_run atomic_fetch,
					   bool has_node, __u64 ptr, __u64 req)
{
	struct kmt_rec_kmalloc *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_alloc(&rec->alloc, req, ARG(ctx, 3), ARG(ctx, 4), has_node ? (__s32)ARG(ctx, 5) : -1);
	fill_when(&rec->when, 0, ev);
	submit(ev, rec);
}

/* s: the event's cache where it names one, else NULL; ev_flags: KMT_EV_*. */
static __always_inline void stream_cache_alloc(struct event_ctx *ev, enum prog_run atomic_fetch,
					       bool btf,
					       struct kmem_cache *s, __u64 call_site, __u64 ptr,
					       __u64 req, __u64 alloc, __u32 gfp, __s32 node,
					       __u8 ev_flags)
{
	__u64 cache = bulk_or_described(ev, atomic_fetch, s, btf, ev_flags);
	struct kmt_rec_cache_alloc *rec = reserve_object(ev, atomic_fetch, ev_flags, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_ALLOC, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch,
		  call_site, ptr);
	fill_alloc(&rec->alloc, req, alloc, gfp, node);
	fill_when(&rec->when, ev_flags, ev);
	fill_cache_ref(&rec->cache, cache);
	submit(ev, rec);
}

static __always_inline void stream_kfree(struct event_ctx *ev, enum prog_run atomic_fetch,
					 __u64 call_site,
					 __u64 ptr, __u8 ev_flags)
{
	struct kmt_rec_kfree *rec = reserve_object(ev, atomic_fetch, ev_flags, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_KMALLOC, sizeof(*rec), atomic_fetch,
		  call_site, ptr);
	fill_when(&rec->when, ev_flags, ev);
	submit(ev, rec);
}

/* A free from cache s (NULL: the event names none), by reference; ev_flags: KMT_EV_*. */
static __always_inline void stream_cache_free_ref(struct event_ctx *ev, enum prog_run atomic_fetch,
						  bool btf,
						  struct kmem_cache *s, __u64 call_site, __u64 ptr,
						  __u8 ev_flags)
{
	__u64 cache = bulk_or_described(ev, atomic_fetch, s, btf, ev_flags);
	struct kmt_rec_cache_free *rec = reserve_object(ev, atomic_fetch, ev_flags, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch,
		  call_site, ptr);
	fill_when(&rec->when, ev_flags, ev);
	fill_cache_ref(&rec->cache, cache);
	submit(ev, rec);
}

/* Where the event names the cache by a string (5.12 - 6.0): the name in the record. */
static __always_inline void stream_cache_free_named(__u64 *ctx, struct event_ctx *ev,
						    enum prog_run atomic_fetch, __u64 ptr)
{
	struct kmt_rec_cache_free_named *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_when(&rec->when, 0, ev);
	rec->cache.size = sizeof(rec->cache);
	rec->cache.id = KMT_FEAT_CACHE;
	rec->cache.flags = 0;
	if (bpf_probe_read_kernel_str(rec->cache.name, sizeof(rec->cache.name),
				      (const void *)ARG(ctx, 2)) < 0)
		rec->cache.name[0] = 0;
	submit(ev, rec);
}

static __always_inline void stream_cache_free(__u64 *ctx, struct event_ctx *ev,
					      enum prog_run atomic_fetch,
					      bool btf, __u64 ptr)
{
	if (cache_free_args == KMT_CACHE_FREE_NAME)
		stream_cache_free_named(ctx, ev, atomic_fetch, ptr);
	else
		stream_cache_free_ref(ev, atomic_fetch, btf,
				      cache_free_args == KMT_CACHE_FREE_CACHE ? (void *)ARG(ctx, 2) : NULL,
				      ARG(ctx, 0), ptr, 0);
}

static __always_inline void stream_page_alloc(__u64 *ctx, void *regs, struct event_ctx *ev,
					      enum prog_run atomic_fetch, __u32 order, __u64 bytes)
{
	struct kmt_rec_page_alloc *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	/* Pages have no call site in this tracepoint: the ABI's 0, unless
	 * --stat --page asks for the caller from the stack. */
	fill_core(&rec->core, ev, KMT_EVENT_ALLOC, KMT_TYPE_PAGES, sizeof(*rec), atomic_fetch,
		  stream_page_sites ? stack_site(regs, KMT_TEXT_PAGE_ALLOC) : 0, ARG(ctx, 0));
	fill_alloc(&rec->alloc, bytes, bytes, ARG(ctx, 2), -1);
	fill_when(&rec->when, 0, ev);
	fill_page(&rec->page, &rec->core.ptr, order, ARG(ctx, 3));
	submit(ev, rec);
}

static __always_inline void stream_page_free(__u64 *ctx, struct event_ctx *ev,
					     enum prog_run atomic_fetch,
					     __u32 order)
{
	struct kmt_rec_page_free *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_PAGES, sizeof(*rec), atomic_fetch, 0,
		  ARG(ctx, 0));
	fill_when(&rec->when, 0, ev);
	fill_page(&rec->page, &rec->core.ptr, order, -1);
	submit(ev, rec);
}

/* Where the area is; on an allocation also how it was asked for. */
static __always_inline void fill_percpu(struct kmt_feat_percpu *fp, __u8 flags, __u64 base,
					__s32 off, __u64 align)
{
	fp->size = sizeof(*fp);
	fp->id = KMT_FEAT_PERCPU;
	fp->flags = flags;
	fp->off = off;
	fp->base_addr = base;
	fp->align = align;
}

/* full: the event's layout has call_site, bytes_alloc and gfp_flags. */
static __always_inline void stream_percpu_alloc(__u64 *ctx, struct event_ctx *ev,
						enum prog_run atomic_fetch, bool full, __u64 site,
						__u64 ptr, __u64 size, __u64 alloc)
{
	struct kmt_rec_percpu_alloc *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));
	__u8 flags;

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_ALLOC, KMT_TYPE_PERCPU, sizeof(*rec), atomic_fetch,
		  site, ptr);
	fill_alloc(&rec->alloc, size, alloc, full ? ARG(ctx, 9) : 0, -1);
	fill_when(&rec->when, 0, ev);
	flags = (full ? ARG(ctx, 1) : ARG(ctx, 0)) ? KMT_PERCPU_RESERVED : 0;
	flags |= (full ? ARG(ctx, 2) : ARG(ctx, 1)) ? KMT_PERCPU_ATOMIC : 0;
	flags |= full ? 0 : KMT_PERCPU_COMPUTED;
	fill_percpu(&rec->percpu, flags, full ? arg_number(ctx, 5) : arg_number(ctx, 4),
		    full ? ARG(ctx, 6) : ARG(ctx, 5), full ? ARG(ctx, 4) : ARG(ctx, 3));
	submit(ev, rec);
}

static __always_inline void stream_percpu_free(__u64 *ctx, struct event_ctx *ev,
					       enum prog_run atomic_fetch, __u64 ptr)
{
	struct kmt_rec_percpu_free *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	/* The event has no call site. */
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_PERCPU, sizeof(*rec), atomic_fetch, 0,
		  ptr);
	fill_when(&rec->when, 0, ev);
	fill_percpu(&rec->percpu, 0, arg_number(ctx, 0), ARG(ctx, 1), 0);
	submit(ev, rec);
}

static __always_inline void fill_vmalloc(struct kmt_feat_vmalloc *fv, __u8 flags)
{
	fv->size = sizeof(*fv);
	fv->id = KMT_FEAT_VMALLOC;
	fv->flags = flags;
	fv->reserved = 0;
}

/* flags: KMT_VMALLOC_AREA from the vmap_area tracepoints. */
static __always_inline void stream_vmalloc(struct event_ctx *ev, enum prog_run atomic_fetch,
					   __u64 call_site,
					   __u64 ptr, __u64 req, __u64 alloc, __u32 gfp, __s32 node,
					   __u8 flags)
{
	struct kmt_rec_vmalloc *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_ALLOC, KMT_TYPE_VMALLOC, sizeof(*rec), atomic_fetch,
		  call_site, ptr);
	fill_alloc(&rec->alloc, req, alloc, gfp, node);
	fill_when(&rec->when, 0, ev);
	fill_vmalloc(&rec->vmalloc, flags);
	submit(ev, rec);
}

static __always_inline void stream_vfree(struct event_ctx *ev, enum prog_run atomic_fetch,
					 __u64 call_site,
					 __u64 ptr, __u8 flags)
{
	struct kmt_rec_vfree *rec = reserve_event(ev, atomic_fetch, sizeof(*rec));

	if (!rec)
		return;
	fill_core(&rec->core, ev, KMT_EVENT_FREE, KMT_TYPE_VMALLOC, sizeof(*rec), atomic_fetch,
		  call_site, ptr);
	fill_when(&rec->when, 0, ev);
	fill_vmalloc(&rec->vmalloc, flags);
	submit(ev, rec);
}

/*
 * A heartbeat on the CPU this runs on: user space runs it on each CPU about
 * once a second (BPF_PROG_TEST_RUN on a CPU: an interrupt there), so that
 * a reader can tell an idle CPU from one whose records stopped, and place
 * losses in time.  Lost to a full ring, the next one says it.
 */
static __always_inline int stream_heartbeat(enum prog_run atomic_fetch)
{
	struct event_ctx ev = { .cpu = bpf_get_smp_processor_id() };
	struct kmt_rec_heartbeat *rec;
	struct kmt_cpu_counters *cc;
	struct kmt_loss *lost;

	if (!do_stream || ev.cpu >= KMT_MAX_CPUS)
		return 0;
	/* Pointers now, while the CPU is known to be in bounds: 5.10's
	 * verifier forgets the bound of a number spilled to the stack. */
	cc = &cpu_counters[ev.cpu];
	lost = &losses[ev.cpu];
	/* Kept, not computed again from the CPU after a call. */
	barrier_var(cc);
	barrier_var(lost);
	rec = reserve_record(&ev, sizeof(*rec), false);
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_HEARTBEAT, 0, sizeof(*rec), atomic_fetch, 0, 0);
	fill_time(&rec->time, &ev);
	/* Records between two heartbeats, the last included: under 2^32 in
	 * a second. */
	cc->beat_written += (__u32)(rec->core.seq_num - cc->beat_seq);
	cc->beat_seq = rec->core.seq_num;
	rec->beat.size = sizeof(rec->beat);
	rec->beat.id = KMT_FEAT_HEARTBEAT;
	rec->beat.reserved = 0;
	rec->beat.reserved2 = 0;
	rec->beat.written = cc->beat_written;
	rec->beat.lost = lost->events;
	submit(&ev, rec);
	if (stage_records)
		stage_flush(ev.cpu);
	return 0;
}

#endif /* KMEMSNOOP_STREAM_BPF_H */
