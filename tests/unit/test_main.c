// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Runs every unit test suite.  To add a suite, write test_<name>.c with
 * void test_<name>(struct unit *u) and add X(<name>) below.
 */
#include "unit.h"

#define UNIT_SUITES(X) \
	X(aitable)     \
	X(allocinfo)   \
	X(cgpath)      \
	X(binin)       \
	X(budget)      \
	X(cpuloss)     \
	X(env)         \
	X(threshold)   \
	X(gfp)         \
	X(hist)        \
	X(json)        \
	X(ksyms)        \
	X(kstat)       \
	X(memcg)       \
	X(metrics)     \
	X(pagesite)    \
	X(pprof)       \
	X(procscan)    \
	X(record)      \
	X(reorder)     \
	X(srcline)     \
	X(tpformat)    \
	X(topkeys)     \
	X(usyms)

#define UNIT_DECLARE(name) void test_##name(struct unit *u);
UNIT_SUITES(UNIT_DECLARE)

int main(void)
{
	struct unit u = { 0 };

#define UNIT_RUN(name) test_##name(&u);
	UNIT_SUITES(UNIT_RUN)
	return u.failed ? 1 : 0;
}
