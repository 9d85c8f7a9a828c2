// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space frames named.  An address of a process lies in one of its
 * file mappings: its offset in the file is where it was mapped from
 * (START and OFFSET of the mapping), which the file's PT_LOAD headers turn
 * into the address it was linked at, which libdwfl names (symbol table,
 * separate debug files found by build id, line table).  This is all a
 * recording needs to keep: the mappings and the build ids of their files,
 * so that the same files name the frames on another machine.
 */
#include "usyms.h"

#include <elfutils/libdwfl.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define BUILD_ID_MAX 64 /* bytes; GNU build ids are 20 */
#define LOADS_MAX 16
#define REREAD_NS 1000000000ULL /* a live process's maps, read again at most this often */
/* A recording's maps file names no more (a corrupt one is refused, not
 * searched for ever); live, processes and objects past these go unnamed. */
#define PROCS_MAX 16384
#define OBJS_MAX 4096

struct load {
	unsigned long long offset, vaddr, filesz;
};

/*
 * One object file.  Live, a mapping's path, device and inode say which
 * file (processes in containers map different files at one path, and a
 * file replaced since keeps its inode); in a recording, its path and build
 * id.
 */
struct uobj {
	char *path;
	unsigned long long dev, ino; /* live: the file's; 0 in a recording */
	unsigned char build_id[BUILD_ID_MAX];
	int build_id_len;  /* 0: none known */
	bool opened;       /* tried: dwfl is set if it worked */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct load loads[LOADS_MAX];
	int nloads;
};

struct umap {
	unsigned long long start, end, offset;
	struct uobj *obj;
};

struct uproc {
	int pid;
	bool read;                   /* /proc/PID/maps read once at least */
	unsigned long long read_ns;  /* when it was last */
	struct umap *maps;
	size_t n, cap;
};

struct usyms {
	bool live;
	struct uproc *procs;
	size_t nprocs, procs_cap;
	struct uobj **objs;
	size_t nobjs, objs_cap;
};

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static bool grow(void **items, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*items, want * size);
	if (!p)
		return false;
	*items = p;
	*cap = want;
	return true;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct usyms *usyms_new(bool live)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (u)
		u->live = live;
	return u;
}

void usyms_free(struct usyms *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++)
		free(u->procs[i].maps);
	for (size_t i = 0; i < u->nobjs; i++) {
		if (u->objs[i]->dwfl)
			dwfl_end(u->objs[i]->dwfl);
		free(u->objs[i]->path);
		free(u->objs[i]);
	}
	free(u->procs);
	free(u->objs);
	free(u);
}

/* --- objects ----------------------------------------------------------------- */

/* A new object; NULL when out of memory or past OBJS_MAX. */
static struct uobj *new_obj(struct usyms *u, const char *path)
{
	struct uobj *o;

	if (u->nobjs >= OBJS_MAX || !grow((void **)&u->objs, &u->objs_cap, u->nobjs,
					  sizeof(*u->objs)))
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
	u->objs[u->nobjs++] = o;
	return o;
}

static struct uobj *live_obj(struct usyms *u, const char *path, unsigned long long dev,
			     unsigned long long ino)
{
	struct uobj *o;

	for (size_t i = 0; i < u->nobjs; i++)
		if (u->objs[i]->dev == dev && u->objs[i]->ino == ino &&
		    !strcmp(u->objs[i]->path, path))
			return u->objs[i];
	o = new_obj(u, path);
	if (o) {
		o->dev = dev;
		o->ino = ino;
	}
	return o;
}

static struct uobj *recorded_obj(struct usyms *u, const char *path, const unsigned char *id,
				 int id_len)
{
	struct uobj *o;

	for (size_t i = 0; i < u->nobjs; i++)
		if (u->objs[i]->build_id_len == id_len && !memcmp(u->objs[i]->build_id, id, id_len) &&
		    !strcmp(u->objs[i]->path, path))
			return u->objs[i];
	o = new_obj(u, path);
	if (o && id_len > 0) {
		memcpy(o->build_id, id, id_len);
		o->build_id_len = id_len;
	}
	return o;
}

