// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* JSON strings: see json.h. */
#include "json.h"

#include <stdbool.h>
#include <string.h>

/* Characters a JSON string takes as they are. */
static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

char *json_escape(char *dst, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		const unsigned char *run = p;

		/* Names are nearly always plain: copied a run at a time. */
		while (p < end && json_plain(*p))
			p++;
		memcpy(dst, run, p - run);
		dst += p - run;
		if (p == end)
			break;
		if (*p == '"' || *p == '\\') {
			*dst++ = '\\';
			*dst++ = (char)*p;
		} else {
			memcpy(dst, "\\u00", 4);
			dst[4] = hex[*p >> 4];
			dst[5] = hex[*p & 15];
			dst += 6;
		}
		p++;
	}
	return dst;
}

void json_put_string(FILE *out, const char *s)
{
	/* Escaped a piece at a time: a piece takes at most six times itself. */
	enum { PIECE = 128 };
	char buf[JSON_ESCAPED_MAX(PIECE)];
	size_t len = strlen(s);

	putc_unlocked('"', out);
	for (size_t i = 0; i < len; i += PIECE) {
		size_t n = len - i < PIECE ? len - i : PIECE;

		fwrite_unlocked(buf, 1, json_escape(buf, s + i, n) - buf, out);
	}
	putc_unlocked('"', out);
}
