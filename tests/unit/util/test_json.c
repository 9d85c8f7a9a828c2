// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * json_escape(): '"' and '\' escaped with a backslash, every byte outside
 * printable ASCII as \u00XX (control characters as RFC 8259 asks; bytes
 * of 0x7f and up too, so a line stays ASCII whatever a name holds), the
 * rest as it is; escapes at the start, the end and between plain runs.
 */
#include "util/json.h"
#include "unit.h"

#include <string.h>

void test_json(struct unit *u);

static void check_escape(struct unit *u, const char *name, const char *in, size_t n,
			 const char *want)
{
	struct unit_case c;
	char out[JSON_ESCAPED_MAX(64) + 1];
	char *end;

	unit_begin(&c, u, name);
	end = json_escape(out, in, n);
	*end = 0;
	CHECK_STR(&c, out, want);
	unit_end(&c);
}

void test_json(struct unit *u)
{
	check_escape(u, "json.escape_plain", "kmalloc-64", 10, "kmalloc-64");
	check_escape(u, "json.escape_empty", "", 0, "");
	check_escape(u, "json.escape_quote_backslash", "a\"b\\c", 5, "a\\\"b\\\\c");
	check_escape(u, "json.escape_edges", "\"mid\\", 5, "\\\"mid\\\\");
	check_escape(u, "json.escape_control", "x\ty\n\x01\x1f", 6, "x\\u0009y\\u000a\\u0001\\u001f");
	check_escape(u, "json.escape_del_and_high", "\x7f\xc3\xa9", 3, "\\u007f\\u00c3\\u00a9");
	check_escape(u, "json.escape_stops_at_n", "abc\"def", 3, "abc");
}