/* The path without the " (deleted)" maps adds to a file removed since. */
static void file_name(const char *path, char *name, size_t size)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dlen = sizeof(deleted) - 1;

	if (len > dlen && !strcmp(path + len - dlen, deleted))
		len -= dlen;
	snprintf(name, size, "%.*s", (int)len, path);
}

static void read_loads(struct uobj *o, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && o->nloads < LOADS_MAX; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, i, &mem);

		if (ph && ph->p_type == PT_LOAD)
			o->loads[o->nloads++] = (struct load){ ph->p_offset, ph->p_vaddr,
							       ph->p_filesz };
	}
}

/* A regular file, opened without waiting (a recording's maps file may
 * name anything: a FIFO would block the open); with ino, only that inode. */
static int open_regular(const char *path, unsigned long long ino)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || (ino && st.st_ino != ino))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Files a recording's maps may name that are no object to read. */
static bool is_special(const char *path)
{
	return !strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5) || !strncmp(path, "/dev/", 5);
}

/* Live, the file process pid maps at m: the mapping itself (map_files:
 * a file deleted since too, but root only), else the path in the
 * process's root (a container has its own) if it is still that inode. */
static int open_mapped(const struct uobj *o, int pid, const struct umap *m, const char *name)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid, m->start, m->end);
	fd = open_regular(path, o->ino);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, name);
	return open_regular(path, o->ino);
}

/*
 * Opens o's file for lookups: live, the one process pid maps at m; from a
 * recording, the one at its path if that is the recorded build (another
 * build's symbols would name its frames wrongly: they keep their object
 * and offset).
 */
static void open_obj(struct usyms *u, struct uobj *o, int pid, const struct umap *m)
{
	char name[PATH_MAX];
	const unsigned char *bits;
	GElf_Addr vaddr;
	Elf *elf;
	int fd, len;

	o->opened = true;
	file_name(o->path, name, sizeof(name));
	if (u->live)
		fd = open_mapped(o, pid, m, name);
	else
		fd = is_special(name) ? -1 : open_regular(name, 0);
	if (fd < 0)
		return;
	o->dwfl = dwfl_begin(&callbacks);
	if (!o->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(o->dwfl);
	o->mod = dwfl_report_offline(o->dwfl, name, name, fd); /* owns fd if it worked */
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->mod)
		close(fd);
	elf = o->mod ? dwfl_module_getelf(o->mod, &o->bias) : NULL;
	len = o->mod ? dwfl_module_build_id(o->mod, &bits, &vaddr) : 0;
	if (!elf || (o->build_id_len && (len != o->build_id_len ||
					 memcmp(bits, o->build_id, len)))) {
		dwfl_end(o->dwfl);
		o->dwfl = NULL;
		o->mod = NULL;
		return;
	}
	if (len > 0 && len <= BUILD_ID_MAX && !o->build_id_len) {
		memcpy(o->build_id, bits, len);
		o->build_id_len = len;
	}
	read_loads(o, elf);
}

/* The address o was linked at for offset off of its file; 0 if none. */
static unsigned long long linked_at(const struct uobj *o, unsigned long long off)
{
	for (int i = 0; i < o->nloads; i++) {
		const struct load *l = &o->loads[i];

		if (off >= l->offset && off < l->offset + l->filesz)
			return off - l->offset + l->vaddr;
	}
	return 0;
}

/* --- processes --------------------------------------------------------------- */

/* pid's entry; with add, a new one if there is none (NULL: out of memory,
 * or PROCS_MAX processes already). */
static struct uproc *find_proc(struct usyms *u, int pid, bool add)
{
	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (!add || u->nprocs >= PROCS_MAX ||
	    !grow((void **)&u->procs, &u->procs_cap, u->nprocs, sizeof(*u->procs)))
		return NULL;
	u->procs[u->nprocs] = (struct uproc){ .pid = pid };
	return &u->procs[u->nprocs++];
}

