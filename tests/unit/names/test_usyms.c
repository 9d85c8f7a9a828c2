// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User frames named from a process's maps and ELF objects: this test's own
 * process, live and through the maps file a recording keeps, and that file
 * with another build id or a bad line.
 */
#include "names/usyms.h"
#include "unit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>

void test_usyms(struct unit *u);

/* A function of this binary to name; not inlined, not static (its symbol
 * is in .symtab whatever the build). */
__attribute__((noinline)) int usyms_probe(int x);
__attribute__((noinline)) int usyms_probe(int x)
{
	return x * 3 + 1;
}

/* An address inside usyms_probe, as a return address into it would be. */
static unsigned long long probe_addr(void)
{
	return (unsigned long long)(uintptr_t)usyms_probe + 4;
}

static void named_live(struct unit *u, char *maps, size_t size)
{
	struct unit_case c;
	struct usyms *s = usyms_new(true);
	struct uframe f;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *out;

	unit_begin(&c, u, "usyms.live");
	maps[0] = 0;
	CHECK(&c, s && n > 0);
	if (s && n > 0) {
		self[n] = 0;
		usyms_name(s, getpid(), probe_addr(), &f);
		CHECK_STR(&c, f.func ? f.func : "(none)", "usyms_probe");
		CHECK_U64(&c, f.func_offset, 4);
		CHECK_STR(&c, f.object ? f.object : "(none)", self);
		/* The whole maps file, for the cases below. */
		out = fmemopen(maps, size, "w");
		CHECK(&c, out && !usyms_write(s, out));
		if (out)
			fclose(out);
		CHECK(&c, strstr(maps, self) != NULL);
	}
	usyms_free(s);
	unit_end(&c);
}

/* The maps file read back names the same address without /proc. */
static void named_from_file(struct unit *u, const char *maps)
{
	struct unit_case c;
	struct usyms *s = usyms_new(false);
	FILE *in = fmemopen((void *)maps, strlen(maps), "r");
	char err[256] = "";
	struct uframe f;

	unit_begin(&c, u, "usyms.recorded");
	CHECK(&c, s && in && !usyms_read(s, in, err, sizeof(err)));
	if (s) {
		usyms_name(s, getpid(), probe_addr(), &f);
		CHECK_STR(&c, f.func ? f.func : "(none)", "usyms_probe");
		/* A process the file does not have: nothing, not /proc's. */
		usyms_name(s, getppid(), probe_addr(), &f);
		CHECK(&c, f.object == NULL && f.func == NULL);
	}
	if (in)
		fclose(in);
	usyms_free(s);
	unit_end(&c);
}

/* Does the maps file give this binary's mapping a build id? */
static bool has_build_id(const char *maps)
{
	char self[4096], want[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *line;

	if (n <= 0)
		return false;
	self[n] = 0;
	snprintf(want, sizeof(want), " %s\n", self);
	line = strstr(maps, want);
	/* "... OFFSET BUILD-ID PATH": "-" right before the path: none. */
	return line && !(line - maps >= 2 && line[-1] == '-' && line[-2] == ' ');
}

/* Every build id in the file changed: the object is another build, whose
 * symbols are not used; the frame keeps its object and offset. */
static void other_build(struct unit *u, const char *maps)
{
	struct unit_case c;
	char *copy = strdup(maps), *line, *id;
	struct usyms *s = usyms_new(false);
	char err[256] = "";
	struct uframe f;
	FILE *in;

	/* Without a build id (a toolchain that adds none) there is nothing to
	 * tell another build by. */
	if (!has_build_id(maps)) {
		unit_skip(u, "usyms.other_build", "this test binary has no build id");
		free(copy);
		usyms_free(s);
		return;
	}
	unit_begin(&c, u, "usyms.other_build");
	CHECK(&c, copy && s);
	if (!copy || !s)
		goto out;
	/* "PID START-END OFFSET BUILD-ID PATH": the id's first digit flipped. */
	for (line = copy; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (*line == '#')
			continue;
		id = line;
		for (int field = 0; field < 3 && id; field++)
			id = strchr(id, ' ') ? strchr(id, ' ') + 1 : NULL;
		if (id && *id != '-')
			*id = *id == '0' ? '1' : '0';
	}
	in = fmemopen(copy, strlen(copy), "r");
	CHECK(&c, in && !usyms_read(s, in, err, sizeof(err)));
	if (in)
		fclose(in);
	usyms_name(s, getpid(), probe_addr(), &f);
	CHECK(&c, f.object != NULL);
	CHECK(&c, f.func == NULL);
out:
	usyms_free(s);
	free(copy);
	unit_end(&c);
}

/* Is process pid a zombie (exited, not reaped: its maps read empty)? */
static bool is_zombie(pid_t pid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f && fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	if (f)
		fclose(f);
	return state == 'Z';
}

/* A process read again after its end (a frame printed late, an exec's
 * record) keeps the maps read while it lived. */
static void reread_after_exit(struct unit *u)
{
	struct unit_case c;
	struct usyms *s = usyms_new(true);
	pid_t child = fork();
	struct uframe f;

	if (child == 0) {
		for (;;)
			pause();
	}
	unit_begin(&c, u, "usyms.reread_after_exit");
	CHECK(&c, child > 0 && s);
	if (child > 0 && s) {
		usyms_note_process(s, child);
		CHECK(&c, usyms_knows(s, child));
		kill(child, SIGKILL);
		for (int i = 0; i < 1000 && !is_zombie(child); i++)
			usleep(1000);
		CHECK(&c, is_zombie(child));
		usyms_note_exec(s, child); /* reads the zombie's empty maps */
		usyms_name(s, child, probe_addr(), &f);
		CHECK_STR(&c, f.func ? f.func : "(none)", "usyms_probe");
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	usyms_free(s);
	unit_end(&c);
}

static void bad_lines(struct unit *u)
{
	static const char *const bad[] = {
		"# header\n12 1000-2000 0 - relative/path\n",
		"12 2000-1000 0 - /bin/true\n",
		"12 1000-2000 0 xyz /bin/true\n",
		"0 1000-2000 0 - /bin/true\n",
		"12 1000-2000\n",
	};
	struct unit_case c;

	unit_begin(&c, u, "usyms.bad_lines");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct usyms *s = usyms_new(false);
		FILE *in = fmemopen((void *)bad[i], strlen(bad[i]), "r");
		char err[256] = "";

		CHECK(&c, s && in && usyms_read(s, in, err, sizeof(err)) == -1);
		CHECK(&c, strstr(err, i ? "line 1 " : "line 2 ") != NULL);
		if (in)
			fclose(in);
		usyms_free(s);
	}
	unit_end(&c);
}

void test_usyms(struct unit *u)
{
	static char maps[1 << 16];

	named_live(u, maps, sizeof(maps));
	named_from_file(u, maps);
	other_build(u, maps);
	bad_lines(u);
	reread_after_exit(u);
}
