#include "trace/import/json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
	ST_VALUE,         /* a value must come (document start, after ':' or ',' in an array) */
	ST_VALUE_OR_END,  /* after '[' */
	ST_KEY_OR_END,    /* after '{' */
	ST_KEY,           /* after ',' in an object */
	ST_COMMA_OR_END,  /* after a value inside a container */
	ST_DONE,          /* the document's value is complete */
};

static void reset(struct json_reader *r, const char *name)
{
	/* everything but the read buffer */
	memset(r, 0, offsetof(struct json_reader, buf));
	memset(&r->pos, 0, sizeof *r - offsetof(struct json_reader, pos));
	r->pos = r->len = 0;
	r->eof = 0;
	snprintf(r->file, sizeof r->file, "%s", name ? name : "");
	r->line = r->col = 1;
	r->tok_line = r->tok_col = 1;
	r->str = NULL;
	r->str_len = r->str_cap = 0;
	r->max_string_bytes = JSON_DEFAULT_MAX_STRING_BYTES;
	r->max_depth = JSON_MAX_DEPTH;
	r->depth = 0;
	r->state = ST_VALUE;
	r->tokens = 0;
	r->io_rc = 0;
}

int json_reader_open_file(struct json_reader *r, const char *path, struct err *e)
{
	struct trace_input *in = malloc(sizeof *in);
	if (!in) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = trace_input_open(in, path, e);
	if (rc) {
		free(in);
		return rc;
	}
	json_reader_open_input(r, in);
	r->own_in = true;
	return 0;
}

void json_reader_open_input(struct json_reader *r, struct trace_input *in)
{
	reset(r, in->name);
	const unsigned char *p;
	size_t n;
	if (trace_input_direct(in, &p, &n)) {
		/* plain memory: read in place */
		r->mem = p;
		r->mem_len = n;
		r->len = n;
		return;
	}
	r->in = in;
}

void json_reader_open_mem(struct json_reader *r, const char *name, const void *data, size_t len)
{
	reset(r, name);
	r->mem = data;
	r->mem_len = len;
	r->len = len;
}

void json_reader_close(struct json_reader *r)
{
	if (r->own_in && r->in) {
		trace_input_close(r->in);
		free(r->in);
	}
	r->in = NULL;
	r->own_in = false;
	free(r->str);
	r->str = NULL;
	r->str_cap = r->str_len = 0;
}

void json_reader_limits(struct json_reader *r, size_t max_string_bytes, int max_depth)
{
	if (max_string_bytes)
		r->max_string_bytes = max_string_bytes;
	if (max_depth < 1)
		max_depth = 1;
	r->max_depth = max_depth > JSON_MAX_DEPTH ? JSON_MAX_DEPTH : max_depth;
}

static inline const unsigned char *data(const struct json_reader *r)
{
	return r->mem ? r->mem : r->buf;
}

/* Make at least one unread byte available; false at end of input or on a read error (then
 * r->io_rc and r->io_err say why). */
static bool refill(struct json_reader *r)
{
	if (r->mem || r->eof || !r->in)
		return false;
	size_t n = 0;
	int rc = trace_input_read(r->in, r->buf, sizeof r->buf, &n, &r->io_err);
	r->pos = 0;
	r->len = n;
	if (rc) {
		r->io_rc = rc;
		r->eof = 1;
		return false;
	}
	if (n == 0) {
		r->eof = 1;
		return false;
	}
	return true;
}

static inline bool fill(struct json_reader *r)
{
	return r->pos < r->len || refill(r);
}

static inline int peekc(struct json_reader *r)
{
	if (!fill(r))
		return -1;
	return data(r)[r->pos];
}

static inline void advance(struct json_reader *r, int c)
{
	r->pos++;
	if (c == '\n') {
		r->line++;
		r->col = 1;
	} else {
		r->col++;
	}
}

/* A read error stands in for "end of file" in every message. */
static int io_error(struct json_reader *r, struct err *e)
{
	if (e)
		*e = r->io_err;
	return r->io_rc;
}

static int fail(struct json_reader *r, struct err *e, int line, int col, const char *what)
{
	if (r->io_rc) /* whatever broke here broke because the input could not be read */
		return io_error(r, e);
	err_set(e, r->file, line, col, "%s", what);
	return -EINVAL;
}

static int fail_here(struct json_reader *r, struct err *e, const char *what)
{
	return fail(r, e, r->line, r->col, what);
}

