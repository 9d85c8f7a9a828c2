// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program with DWARF for the source line tests (tests/unit/test_srcline.c), built
 * -O1 -g, not position independent, so that its run-time addresses are its
 * link-time ones.  It makes calls the way kernel code calls kmalloc():
 * directly, and through an always-inlined *_noprof wrapper, and prints
 * each call's return address with the line the call is on:
 *
 *   NAME RETURN_ADDRESS LINE FUNCTION_ADDRESS
 *
 * The calls and their __LINE__ stand on one source line each.
 */
#include <stdio.h>

static void *last_return;
static int direct_line, wrapper_line, caller_line;

__attribute__((noinline)) int fixture_leaf(int x)
{
	last_return = __builtin_return_address(0);
	return x * 3;
}

/* Like kmalloc() in include/linux/slab.h: inlined into its caller. */
static inline __attribute__((always_inline)) int fixture_wrap_noprof(int x)
{
	int r = fixture_leaf(x) + 1; wrapper_line = __LINE__;

	return r;
}

__attribute__((noinline)) int fixture_direct(int x)
{
	int r = fixture_leaf(x) + 2; direct_line = __LINE__;

	return r;
}

__attribute__((noinline)) int fixture_inlined(int x)
{
	int r = fixture_wrap_noprof(x) * 5; caller_line = __LINE__;

	return r;
}

int main(void)
{
	volatile int v = 7;

	fixture_direct(v);
	printf("direct %p %d %p\n", last_return, direct_line, (void *)fixture_direct);
	fixture_inlined(v);
	printf("wrapper %p %d %p\n", last_return, wrapper_line, (void *)fixture_inlined);
	printf("caller %p %d %p\n", last_return, caller_line, (void *)fixture_inlined);
	return 0;
}
