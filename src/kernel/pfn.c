// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel's mm_page_alloc event hands out struct page pointers; its own
 * trace prints pfn = (page - vmemmap) / sizeof(struct page).  vmemmap is
 * randomized (KASLR) and its symbol is not in kallsyms without
 * CONFIG_KALLSYMS_ALL, so kmemsnoop measures it: fault in a few anonymous
 * pages, watch which struct pages this thread gets, and ask pagemap which
 * pfns back them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "pfn.h"
#include "bpf/pfn_calib.h"
#include "pfn.skel.h"

#define CALIB_TOUCH 8
#define CALIB_TRIES 3
#define LINEAR_PIPES 4
#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_PFN_MASK ((1ULL << 55) - 1)

static int page_struct_size(const struct btf *btf, __u64 *size)
{
	int id = btf__find_by_name_kind(btf, "page", BTF_KIND_STRUCT);
	long long sz;

	if (id < 0)
		return -1;
	sz = btf__resolve_size(btf, id);
	if (sz <= 0)
		return -1;
	*size = sz;
	return 0;
}

static int read_pfns(char *area, long page, __u64 *pfns)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int n = 0;

	if (fd < 0)
		return -1;
	for (int i = 0; i < CALIB_TOUCH; i++) {
		__u64 entry;
		off_t off = ((uintptr_t)(area + i * page) / page) * sizeof(entry);

		if (pread(fd, &entry, sizeof(entry), off) != sizeof(entry))
			break;
		/* pfn 0 here means pagemap hides pfns from us (no CAP_SYS_ADMIN). */
		if ((entry & PAGEMAP_PRESENT) && (entry & PAGEMAP_PFN_MASK))
			pfns[n++] = entry & PAGEMAP_PFN_MASK;
	}
	close(fd);
	return n;
}

int pfn_pick_base(const __u64 *pages, int npages, const __u64 *pfns, int npfns,
		  __u64 page_struct_size, __u64 *base)
{
	int best_votes = 0;
	bool tied = false;

	for (int i = 0; i < npages; i++) {
		for (int j = 0; j < npfns; j++) {
			__u64 cand = pages[i] - pfns[j] * page_struct_size;
			int votes = 0;

			for (int k = 0; k < npages; k++)
				for (int l = 0; l < npfns; l++)
					votes += pages[k] - pfns[l] * page_struct_size == cand;
			if (votes > best_votes) {
				best_votes = votes;
				*base = cand;
				tied = false;
			} else if (votes == best_votes && cand != *base) {
				tied = true;
			}
		}
	}
	/*
	 * One pair can agree with itself by chance; two cannot.  Two bases
	 * with as many votes mean an extra page sat next to the data pages
	 * in memory: either could be true.
	 */
	return best_votes >= 2 && !tied ? 0 : -1;
}