static int describe_unexpected(struct json_reader *r, struct err *e, int c, const char *expected)
{
	if (c < 0 && r->io_rc)
		return io_error(r, e);
	if (c < 0) {
		err_set(e, r->file, r->line, r->col, "unexpected end of file (truncated document?),"
			" expected %s", expected);
	} else if (c >= 0x20 && c < 0x7f) {
		err_set(e, r->file, r->line, r->col, "unexpected '%c', expected %s", c, expected);
	} else {
		err_set(e, r->file, r->line, r->col, "unexpected byte 0x%02x, expected %s", c,
			expected);
	}
	return -EINVAL;
}

static void skip_ws_slow(struct json_reader *r)
{
	for (;;) {
		const unsigned char *d = data(r);
		size_t p = r->pos, len = r->len;
		int col = r->col;
		while (p < len) {
			unsigned char c = d[p];
			if (c == ' ' || c == '\t' || c == '\r') {
				col++;
			} else if (c == '\n') {
				r->line++;
				col = 1;
			} else {
				break;
			}
			p++;
		}
		r->pos = p;
		r->col = col;
		if (p < len || !refill(r))
			return;
	}
}

/* Whitespace before a token: most tokens have none or one byte of it. */
static inline void skip_ws(struct json_reader *r)
{
	if (r->pos < r->len && data(r)[r->pos] > ' ')
		return;
	skip_ws_slow(r);
}

/* Room for `extra` more bytes of text (plus the NUL); the caller has checked the limit. */
static int str_grow(struct json_reader *r, size_t extra, struct err *e)
{
	size_t need = r->str_len + extra + 1;
	if (need <= r->str_cap)
		return 0;
	size_t cap = r->str_cap ? r->str_cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = realloc(r->str, cap);
	if (!p) {
		err_set(e, r->file, r->tok_line, r->tok_col, "out of memory");
		return -ENOMEM;
	}
	r->str = p;
	r->str_cap = cap;
	return 0;
}

/* Append n bytes of text, as much as the limit allows: a string past it is kept cut (on a UTF-8
 * boundary) and flagged, never rejected. */
static int str_append(struct json_reader *r, const unsigned char *p, size_t n, struct err *e)
{
	if (r->discard || r->str_cut)
		return 0;
	if (r->str_len + n < r->str_cap && r->str_len + n <= r->max_string_bytes) {
		memcpy(r->str + r->str_len, p, n); /* the common case: it fits */
		r->str_len += n;
		return 0;
	}
	size_t room = r->max_string_bytes - r->str_len;
	if (n > room) {
		size_t k = room;
		while (k > 0 && (p[k] & 0xc0) == 0x80)
			k--;
		n = k;
		r->str_cut = true;
	}
	int rc = str_grow(r, n, e);
	if (rc)
		return rc;
	memcpy(r->str + r->str_len, p, n);
	r->str_len += n;
	return 0;
}

static int put_utf8(struct json_reader *r, uint32_t cp, struct err *e)
{
	unsigned char out[4];
	size_t n;
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		out[0] = (unsigned char)(0xf0 | (cp >> 18));
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (!r->discard && !r->str_cut && n > r->max_string_bytes - r->str_len) {
		r->str_cut = true; /* never half a character */
		return 0;
	}
	return str_append(r, out, n, e);
}

static int hex4(struct json_reader *r, uint32_t *out, struct err *e)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int c = peekc(r);
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return describe_unexpected(r, e, c, "a hex digit in \\u escape");
		advance(r, c);
		v = v * 16 + (uint32_t)d;
	}
	*out = v;
	return 0;
}

