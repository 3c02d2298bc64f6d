#ifndef K3_UTIL_JSONW_H
#define K3_UTIL_JSONW_H

/* JSON output, the one writer of it: every JSON string k3sim writes is escaped by
 * util_json_str, every number written by util_json_double (util/numfmt.h) or, where a format's
 * readers were given it, printf's %.17g (also exact). The streaming writer struct jw places
 * commas and line breaks; its style says where lines break, so the CLI's pretty --json, the
 * compare report's results.json (objects broken to the third level) and the serve summary's
 * single line all come from the same code.
 *
 * Nothing is buffered here: the stream's errors are the caller's to check (ferror). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string: quotes; '"' and '\\' escaped; control characters as \u00XX; valid UTF-8
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) passed through; every
 * byte of an invalid sequence as U+FFFD. NULL writes "". */
void util_json_str(FILE *f, const char *s);

/* The same test the escaper uses: the length in bytes (1 to 4) of the valid UTF-8 sequence at
 * p (p[0] >= 0x80), or 0 when it is not one. Reads at most up to the first NUL. */
int util_utf8_len(const unsigned char *p);

enum { JW_MAX_DEPTH = 32 }; /* deeper containers are written, but indented as at this depth */

struct jw_style {
	/* A value whose nesting depth (0 = the top-level value) is at most wrap_depth starts on a
	 * new line indented two spaces per level, and a container whose items did closes on its
	 * own line; -1: everything on one line. */
	int wrap_depth;
	bool wrap_top;      /* also break the line before the top-level value */
	const char *colon;  /* between a key and its value: ": " or ":" */
	int number_digits;  /* 0: the shortest exact text (util_json_double); else printf %.Ng */
};

/* The CLI's --json: every value on its own line, ": ", shortest exact numbers. */
extern const struct jw_style jw_style_pretty;

struct jw {
	FILE *out;
	struct jw_style style;
	int depth;
	bool need_comma[JW_MAX_DEPTH + 1];
};
void jw_init(struct jw *w, FILE *out); /* jw_style_pretty */
void jw_init_style(struct jw *w, FILE *out, const struct jw_style *style);
/* key NULL inside arrays and for the top-level value; keys are escaped like values */
void jw_begin_object(struct jw *w, const char *key);
void jw_end_object(struct jw *w);
void jw_begin_array(struct jw *w, const char *key);
void jw_end_array(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *v); /* v NULL: "" */
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_f64(struct jw *w, const char *key, double v); /* null when not finite */
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);
void jw_finish(struct jw *w); /* trailing newline */

#endif