/* Faults in CALIB_TOUCH pages while the program watches; pages seen, or -1. */
static int watch_faults(struct pfn_bpf *skel, char *area, long page, char *err, size_t err_size)
{
	struct bpf_link *link;

	skel->bss->calib_count = 0;
	skel->bss->calib_tid = gettid();
	link = bpf_program__attach(skel->progs.calibrate_pfn);
	if (!link) {
		snprintf(err, err_size, "attaching the calibration program: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < CALIB_TOUCH; i++)
		((volatile char *)area)[i * page] = 1;
	bpf_link__destroy(link);
	return skel->bss->calib_count;
}

static int calibrate_with(struct pfn_bpf *skel, __u64 size, __u64 *base, char *err,
			  size_t err_size)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 pfns[CALIB_TOUCH];
	int npages, npfns;
	char *area;

	area = mmap(NULL, CALIB_TOUCH * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		snprintf(err, err_size, "mmap: %s", strerror(errno));
		return -1;
	}
	npages = watch_faults(skel, area, page, err, err_size);
	npfns = npages < 0 ? 0 : read_pfns(area, page, pfns);
	munmap(area, CALIB_TOUCH * page);
	if (npages < 0)
		return -1;
	if (npfns <= 0) {
		snprintf(err, err_size, "/proc/self/pagemap shows no pfns");
		return -1;
	}
	if (pfn_pick_base(skel->bss->calib_pages, npages, pfns, npfns, size, base)) {
		snprintf(err, err_size, "no consistent struct page base (%d pages seen)", npages);
		return -1;
	}
	return 0;
}

struct pfn_calib {
	struct pfn_bpf *skel;
	__u64 page_struct_size;
	__u64 vmemmap_base; /* 0 until pfn_calib_vmemmap found it */
};

struct pfn_calib *pfn_calib_open(const struct btf *vmlinux, char *err, size_t err_size)
{
	struct pfn_calib *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	if (page_struct_size(vmlinux, &c->page_struct_size)) {
		snprintf(err, err_size, "no struct page in the kernel's BTF");
		free(c);
		return NULL;
	}
	c->skel = pfn_bpf__open_and_load();
	if (!c->skel) {
		snprintf(err, err_size, "loading the calibration program: %s", strerror(errno));
		free(c);
		return NULL;
	}
	return c;
}

void pfn_calib_close(struct pfn_calib *c)
{
	if (!c)
		return;
	pfn_bpf__destroy(c->skel);
	free(c);
}

int pfn_calib_vmemmap(struct pfn_calib *c, __u64 *base, char *err, size_t err_size)
{
	int ret = -1;

	/* A tie is rare and depends on where the pages land: try fresh ones. */
	for (int try = 0; try < CALIB_TRIES && ret; try++)
		ret = calibrate_with(c->skel, c->page_struct_size, base, err, err_size);
	c->vmemmap_base = ret ? 0 : *base;
	return ret;
}

/*
 * Pipes resized so that their ring of slots (struct pipe_buffer, 40 bytes
 * each) is larger than the largest slab size (two pages): page / 16 slots
 * make 2.5 pages of ring (1 MiB of pipe with 4 KiB pages).
 */
static int resize_pipes(long page, char *err, size_t err_size)
{
	long bytes = page * (page / 16);

	for (int i = 0; i < LINEAR_PIPES; i++) {
		int p[2], ret;

		if (pipe2(p, O_CLOEXEC)) {
			snprintf(err, err_size, "pipe: %s", strerror(errno));
			return -1;
		}
		ret = fcntl(p[1], F_SETPIPE_SZ, bytes);
		if (ret < 0)
			snprintf(err, err_size, "F_SETPIPE_SZ %ld: %s", bytes, strerror(errno));
		close(p[0]);
		close(p[1]);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int watch_large_kmallocs(struct pfn_bpf *skel, long page, char *err, size_t err_size)
{
	struct bpf_link *pages, *kmallocs;
	int ret;

	skel->bss->calib_pairs = 0;
	skel->bss->calib_last_page = 0;
	skel->bss->calib_page_size = page;
	skel->bss->calib_tid = gettid();
	pages = bpf_program__attach(skel->progs.calibrate_pfn);
	kmallocs = pages ? bpf_program__attach(skel->progs.calibrate_linear) : NULL;
	if (!kmallocs) {
		snprintf(err, err_size, "attaching the calibration programs: %s", strerror(errno));
		bpf_link__destroy(pages);
		return -1;
	}
	ret = resize_pipes(page, err, err_size);
	bpf_link__destroy(kmallocs);
	bpf_link__destroy(pages);
	return ret ? -1 : (int)skel->bss->calib_pairs;
}

int pfn_calib_linear(struct pfn_calib *c, __u64 *offset, char *err, size_t err_size)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 addrs[KMT_CALIB_PAIRS], pfns[KMT_CALIB_PAIRS];
	int pairs, n = 0;

	if (!c->vmemmap_base) {
		snprintf(err, err_size, "the struct page array was not found");
		return -1;
	}
	pairs = watch_large_kmallocs(c->skel, page, err, err_size);
	if (pairs < 0)
		return -1;
	for (int i = 0; i < pairs && i < KMT_CALIB_PAIRS; i++) {
		__u64 from_base = c->skel->bss->calib_pair_page[i] - c->vmemmap_base;

		if (from_base % c->page_struct_size)
			continue; /* not a struct page of this array */
		addrs[n] = c->skel->bss->calib_pair_addr[i];
		pfns[n++] = from_base / c->page_struct_size;
	}
	if (pfn_pick_base(addrs, n, pfns, n, page, offset)) {
		snprintf(err, err_size, "no consistent linear map offset (%d large kmallocs seen)",
			 pairs);
		return -1;
	}
	return 0;
}
