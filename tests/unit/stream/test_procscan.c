// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --user-stacks with -c: the processes of that name found in /proc, their
 * maps read; others' not.  Two children of this test, renamed.
 */
#include "names/usyms.h"
#include "stream/procscan.h"
#include "env.h"
#include "unit.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

void test_procscan(struct unit *u);

/* A child named name, waiting until killed; its pid, 0 on failure.  The
 * parent returns once the child has its name (a byte on the pipe). */
static pid_t named_child(const char *name)
{
	int p[2];
	char b;
	pid_t pid;

	if (pipe(p))
		return 0;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &b, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = 0;
	}
	close(p[0]);
	return pid > 0 ? pid : 0;
}

static void end_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

void test_procscan(struct unit *u)
{
	struct unit_case c;
	pid_t wanted = named_child("kmsunit-scan"), other = named_child("kmsunit-other");
	struct usyms *s = usyms_new(true);
	struct env env;

	unit_begin(&c, u, "procscan.comm");
	memset(&env, 0, sizeof(env));
	strcpy(env.comm, "kmsunit-scan");
	CHECK(&c, wanted && other && s);
	if (wanted && other && s) {
		CHECK(&c, !usyms_knows(s, wanted));
		procscan_note(s, &env);
		CHECK(&c, usyms_knows(s, wanted));
		CHECK(&c, !usyms_knows(s, other));
		CHECK(&c, !usyms_knows(s, getpid()));
	}
	end_child(wanted);
	end_child(other);
	usyms_free(s);
	unit_end(&c);
}