static struct umap *find_map(struct uproc *p, unsigned long long addr)
{
	for (size_t i = 0; i < p->n; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static struct umap *add_map(struct uproc *p, unsigned long long start, unsigned long long end,
			    unsigned long long offset, struct uobj *obj)
{
	if (!grow((void **)&p->maps, &p->cap, p->n, sizeof(*p->maps)))
		return NULL;
	p->maps[p->n] = (struct umap){ start, end, offset, obj };
	return &p->maps[p->n++];
}

/* The executable file mappings of /proc/PID/maps, in place of those read
 * before (an exec replaced them, or a library was loaded since), each
 * object opened for its build id (which a recording keeps).  None found
 * (an exited process, whose maps are empty until it is reaped) leaves the
 * old ones: the frames printed after its end still need them. */
static void read_proc_maps(struct usyms *u, struct uproc *p)
{
	char path[64], line[PATH_MAX + 128];
	size_t before = p->n;
	FILE *f;

	p->read = true;
	p->read_ns = now_ns();
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	p->n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset, ino;
		unsigned int major, minor;
		char perms[8];
		struct uobj *o;
		struct umap *m;
		int at = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset,
			   &major, &minor, &ino, &at) < 7 || !at || perms[2] != 'x' || line[at] != '/')
			continue;
		o = live_obj(u, line + at, makedev(major, minor), ino);
		m = o ? add_map(p, start, end, offset, o) : NULL;
		if (!m)
			break;
		if (!o->opened)
			open_obj(u, o, p->pid, m);
	}
	fclose(f);
	if (!p->n)
		p->n = before;
}

bool usyms_knows(const struct usyms *u, int pid)
{
	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return u->procs[i].read && u->procs[i].n;
	return false;
}

void usyms_note_exec(struct usyms *u, int pid)
{
	struct uproc *p = find_proc(u, pid, true);

	if (p)
		read_proc_maps(u, p);
}

void usyms_note_process(struct usyms *u, int pid)
{
	struct uproc *p = find_proc(u, pid, true);

	/* Read again while none was found: a process caught in exec. */
	if (p && (!p->read || !p->n))
		read_proc_maps(u, p);
}

/* --- the maps file ----------------------------------------------------------- */

int usyms_write(const struct usyms *u, FILE *out)
{
	fprintf(out, "# kmemsnoop user maps: PID START-END OFFSET BUILD-ID PATH\n");
	for (size_t i = 0; i < u->nprocs; i++) {
		const struct uproc *p = &u->procs[i];

		for (size_t j = 0; j < p->n; j++) {
			const struct umap *m = &p->maps[j];

			fprintf(out, "%d %llx-%llx %llx ", p->pid, m->start, m->end, m->offset);
			for (int k = 0; k < m->obj->build_id_len; k++)
				fprintf(out, "%02x", m->obj->build_id[k]);
			fprintf(out, "%s %s\n", m->obj->build_id_len ? "" : "-", m->obj->path);
		}
	}
	return ferror(out) ? -1 : 0;
}

/* A number in base at *s, then sep: both consumed.  No sign, no blank. */
static bool field(const char **s, int base, char sep, unsigned long long *v)
{
	char *end;

	if (!isxdigit((unsigned char)**s) || (base == 10 && !isdigit((unsigned char)**s)))
		return false;
	errno = 0;
	*v = strtoull(*s, &end, base);
	if (errno || *end != sep)
		return false;
	*s = end + 1;
	return true;
}

/* The build id at *s ("-": none) up to a blank, consumed; its length, or
 * -1 when it is no even run of hexadecimal digits of BUILD_ID_MAX bytes
 * at most. */
static int build_id_field(const char **s, unsigned char *id)
{
	int n = 0;

	if (!strncmp(*s, "- ", 2)) {
		*s += 2;
		return 0;
	}
	for (; isxdigit((unsigned char)(*s)[0]) && isxdigit((unsigned char)(*s)[1]); *s += 2) {
		char pair[3] = { (*s)[0], (*s)[1], 0 };

		if (n == BUILD_ID_MAX)
			return -1;
		id[n++] = (unsigned char)strtoul(pair, NULL, 16);
	}
	if (!n || **s != ' ')
		return -1;
	(*s)++;
	return n;
}

