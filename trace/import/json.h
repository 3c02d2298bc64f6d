#ifndef K3_TRACE_JSON_H
#define K3_TRACE_JSON_H

/* A streaming (pull) JSON reader for traces too big to load as a tree: Kineto/Chrome traces run
 * to gigabytes. Memory is bounded by the read buffer, the longest string kept and the nesting
 * depth, whatever the input. Errors carry file:line:col (1-based; col counts bytes).
 *
 * Usage: json_reader_open_file (a path, "-" for standard input; gzip is inflated on the way,
 * trace/import/input.h), _input or _mem, then json_next until JSON_EOF; json_skip drops the rest of a
 * container a token starts, json_skip_value the next value without keeping any of its text.
 * After JSON_KEY, JSON_STRING and JSON_NUMBER, r->str holds the text (NUL-terminated, unescaped,
 * r->str_len bytes) until the next call. A string longer than max_string_bytes is kept cut there
 * (on a UTF-8 boundary, r->str_cut set), never rejected: a 100 MB call stack in an argument
 * costs no memory. A UTF-8 byte order mark before the document is skipped. The reader checks the
 * whole grammar: it reports a missing comma or colon, trailing garbage, or a truncated
 * document. */

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/import/input.h"
#include "util/err.h"

enum json_tok {
	JSON_EOF,
	JSON_OBJ_BEGIN,
	JSON_OBJ_END,
	JSON_ARR_BEGIN,
	JSON_ARR_END,
	JSON_KEY,
	JSON_STRING,
	JSON_NUMBER,
	JSON_TRUE,
	JSON_FALSE,
	JSON_NULL,
};

enum {
	JSON_MAX_DEPTH = 64,                      /* default nesting limit */
	JSON_DEFAULT_MAX_STRING_BYTES = 1 << 20,  /* default: longer strings are cut here */
	JSON_MAX_NUMBER_BYTES = 64,
	JSON_BUF_BYTES = 64 * 1024,
};

struct json_reader {
	struct trace_input *in;  /* the source; NULL for plain memory */
	bool own_in;             /* opened from a path: closed and freed with the reader */
	const unsigned char *mem;
	size_t mem_len;
	unsigned char buf[JSON_BUF_BYTES];
	size_t pos, len;         /* unread bytes are buf[pos, len) (or mem[pos, mem_len)) */
	int eof;
	char file[256];
	int line, col;           /* of the next unread byte */
	int tok_line, tok_col;   /* where the last token started */
	char *str;               /* token text; owned */
	size_t str_len, str_cap;
	bool str_cut;            /* the last string was longer than max_string_bytes */
	bool discard;            /* internal: json_skip_value is running */
	bool started;            /* internal: the byte order mark was looked for */
	int io_rc;               /* a read error (gzip data, the device), reported where it is met */
	struct err io_err;
	size_t max_string_bytes;
	int max_depth;           /* <= JSON_MAX_DEPTH */
	int depth;
	unsigned char stack[JSON_MAX_DEPTH]; /* 'o' or 'a' per open container */
	int state;               /* what may come next; internal */
	int64_t tokens;
};

/* Open a file ("-": standard input; gzip content is inflated). On failure e says why and r holds
 * nothing to release. */
int json_reader_open_file(struct json_reader *r, const char *path, struct err *e);
/* Read from an open input (not owned: close it after the reader). Its name is used in errors. */
void json_reader_open_input(struct json_reader *r, struct trace_input *in);
/* Read from memory (not copied: data must outlive r). name is used in errors. */
void json_reader_open_mem(struct json_reader *r, const char *name, const void *data, size_t len);
void json_reader_close(struct json_reader *r);

/* Limits; call right after opening. depth is clamped to [1, JSON_MAX_DEPTH]. */
void json_reader_limits(struct json_reader *r, size_t max_string_bytes, int max_depth);

int json_next(struct json_reader *r, enum json_tok *tok, struct err *e);

/* Skip the value whose first token (already read) is `first`: for JSON_OBJ_BEGIN and
 * JSON_ARR_BEGIN, everything up to the matching end; nothing for scalars. */
int json_skip(struct json_reader *r, enum json_tok first, struct err *e);
/* Read and drop the next value (after a key, or an array item), whatever its size: strings are
 * scanned, not copied. *tok (may be NULL) says what it was: JSON_ARR_END when an array ended
 * instead. r->str is not valid afterwards. */
int json_skip_value(struct json_reader *r, enum json_tok *tok, struct err *e);

/* Number text -> value. -ERANGE when it does not fit, -EINVAL when not a number. */
int json_parse_i64(const char *s, int64_t *out);
int json_parse_double(const char *s, double *out);
/* A decimal number times 10^scale, rounded to nearest, exactly (no binary floating point on the
 * way): json_parse_scaled("1700000000123.4567", 3, &ns) gives 1700000000123457. Exponents are
 * honoured. */
int json_parse_scaled(const char *s, int scale, int64_t *out);

#endif
