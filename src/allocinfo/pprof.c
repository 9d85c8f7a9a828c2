// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pprof heap profile of --pprof: see pprof.h.  Strings, functions and
 * locations are interned (a profile names each once and refers to it by
 * index or id); the protobuf-c messages (from src/allocinfo/pprof.proto) are built
 * only to encode, pointing into these arrays.
 */
#include "pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof.pb-c.h"

#define FILE_MODE 0600
#define FIRST_SLOTS 256 /* an id map's first size; it doubles at half full */

/* --- interning: byte strings to ids ---------------------------------------------------- */

struct idslot {
	void *key; /* NULL: free */
	size_t len;
	uint64_t id;
};

struct idmap {
	struct idslot *slots;
	size_t n, cap;
};

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *b = key;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static struct idslot *idmap_slot(const struct idmap *m, const void *key, size_t len)
{
	size_t i = hash_bytes(key, len) & (m->cap - 1);

	while (m->slots[i].key && (m->slots[i].len != len || memcmp(m->slots[i].key, key, len)))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

/* The id of key, 0 when absent. */
static uint64_t idmap_get(const struct idmap *m, const void *key, size_t len)
{
	return m->cap ? idmap_slot(m, key, len)->id : 0;
}

static int idmap_grow(struct idmap *m)
{
	struct idmap bigger = { .cap = m->cap ? m->cap * 2 : FIRST_SLOTS, .n = m->n };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			*idmap_slot(&bigger, m->slots[i].key, m->slots[i].len) = m->slots[i];
	free(m->slots);
	*m = bigger;
	return 0;
}

/* key (copied) -> id, key absent. */
static int idmap_put(struct idmap *m, const void *key, size_t len, uint64_t id)
{
	struct idslot *s;

	if ((m->n + 1) * 2 > m->cap && idmap_grow(m))
		return -ENOMEM;
	s = idmap_slot(m, key, len);
	s->key = malloc(len ? len : 1);
	if (!s->key)
		return -ENOMEM;
	memcpy(s->key, key, len);
	s->len = len;
	s->id = id;
	m->n++;
	return 0;
}

static void idmap_free(struct idmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* --- the profile's tables ----------------------------------------------------------------- */

struct function {
	int64_t name, file; /* string indexes */
};

struct location {
	unsigned long long addr;
	size_t first_line, nlines; /* in lines */
};

struct line {
	uint64_t function_id;
	int64_t line;
};

struct sample {
	size_t first_loc, nlocs; /* in sample_locs */
	int64_t values[PPROF_VALUES];
};

/* A growing array of elements of size elem. */
static int reserve(void *array, size_t *cap, size_t n, size_t more, size_t elem)
{
	void **a = array;
	size_t want = *cap ? *cap : 64;
	void *bigger;

	if (n + more <= *cap)
		return 0;
	while (want < n + more)
		want *= 2;
	bigger = realloc(*a, want * elem);
	if (!bigger)
		return -ENOMEM;
	*a = bigger;
	*cap = want;
	return 0;
}

struct pprof {
	bool inuse;
	char **strings;
	size_t nstrings, strings_cap;
	struct idmap string_ids; /* string -> index + 1 */
	struct function *functions;
	size_t nfunctions, functions_cap;
	struct idmap function_ids; /* (name, file) -> id */
	struct location *locations;
	size_t nlocations, locations_cap;
	struct idmap location_ids; /* address -> id */
	struct line *lines;
	size_t nlines, lines_cap;
	struct sample *samples;
	size_t nsamples, samples_cap;
	uint64_t *sample_locs;
	size_t nsample_locs, sample_locs_cap;
};

/* The index of s in the string table, added if new; -1 when out of memory. */
static int64_t string_index(struct pprof *p, const char *s)
{
	size_t len = strlen(s);
	uint64_t id = idmap_get(&p->string_ids, s, len);
	char *copy;

	if (id)
		return (int64_t)id - 1;
	if (reserve(&p->strings, &p->strings_cap, p->nstrings, 1, sizeof(*p->strings)) ||
	    !(copy = strdup(s)))
		return -1;
	if (idmap_put(&p->string_ids, s, len, p->nstrings + 1)) {
		free(copy);
		return -1;
	}
	p->strings[p->nstrings] = copy;
	return (int64_t)p->nstrings++;
}

/* The names a profile always has: "" first, as the format wants. */
static const char *const fixed_strings[] = {
	"", "alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "inuse_space",
	"space", "[kernel.kallsyms]",
};

struct pprof *pprof_new(bool inuse, char *err, size_t err_size)
{
	struct pprof *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	p->inuse = inuse;
	for (size_t i = 0; i < sizeof(fixed_strings) / sizeof(fixed_strings[0]); i++) {
		if (string_index(p, fixed_strings[i]) < 0) {
			snprintf(err, err_size, "out of memory");
			pprof_free(p);
			return NULL;
		}
	}
	return p;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	idmap_free(&p->string_ids);
	free(p->functions);
	idmap_free(&p->function_ids);
	free(p->locations);
	idmap_free(&p->location_ids);
	free(p->lines);
	free(p->samples);
	free(p->sample_locs);
	free(p);
}

void pprof_begin(struct pprof *p)
{
	p->nsamples = 0;
	p->nsample_locs = 0;
}

/* The id of the function (name, file), added if new; 0 when out of memory. */
static uint64_t function_id(struct pprof *p, const char *name, const char *file)
{
	int64_t key[2] = { string_index(p, name ? name : "unknown"), string_index(p, file ? file : "") };
	uint64_t id;

	if (key[0] < 0 || key[1] < 0)
		return 0;
	id = idmap_get(&p->function_ids, key, sizeof(key));
	if (id)
		return id;
	if (reserve(&p->functions, &p->functions_cap, p->nfunctions, 1, sizeof(*p->functions)) ||
	    idmap_put(&p->function_ids, key, sizeof(key), p->nfunctions + 1))
		return 0;
	p->functions[p->nfunctions] = (struct function){ .name = key[0], .file = key[1] };
	return ++p->nfunctions;
}

uint64_t pprof_location(const struct pprof *p, unsigned long long addr)
{
	return idmap_get(&p->location_ids, &addr, sizeof(addr));
}

uint64_t pprof_add_location(struct pprof *p, unsigned long long addr,
			    const struct pprof_line *lines, int nlines)
{
	size_t first = p->nlines;

	if (nlines < 0)
		nlines = 0;
	if (reserve(&p->lines, &p->lines_cap, p->nlines, (size_t)nlines, sizeof(*p->lines)) ||
	    reserve(&p->locations, &p->locations_cap, p->nlocations, 1, sizeof(*p->locations)))
		return 0;
	for (int i = 0; i < nlines; i++) {
		uint64_t fid = function_id(p, lines[i].func, lines[i].file);

		if (!fid) {
			p->nlines = first;
			return 0;
		}
		p->lines[p->nlines++] = (struct line){ .function_id = fid, .line = lines[i].line };
	}
	if (idmap_put(&p->location_ids, &addr, sizeof(addr), p->nlocations + 1)) {
		p->nlines = first;
		return 0;
	}
	p->locations[p->nlocations] = (struct location){
		.addr = addr, .first_line = first, .nlines = (size_t)nlines,
	};
	return ++p->nlocations;
}

int pprof_add_sample(struct pprof *p, const uint64_t *locs, int nlocs,
		     const long long values[PPROF_VALUES])
{
	struct sample *s;

	if (nlocs < 0)
		nlocs = 0;
	if (reserve(&p->samples, &p->samples_cap, p->nsamples, 1, sizeof(*p->samples)) ||
	    reserve(&p->sample_locs, &p->sample_locs_cap, p->nsample_locs, (size_t)nlocs,
		    sizeof(*p->sample_locs)))
		return -ENOMEM;
	s = &p->samples[p->nsamples++];
	s->first_loc = p->nsample_locs;
	s->nlocs = (size_t)nlocs;
	for (int i = 0; i < PPROF_VALUES; i++)
		s->values[i] = values[i];
	if (nlocs)
		memcpy(p->sample_locs + p->nsample_locs, locs, (size_t)nlocs * sizeof(*locs));
	p->nsample_locs += (size_t)nlocs;
	return 0;
}

/* --- encoding ---------------------------------------------------------------------------- */

/* The messages of one encoding, pointing into struct pprof; freed at once. */
struct messages {
	Pprof__ValueType types[PPROF_VALUES], *type_ptrs[PPROF_VALUES], period_type;
	Pprof__Mapping mapping, *mapping_ptr;
	Pprof__Function *functions, **function_ptrs;
	Pprof__Location *locations, **location_ptrs;
	Pprof__Line *lines, **line_ptrs;
	Pprof__Sample *samples, **sample_ptrs;
	int64_t *values;
};

static void free_messages(struct messages *m)
{
	free(m->functions);
	free(m->function_ptrs);
	free(m->locations);
	free(m->location_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->samples);
	free(m->sample_ptrs);
	free(m->values);
}

/* Index of a fixed string (they come first, in order). */
static int64_t fixed(const char *s)
{
	for (size_t i = 0; i < sizeof(fixed_strings) / sizeof(fixed_strings[0]); i++)
		if (!strcmp(fixed_strings[i], s))
			return (int64_t)i;
	return 0;
}

static void fill_types(struct messages *m, Pprof__Profile *prof, bool inuse)
{
	static const char *const names[PPROF_VALUES][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	size_t n = inuse ? PPROF_VALUES : PPROF_INUSE_OBJECTS;

	for (size_t i = 0; i < n; i++) {
		pprof__value_type__init(&m->types[i]);
		m->types[i].type = fixed(names[i][0]);
		m->types[i].unit = fixed(names[i][1]);
		m->type_ptrs[i] = &m->types[i];
	}
	prof->n_sample_type = n;
	prof->sample_type = m->type_ptrs;
	pprof__value_type__init(&m->period_type);
	m->period_type.type = fixed("space");
	m->period_type.unit = fixed("bytes");
	prof->period_type = &m->period_type;
	/* What a reader shows first: what the table shows. */
	prof->default_sample_type = fixed(inuse ? "inuse_space" : "alloc_space");
}

/* One mapping for every kernel address, its symbols given. */
static void fill_mapping(struct messages *m, Pprof__Profile *prof)
{
	pprof__mapping__init(&m->mapping);
	m->mapping.id = 1;
	m->mapping.memory_start = 0;
	m->mapping.memory_limit = UINT64_MAX;
	m->mapping.filename = fixed("[kernel.kallsyms]");
	m->mapping.has_functions = true;
	m->mapping.has_filenames = true;
	m->mapping.has_line_numbers = true;
	m->mapping.has_inline_frames = true;
	m->mapping_ptr = &m->mapping;
	prof->n_mapping = 1;
	prof->mapping = &m->mapping_ptr;
}

static int fill_functions(const struct pprof *p, struct messages *m, Pprof__Profile *prof)
{
	size_t n = p->nfunctions;

	m->functions = calloc(n + 1, sizeof(*m->functions));
	m->function_ptrs = calloc(n + 1, sizeof(*m->function_ptrs));
	if (!m->functions || !m->function_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pprof__function__init(&m->functions[i]);
		m->functions[i].id = i + 1;
		m->functions[i].name = p->functions[i].name;
		m->functions[i].system_name = p->functions[i].name;
		m->functions[i].filename = p->functions[i].file;
		m->function_ptrs[i] = &m->functions[i];
	}
	prof->n_function = n;
	prof->function = m->function_ptrs;
	return 0;
}

static int fill_locations(const struct pprof *p, struct messages *m, Pprof__Profile *prof)
{
	m->locations = calloc(p->nlocations + 1, sizeof(*m->locations));
	m->location_ptrs = calloc(p->nlocations + 1, sizeof(*m->location_ptrs));
	m->lines = calloc(p->nlines + 1, sizeof(*m->lines));
	m->line_ptrs = calloc(p->nlines + 1, sizeof(*m->line_ptrs));
	if (!m->locations || !m->location_ptrs || !m->lines || !m->line_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nlines; i++) {
		pprof__line__init(&m->lines[i]);
		m->lines[i].function_id = p->lines[i].function_id;
		m->lines[i].line = p->lines[i].line;
		m->line_ptrs[i] = &m->lines[i];
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct location *l = &p->locations[i];

		pprof__location__init(&m->locations[i]);
		m->locations[i].id = i + 1;
		m->locations[i].mapping_id = 1;
		m->locations[i].address = l->addr;
		m->locations[i].n_line = l->nlines;
		m->locations[i].line = m->line_ptrs + l->first_line;
		m->location_ptrs[i] = &m->locations[i];
	}
	prof->n_location = p->nlocations;
	prof->location = m->location_ptrs;
	return 0;
}

static int fill_samples(const struct pprof *p, struct messages *m, Pprof__Profile *prof)
{
	size_t nvalues = prof->n_sample_type;

	m->samples = calloc(p->nsamples + 1, sizeof(*m->samples));
	m->sample_ptrs = calloc(p->nsamples + 1, sizeof(*m->sample_ptrs));
	m->values = calloc(p->nsamples * nvalues + 1, sizeof(*m->values));
	if (!m->samples || !m->sample_ptrs || !m->values)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];

		pprof__sample__init(&m->samples[i]);
		m->samples[i].n_location_id = s->nlocs;
		m->samples[i].location_id = p->sample_locs + s->first_loc;
		memcpy(m->values + i * nvalues, s->values, nvalues * sizeof(*m->values));
		m->samples[i].n_value = nvalues;
		m->samples[i].value = m->values + i * nvalues;
		m->sample_ptrs[i] = &m->samples[i];
	}
	prof->n_sample = p->nsamples;
	prof->sample = m->sample_ptrs;
	return 0;
}

int pprof_encode(const struct pprof *p, long long time_ns, unsigned char **buf, size_t *len)
{
	Pprof__Profile prof;
	struct messages m = { 0 };
	int err;

	*buf = NULL;
	*len = 0;
	pprof__profile__init(&prof);
	fill_types(&m, &prof, p->inuse);
	fill_mapping(&m, &prof);
	err = fill_functions(p, &m, &prof);
	if (!err)
		err = fill_locations(p, &m, &prof);
	if (!err)
		err = fill_samples(p, &m, &prof);
	if (!err) {
		prof.n_string_table = p->nstrings;
		prof.string_table = p->strings;
		prof.time_nanos = time_ns;
		prof.period = 1;
		*len = pprof__profile__get_packed_size(&prof);
		*buf = malloc(*len ? *len : 1);
		if (*buf)
			pprof__profile__pack(&prof, *buf);
		else
			err = -ENOMEM;
	}
	free_messages(&m);
	return err;
}

/* --- the file --------------------------------------------------------------------------- */

/* data gzip'd to fd (closed). */
static int write_gzip(int fd, const unsigned char *data, size_t len)
{
	gzFile gz = gzdopen(fd, "wb");
	int err = 0;

	if (!gz) {
		close(fd);
		return -1;
	}
	while (len && !err) {
		unsigned int chunk = len > (1U << 30) ? 1U << 30 : (unsigned int)len;

		if (gzwrite(gz, data, chunk) != (int)chunk)
			err = -1;
		data += chunk;
		len -= chunk;
	}
	if (gzclose(gz) != Z_OK)
		err = -1;
	return err;
}

int pprof_write(const struct pprof *p, const char *path, long long time_ns, char *err,
		size_t err_size)
{
	unsigned char *data;
	size_t len;
	char *tmp = NULL;
	int fd;

	if (pprof_encode(p, time_ns, &data, &len) || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		free(data);
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	/* mkostemp creates it 0600; fchmod in case a umask or ACL said otherwise. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, FILE_MODE)) {
		snprintf(err, err_size, "cannot create %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		goto fail;
	}
	errno = 0;
	if (write_gzip(fd, data, len)) {
		snprintf(err, err_size, "writing %s: %s", tmp, errno ? strerror(errno) : "gzip failed");
		unlink(tmp);
		goto fail;
	}
	/* rename replaces a symbolic link at path, never follows it. */
	if (rename(tmp, path)) {
		snprintf(err, err_size, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		goto fail;
	}
	free(tmp);
	free(data);
	return 0;
fail:
	free(tmp);
	free(data);
	return -1;
}