/* One line "PID START-END OFFSET BUILD-ID PATH": 0, -EINVAL, or -ENOMEM
 * (also past PROCS_MAX or OBJS_MAX). */
static int read_line(struct usyms *u, const char *line)
{
	unsigned long long pid, start, end, offset;
	unsigned char id[BUILD_ID_MAX];
	const char *s = line;
	struct uproc *p;
	struct uobj *o;
	int id_len;

	if (!field(&s, 10, ' ', &pid) || !field(&s, 16, '-', &start) || !field(&s, 16, ' ', &end) ||
	    !field(&s, 16, ' ', &offset) || !pid || pid > INT_MAX || start >= end)
		return -EINVAL;
	id_len = build_id_field(&s, id);
	if (id_len < 0 || *s != '/')
		return -EINVAL;
	p = find_proc(u, (int)pid, true);
	o = p ? recorded_obj(u, s, id, id_len) : NULL;
	if (!o || !add_map(p, start, end, offset, o))
		return -ENOMEM;
	p->read = true; /* a recording's process: not this machine's */
	return 0;
}

int usyms_read(struct usyms *u, FILE *in, char *err, size_t err_size)
{
	char line[PATH_MAX + 256];
	unsigned int nr = 0;

	while (fgets(line, sizeof(line), in)) {
		int ret;

		nr++;
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#' || !line[0])
			continue;
		ret = read_line(u, line);
		if (ret) {
			snprintf(err, err_size, ret == -ENOMEM ?
				 "line %u: out of memory, or more processes or objects than kept" :
				 "line %u is not \"PID START-END OFFSET BUILD-ID PATH\"", nr);
			return -1;
		}
	}
	return 0;
}

/* --- naming ------------------------------------------------------------------ */

static struct umap *map_of(struct usyms *u, int pid, unsigned long long addr)
{
	struct uproc *p = find_proc(u, pid, u->live);
	struct umap *m;

	if (!p)
		return NULL;
	if (!p->read)
		read_proc_maps(u, p);
	m = find_map(p, addr);
	if (!m && u->live && now_ns() - p->read_ns >= REREAD_NS) {
		read_proc_maps(u, p);
		m = find_map(p, addr);
	}
	return m;
}

int uframe_format(const struct uframe *f, unsigned long long addr, bool brief, char *buf,
		  size_t size)
{
	if (!f->object)
		return snprintf(buf, size, "<%016llx>", addr);
	if (!f->func)
		return snprintf(buf, size, "%s[+0x%llx]", f->object, f->offset);
	if (brief)
		return snprintf(buf, size, "%s", f->func);
	if (!f->file)
		return snprintf(buf, size, "%s+0x%llx [%s]", f->func, f->func_offset, f->object);
	return snprintf(buf, size, "%s+0x%llx [%s] (%s:%u)", f->func, f->func_offset, f->object,
			f->file, f->line);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void usyms_name(struct usyms *u, int pid, unsigned long long addr, struct uframe *f)
{
	struct umap *m = map_of(u, pid, addr);
	unsigned long long linked, at;
	GElf_Sym sym;
	GElf_Off off;
	Dwfl_Line *ln;
	const char *name;
	int line;

	*f = (struct uframe){ 0 };
	if (!m)
		return;
	f->object = m->obj->path;
	f->offset = addr - m->start + m->offset;
	if (!m->obj->opened)
		open_obj(u, m->obj, pid, m);
	if (!m->obj->mod)
		return;
	linked = linked_at(m->obj, f->offset);
	if (!linked)
		return;
	/* A return address may be the first of the next function, after a
	 * call that does not return: the call is what is named. */
	at = linked + m->obj->bias - 1;
	name = dwfl_module_addrinfo(m->obj->mod, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		f->func = name;
		f->func_offset = off + 1;
	}
	ln = dwfl_module_getsrc(m->obj->mod, at);
	name = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
	if (name && line > 0) {
		f->file = base_name(name);
		f->line = line;
	}
}