static int read_escape(struct json_reader *r, struct err *e)
{
	int c = peekc(r);
	char plain;
	switch (c) {
	case '"': plain = '"'; break;
	case '\\': plain = '\\'; break;
	case '/': plain = '/'; break;
	case 'b': plain = '\b'; break;
	case 'f': plain = '\f'; break;
	case 'n': plain = '\n'; break;
	case 'r': plain = '\r'; break;
	case 't': plain = '\t'; break;
	case 'u': {
		advance(r, c);
		uint32_t cp;
		int rc = hex4(r, &cp, e);
		if (rc)
			return rc;
		if (cp >= 0xd800 && cp < 0xdc00) {
			/* a high surrogate wants its low half; a lone one becomes U+FFFD */
			if (peekc(r) == '\\') {
				advance(r, '\\');
				if (peekc(r) != 'u')
					return describe_unexpected(r, e, peekc(r), "'u' (low surrogate)");
				advance(r, 'u');
				uint32_t lo;
				rc = hex4(r, &lo, e);
				if (rc)
					return rc;
				if (lo >= 0xdc00 && lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				else
					cp = 0xfffd;
			} else {
				cp = 0xfffd;
			}
		} else if (cp >= 0xdc00 && cp < 0xe000) {
			cp = 0xfffd;
		}
		if (cp == 0)
			return fail_here(r, e, "\\u0000 (NUL) in a string is not supported");
		return put_utf8(r, cp, e);
	}
	default:
		return describe_unexpected(r, e, c, "an escape character after '\\'");
	}
	advance(r, c);
	unsigned char b = (unsigned char)plain;
	return str_append(r, &b, 1, e);
}

static int read_string(struct json_reader *r, struct err *e)
{
	advance(r, '"');
	r->str_len = 0;
	r->str_cut = false;
	for (;;) {
		if (!fill(r)) {
			if (r->io_rc)
				return io_error(r, e);
			return fail(r, e, r->tok_line, r->tok_col,
				    "unterminated string (truncated document?)");
		}
		/* fast path: a run of plain bytes within the buffer */
		const unsigned char *d = data(r);
		size_t end = r->pos;
		while (end < r->len && d[end] != '"' && d[end] != '\\' && d[end] >= 0x20)
			end++;
		size_t n = end - r->pos;
		if (n) {
			int rc = str_append(r, d + r->pos, n, e);
			if (rc)
				return rc;
			r->pos = end;
			r->col += (int)n;
			continue;
		}
		int c = d[r->pos];
		if (c == '"') {
			advance(r, c);
			break;
		}
		if (c == '\\') {
			advance(r, c);
			int rc = read_escape(r, e);
			if (rc)
				return rc;
			continue;
		}
		return fail_here(r, e, "control character in string (unescaped newline or tab?)");
	}
	if (r->discard)
		return 0;
	int rc = str_grow(r, 0, e);
	if (rc)
		return rc;
	r->str[r->str_len] = '\0';
	return 0;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_number_char(int c)
{
	return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static int read_number(struct json_reader *r, struct err *e)
{
	char tmp[JSON_MAX_NUMBER_BYTES + 1];
	size_t n = 0;
	for (;;) {
		if (!fill(r))
			break;
		/* the digits within the buffer at once */
		const unsigned char *d = data(r);
		size_t p = r->pos, len = r->len;
		while (p < len && is_number_char(d[p])) {
			if (n == JSON_MAX_NUMBER_BYTES)
				return fail(r, e, r->tok_line, r->tok_col, "number too long");
			tmp[n++] = (char)d[p++];
		}
		r->col += (int)(p - r->pos);
		r->pos = p;
		if (p < len)
			break;
	}
	tmp[n] = '\0';
	/* JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	size_t i = 0;
	if (tmp[i] == '-')
		i++;
	if (tmp[i] == '0') {
		i++;
	} else if (is_digit(tmp[i])) {
		while (is_digit(tmp[i]))
			i++;
	} else {
		return fail(r, e, r->tok_line, r->tok_col, "malformed number");
	}
	if (tmp[i] == '.') {
		i++;
		if (!is_digit(tmp[i]))
			return fail(r, e, r->tok_line, r->tok_col, "malformed number");
		while (is_digit(tmp[i]))
			i++;
	}
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i++;
		if (tmp[i] == '+' || tmp[i] == '-')
			i++;
		if (!is_digit(tmp[i]))
			return fail(r, e, r->tok_line, r->tok_col, "malformed number");
		while (is_digit(tmp[i]))
			i++;
	}
	if (i != n)
		return fail(r, e, r->tok_line, r->tok_col, "malformed number");
	if (r->discard)
		return 0;
	int rc = str_grow(r, n, e);
	if (rc)
		return rc;
	memcpy(r->str, tmp, n + 1);
	r->str_len = n;
	return 0;
}

static int read_literal(struct json_reader *r, const char *word, struct err *e)
{
	for (const char *p = word; *p; p++) {
		int c = peekc(r);
		if (c != *p)
			return fail(r, e, r->tok_line, r->tok_col, "invalid literal");
		advance(r, c);
	}
	int c = peekc(r);
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c))
		return fail(r, e, r->tok_line, r->tok_col, "invalid literal");
	return 0;
}

static void after_value(struct json_reader *r)
{
	r->state = r->depth ? ST_COMMA_OR_END : ST_DONE;
}

static int push(struct json_reader *r, unsigned char kind, struct err *e)
{
	if (r->depth >= r->max_depth) {
		err_set(e, r->file, r->line, r->col, "nesting deeper than %d levels", r->max_depth);
		return -E2BIG;
	}
	advance(r, kind == 'o' ? '{' : '[');
	r->stack[r->depth++] = kind;
	r->state = kind == 'o' ? ST_KEY_OR_END : ST_VALUE_OR_END;
	return 0;
}

static void pop(struct json_reader *r, int c)
{
	advance(r, c);
	r->depth--;
	after_value(r);
}

static int read_value(struct json_reader *r, int c, enum json_tok *tok, struct err *e)
{
	int rc = 0;
	switch (c) {
	case '{':
		rc = push(r, 'o', e);
		*tok = JSON_OBJ_BEGIN;
		return rc;
	case '[':
		rc = push(r, 'a', e);
		*tok = JSON_ARR_BEGIN;
		return rc;
	case '"':
		rc = read_string(r, e);
		*tok = JSON_STRING;
		break;
	case 't':
		rc = read_literal(r, "true", e);
		*tok = JSON_TRUE;
		break;
	case 'f':
		rc = read_literal(r, "false", e);
		*tok = JSON_FALSE;
		break;
	case 'n':
		rc = read_literal(r, "null", e);
		*tok = JSON_NULL;
		break;
	default:
		if (c == '-' || is_digit(c)) {
			rc = read_number(r, e);
			*tok = JSON_NUMBER;
			break;
		}
		return describe_unexpected(r, e, c, "a value");
	}
	if (!rc)
		after_value(r);
	return rc;
}

/* A UTF-8 byte order mark before the document (editors on Windows write one). */
static int skip_bom(struct json_reader *r, struct err *e)
{
	r->started = true;
	if (peekc(r) != 0xef)
		return 0;
	static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
	for (int i = 0; i < 3; i++) {
		int c = peekc(r);
		if (c != bom[i])
			return describe_unexpected(r, e, c, "a value (a stray byte order mark?)");
		r->pos++;
	}
	return 0;
}

int json_next(struct json_reader *r, enum json_tok *tok, struct err *e)
{
	r->str_cut = false;
	if (!r->started) {
		int rc = skip_bom(r, e);
		if (rc)
			return rc;
	}
	for (;;) {
		skip_ws(r);
		int c = peekc(r);
		r->tok_line = r->line;
		r->tok_col = r->col;
		if (c < 0 && r->io_rc)
			return io_error(r, e);
		switch (r->state) {
		case ST_DONE:
			if (c < 0) {
				*tok = JSON_EOF;
				return 0;
			}
			return describe_unexpected(r, e, c, "the end of the document");
		case ST_COMMA_OR_END: {
			char close = r->stack[r->depth - 1] == 'o' ? '}' : ']';
			if (c == ',') {
				advance(r, c);
				r->state = r->stack[r->depth - 1] == 'o' ? ST_KEY : ST_VALUE;
				continue;
			}
			if (c == close) {
				pop(r, c);
				*tok = close == '}' ? JSON_OBJ_END : JSON_ARR_END;
				r->tokens++;
				return 0;
			}
			return describe_unexpected(r, e, c, close == '}' ? "',' or '}'" : "',' or ']'");
		}
		case ST_KEY_OR_END:
		case ST_KEY: {
			if (c == '}' && r->state == ST_KEY_OR_END) {
				pop(r, c);
				*tok = JSON_OBJ_END;
				r->tokens++;
				return 0;
			}
			if (c != '"')
				return describe_unexpected(r, e, c, "a string key");
			int rc = read_string(r, e);
			if (rc)
				return rc;
			skip_ws(r);
			c = peekc(r);
			if (c != ':')
				return describe_unexpected(r, e, c, "':' after the key");
			advance(r, c);
			r->state = ST_VALUE;
			*tok = JSON_KEY;
			r->tokens++;
			return 0;
		}
		case ST_VALUE_OR_END:
		case ST_VALUE:
		default: {
			if (c == ']' && r->state == ST_VALUE_OR_END) {
				pop(r, c);
				*tok = JSON_ARR_END;
				r->tokens++;
				return 0;
			}
			int rc = read_value(r, c, tok, e);
			if (!rc)
				r->tokens++;
			return rc;
		}
		}
	}
}

int json_skip(struct json_reader *r, enum json_tok first, struct err *e)
{
	if (first != JSON_OBJ_BEGIN && first != JSON_ARR_BEGIN)
		return 0;
	int target = r->depth - 1;
	bool was = r->discard;
	r->discard = true;
	int rc = 0;
	while (r->depth > target) {
		enum json_tok t;
		rc = json_next(r, &t, e);
		if (rc)
			break;
		if (t == JSON_EOF) {
			rc = fail_here(r, e, "unexpected end of file");
			break;
		}
	}
	r->discard = was;
	return rc;
}

int json_skip_value(struct json_reader *r, enum json_tok *tok, struct err *e)
{
	enum json_tok t;
	bool was = r->discard;
	r->discard = true;
	int rc = json_next(r, &t, e);
	r->discard = was;
	if (rc)
		return rc;
	if (tok)
		*tok = t;
	return json_skip(r, t, e);
}

/* The common case of trace timestamps, "1700000000123.456": digits, an optional fraction, no
 * exponent, at most 18 digits after scaling. false: leave it to the general routine. */
static bool parse_scaled_fast(const char *s, int scale, int64_t *out)
{
	const char *p = s;
	bool neg = *p == '-';
	if (neg)
		p++;
	if (!is_digit(*p) || scale < 0 || scale > 9)
		return false;
	int64_t v = 0;
	int digits = 0;
	for (; is_digit(*p); p++) {
		if (++digits + scale > 18)
			return false;
		v = v * 10 + (*p - '0');
	}
	int frac = 0;
	bool round_up = false;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return false;
		for (; is_digit(*p); p++) {
			if (frac < scale) {
				v = v * 10 + (*p - '0');
				frac++;
			} else if (frac == scale) {
				round_up = *p >= '5'; /* the first dropped digit decides */
				frac++;
			}
		}
	}
	if (*p)
		return false;
	for (int i = frac < scale ? frac : scale; i < scale; i++)
		v *= 10;
	if (round_up)
		v++;
	*out = neg ? -v : v;
	return true;
}

int json_parse_scaled(const char *s, int scale, int64_t *out)
{
	if (parse_scaled_fast(s, scale, out))
		return 0;
	const char *p = s;
	bool neg = false;
	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	/* significant digits (leading zeros dropped), and where the decimal point sits */
	char digits[40];
	int nd = 0, dropped = 0; /* dropped: significant digits beyond what we keep */
	int frac = 0;
	bool any = false, seen_point = false, nonzero_dropped = false;
	for (;; p++) {
		if (is_digit(*p)) {
			any = true;
			if (seen_point)
				frac++;
			if (nd == 0 && *p == '0')
				continue;
			if (nd < (int)sizeof digits) {
				digits[nd++] = *p;
			} else {
				dropped++;
				if (*p != '0')
					nonzero_dropped = true;
			}
		} else if (*p == '.' && !seen_point) {
			seen_point = true;
		} else {
			break;
		}
	}
	if (!any)
		return -EINVAL;
	long exp10 = 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		char *end;
		errno = 0;
		exp10 = strtol(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	if (*p)
		return -EINVAL;
	if (exp10 > 1000 || exp10 < -1000)
		return exp10 > 0 && nd ? -ERANGE : (*out = 0, 0);
	/* value = digits * 10^e */
	long e = exp10 + scale - frac + dropped;
	long keep = nd + e; /* digits left of the point after scaling */
	uint64_t v = 0;
	if (keep > 19 + 1)
		return nd ? -ERANGE : (*out = 0, 0);
	for (long i = 0; i < keep; i++) {
		int d = i < nd ? digits[i] - '0' : 0;
		if (v > (UINT64_MAX - (uint64_t)d) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)d;
	}
	/* round half away from zero on the first dropped digit */
	if (keep >= 0 && keep < nd && digits[keep] >= '5')
		v++;
	(void)nonzero_dropped;
	if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
		return -ERANGE;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int json_parse_i64(const char *s, int64_t *out)
{
	return json_parse_scaled(s, 0, out);
}

int json_parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}
