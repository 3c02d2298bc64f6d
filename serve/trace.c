/* Request traces: k3sim's JSONL and CSV, Mooncake's JSONL (FAST'25 traces: timestamp in ms,
 * input_length, output_length, hash_ids of 512-token blocks) and Azure's LLM inference CSV
 * (TIMESTAMP as a date and time, ContextTokens, GeneratedTokens). Read line by line with a bounded
 * line; every error names file:line:col. docs/SERVING.md, section 1, lists the keys. */
#include "serve/serve.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/rng.h"

/* ---- lines from memory or a file ---- */

struct src {
	const char *name;
	FILE *f;
	const char *mem;
	size_t mem_len, mem_pos;
	char *buf;
	size_t cap;
	int line;
};

/* The next line (without its newline or a trailing CR) in *p / *n: 1, 0 at the end, or -E2BIG. */
static int next_line(struct src *s, const char **p, size_t *n, struct err *e)
{
	if (!s->f) {
		if (s->mem_pos >= s->mem_len)
			return 0;
		const char *start = s->mem + s->mem_pos;
		const char *nl = memchr(start, '\n', s->mem_len - s->mem_pos);
		size_t len = nl ? (size_t)(nl - start) : s->mem_len - s->mem_pos;
		s->mem_pos += len + (nl ? 1 : 0);
		s->line++;
		if (len > SERVE_TRACE_MAX_LINE) {
			err_set(e, s->name, s->line, 0, "line longer than %d bytes", SERVE_TRACE_MAX_LINE);
			return -E2BIG;
		}
		if (len && start[len - 1] == '\r')
			len--;
		*p = start;
		*n = len;
		return 1;
	}
	size_t len = 0;
	int ch;
	bool any = false;
	while ((ch = getc(s->f)) != EOF) {
		any = true;
		if (ch == '\n')
			break;
		if (len + 1 >= s->cap) {
			if (s->cap >= SERVE_TRACE_MAX_LINE) {
				err_set(e, s->name, s->line + 1, 0, "line longer than %d bytes", SERVE_TRACE_MAX_LINE);
				return -E2BIG;
			}
			size_t nc = s->cap ? s->cap * 2 : 4096;
			char *b = realloc(s->buf, nc);
			if (!b) {
				err_set(e, s->name, s->line + 1, 0, "out of memory");
				return -ENOMEM;
			}
			s->buf = b;
			s->cap = nc;
		}
		s->buf[len++] = (char)ch;
	}
	if (!any)
		return ferror(s->f) ? (err_set(e, s->name, s->line, 0, "read error"), -EIO) : 0;
	s->line++;
	if (len && s->buf[len - 1] == '\r')
		len--;
	*p = s->buf ? s->buf : "";
	*n = len;
	return 1;
}

/* ---- what a line gives ---- */

struct fields {
	bool has_arrival, has_prompt, has_output;
	double arrival_s;
	int64_t prompt, output, images, image_px, video_frames, video_px, turn, prefix_tokens;
	bool has_conv, has_prefix;
	uint64_t conv, prefix;
	int64_t ids_off, n_ids;
	int arrival_col, prompt_col; /* where they were, for errors */
};

struct parser {
	struct serve_workload *w;
	int64_t cap_req, cap_ids;
	int64_t *ids_off; /* per request, while parsing */
	struct src *s;
	struct err *e;
	double time_scale;
};

static int perr(struct parser *ps, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct parser *ps, int col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_set(ps->e, ps->s->name, ps->s->line, col, "%s", msg);
	return -EINVAL;
}

static int push_id(struct parser *ps, uint64_t id, int col)
{
	struct serve_workload *w = ps->w;
	if (w->n_ids == ps->cap_ids) {
		if (ps->cap_ids >= SERVE_MAX_IDS)
			return perr(ps, col, "more than %d hash ids in the trace", SERVE_MAX_IDS);
		int64_t nc = ps->cap_ids ? ps->cap_ids * 2 : 4096;
		if (nc > SERVE_MAX_IDS)
			nc = SERVE_MAX_IDS;
		uint64_t *p = realloc(w->ids, (size_t)nc * sizeof *p);
		if (!p)
			return perr(ps, col, "out of memory");
		w->ids = p;
		ps->cap_ids = nc;
	}
	w->ids[w->n_ids++] = id;
	return 0;
}

/* An integer in [0, 2^40] from text (digits only, or a number with an integral value). */
static bool parse_count(const char *p, size_t n, int64_t *out)
{
	char tmp[64];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, p, n);
	tmp[n] = 0;
	char *end;
	double v = strtod(tmp, &end);
	if (*end || !(v >= 0 && v <= (double)(INT64_C(1) << 40)) || v != floor(v))
		return false;
	*out = (int64_t)v;
	return true;
}

static bool parse_real(const char *p, size_t n, double *out)
{
	char tmp[64];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, p, n);
	tmp[n] = 0;
	char *end;
	double v = strtod(tmp, &end);
	if (*end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* "YYYY-MM-DD HH:MM:SS[.frac]" (or with 'T') as seconds since 1970 (proleptic Gregorian, UTC). */
static bool parse_datetime(const char *p, size_t n, double *out)
{
	int y, mo, d, h, mi;
	double sec;
	char buf[64];
	if (n < 19 || n >= sizeof buf)
		return false;
	memcpy(buf, p, n);
	buf[n] = 0;
	if (buf[10] == 'T')
		buf[10] = ' ';
	int used = 0;
	if (sscanf(buf, "%4d-%2d-%2d %2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 || (size_t)used != n)
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || !(sec >= 0 && sec < 61))
		return false;
	/* days from civil (H. Hinnant) */
	int64_t yy = y - (mo <= 2);
	int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
	int64_t yoe = yy - era * 400;
	int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;
	*out = (double)days * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
	return true;
}

static uint64_t hash_text(const char *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * UINT64_C(0x100000001b3);
	return serve_mix(h, n);
}

/* Adds the line's request. */
static int add_request(struct parser *ps, const struct fields *f)
{
	struct serve_workload *w = ps->w;
	if (!f->has_arrival)
		return perr(ps, 0, "no arrival time (arrival_s, timestamp or TIMESTAMP)");
	if (!f->has_prompt)
		return perr(ps, 0, "no prompt length (prompt_tokens, input_length or ContextTokens)");
	if (!f->has_output)
		return perr(ps, 0, "no output length (output_tokens, output_length or GeneratedTokens)");
	if (f->prompt < 1 && f->images == 0 && f->video_frames == 0)
		return perr(ps, f->prompt_col, "prompt length 0");
	if (w->n == ps->cap_req) {
		if (ps->cap_req >= SERVE_MAX_REQUESTS)
			return perr(ps, 0, "more than %d requests", SERVE_MAX_REQUESTS);
		int64_t nc = ps->cap_req ? ps->cap_req * 2 : 1024;
		struct serve_request *r = realloc(w->req, (size_t)nc * sizeof *r);
		int64_t *o = realloc(ps->ids_off, (size_t)nc * sizeof *o);
		if (r)
			w->req = r;
		if (o)
			ps->ids_off = o;
		if (!r || !o)
			return perr(ps, 0, "out of memory");
		ps->cap_req = nc;
	}
	struct serve_request *q = &w->req[w->n];
	memset(q, 0, sizeof *q);
	q->arrival_s = f->arrival_s;
	q->prompt_tokens = f->prompt;
	q->output_tokens = f->output < 1 ? 1 : f->output;
	q->images = (int32_t)f->images;
	q->image_px = (int32_t)f->image_px;
	q->video_frames = (int32_t)f->video_frames;
	q->video_px = (int32_t)f->video_px;
	q->vision_tokens = serve_vision_tokens(f->images, f->image_px, f->video_frames, f->video_px);
	q->conversation = f->has_conv ? (int64_t)(f->conv >> 1) : -1;
	q->turn = (int32_t)f->turn;
	q->after = -1;
	q->line = ps->s->line;
	q->seg_id[0] = f->has_prefix ? serve_mix(UINT64_C(0x9e3f), f->prefix) : 0;
	q->seg_tokens = f->has_prefix ? f->prefix_tokens : 0;
	/* beyond the explicit ids and the shared prefix: the conversation's or the request's own */
	q->seg_id[1] = f->has_conv ? serve_mix(UINT64_C(0xc0417), f->conv) : serve_mix(UINT64_C(0x7e9), (uint64_t)w->n);
	q->n_ids = (int32_t)f->n_ids;
	ps->ids_off[w->n] = f->ids_off;
	w->n++;
	return 0;
}

/* ---- JSON lines ---- */

struct js {
	const char *p, *end, *start;
};

static void ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
		j->p++;
}

static int col(const struct js *j)
{
	return (int)(j->p - j->start) + 1;
}

/* A JSON string; its raw text (escapes kept) in *s, *n. */
static int jstring(struct parser *ps, struct js *j, const char **s, size_t *n)
{
	if (j->p >= j->end || *j->p != '"')
		return perr(ps, col(j), "expected a string");
	const char *b = ++j->p;
	while (j->p < j->end && *j->p != '"') {
		if (*j->p == '\\') {
			j->p++;
			if (j->p >= j->end)
				break;
		} else if ((unsigned char)*j->p < 0x20) {
			return perr(ps, col(j), "control character in a string");
		}
		j->p++;
	}
	if (j->p >= j->end)
		return perr(ps, (int)(b - j->start), "unterminated string");
	*s = b;
	*n = (size_t)(j->p - b);
	j->p++;
	return 0;
}

/* A number's text. */
static int jnumber(struct parser *ps, struct js *j, const char **s, size_t *n)
{
	const char *b = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	while (j->p < j->end && (isdigit((unsigned char)*j->p) || *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
				 *j->p == '+' || *j->p == '-'))
		j->p++;
	if (j->p == b)
		return perr(ps, col(j), "expected a value");
	*s = b;
	*n = (size_t)(j->p - b);
	return 0;
}

static int jskip(struct parser *ps, struct js *j, int depth)
{
	if (depth > 32)
		return perr(ps, col(j), "nested deeper than 32");
	ws(j);
	if (j->p >= j->end)
		return perr(ps, col(j), "expected a value");
	const char *s;
	size_t n;
	char c = *j->p;
	if (c == '"')
		return jstring(ps, j, &s, &n);
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		for (;;) {
			int rc;
			if (c == '{') {
				ws(j);
				if ((rc = jstring(ps, j, &s, &n)) < 0)
					return rc;
				ws(j);
				if (j->p >= j->end || *j->p != ':')
					return perr(ps, col(j), "expected ':'");
				j->p++;
			}
			if ((rc = jskip(ps, j, depth + 1)) < 0)
				return rc;
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == close) {
				j->p++;
				return 0;
			}
			return perr(ps, col(j), "expected ',' or '%c'", close);
		}
	}
	static const char *const words[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t wl = strlen(words[i]);
		if ((size_t)(j->end - j->p) >= wl && memcmp(j->p, words[i], wl) == 0) {
			j->p += wl;
			return 0;
		}
	}
	return jnumber(ps, j, &s, &n);
}

enum key {
	K_ARRIVAL_S,
	K_TIMESTAMP_MS,
	K_PROMPT,
	K_OUTPUT,
	K_HASH_IDS,
	K_IMAGES,
	K_IMAGE_PX,
	K_VIDEO_FRAMES,
	K_VIDEO_PX,
	K_CONV,
	K_TURN,
	K_PREFIX_ID,
	K_PREFIX_TOKENS,
	K_UNKNOWN
};

static const struct {
	const char *name;
	enum key key;
} json_keys[] = {
	{"arrival_s", K_ARRIVAL_S},       {"timestamp", K_TIMESTAMP_MS},     {"prompt_tokens", K_PROMPT},
	{"input_length", K_PROMPT},       {"output_tokens", K_OUTPUT},       {"output_length", K_OUTPUT},
	{"hash_ids", K_HASH_IDS},         {"images", K_IMAGES},              {"image_px", K_IMAGE_PX},
	{"video_frames", K_VIDEO_FRAMES}, {"video_px", K_VIDEO_PX},          {"conversation", K_CONV},
	{"session_id", K_CONV},           {"turn", K_TURN},                  {"prefix_id", K_PREFIX_ID},
	{"prefix_tokens", K_PREFIX_TOKENS},
};

static enum key lookup_key(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof json_keys / sizeof json_keys[0]; i++)
		if (strlen(json_keys[i].name) == n && memcmp(json_keys[i].name, s, n) == 0)
			return json_keys[i].key;
	return K_UNKNOWN;
}

static int int_value(struct parser *ps, struct js *j, const char *what, int64_t max, int64_t *out)
{
	const char *s;
	size_t n;
	int c0 = col(j), rc = jnumber(ps, j, &s, &n);
	if (rc < 0)
		return rc;
	if (!parse_count(s, n, out) || *out > max)
		return perr(ps, c0, "%s: '%.*s' is not an integer in [0, %lld]", what, (int)(n > 40 ? 40 : n), s,
			    (long long)max);
	return 0;
}

/* An id: an integer or a string. */
static int id_value(struct parser *ps, struct js *j, const char *what, uint64_t *out)
{
	const char *s;
	size_t n;
	int c0 = col(j), rc;
	if (j->p < j->end && *j->p == '"') {
		if ((rc = jstring(ps, j, &s, &n)) < 0)
			return rc;
		*out = hash_text(s, n);
		return 0;
	}
	int64_t v;
	if ((rc = jnumber(ps, j, &s, &n)) < 0)
		return rc;
	if (!parse_count(s, n, &v))
		return perr(ps, c0, "%s: '%.*s' is neither a string nor an integer in [0, 2^40]", what,
			    (int)(n > 40 ? 40 : n), s);
	*out = (uint64_t)v;
	return 0;
}

static int json_line(struct parser *ps, const char *line, size_t len)
{
	struct js j = {.p = line, .end = line + len, .start = line};
	ws(&j);
	if (j.p == j.end)
		return 0; /* a blank line */
	if (*j.p != '{')
		return perr(ps, col(&j), "expected a JSON object ('{')");
	j.p++;
	struct fields f = {.ids_off = ps->w->n_ids};
	bool seen[K_UNKNOWN] = {false};
	ws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
		goto done;
	}
	for (;;) {
		ws(&j);
		const char *k;
		size_t kn;
		int kcol = col(&j), rc;
		if ((rc = jstring(ps, &j, &k, &kn)) < 0)
			return rc;
		ws(&j);
		if (j.p >= j.end || *j.p != ':')
			return perr(ps, col(&j), "expected ':'");
		j.p++;
		ws(&j);
		enum key key = lookup_key(k, kn);
		if (key != K_UNKNOWN) {
			if (seen[key] || ((key == K_ARRIVAL_S || key == K_TIMESTAMP_MS) && f.has_arrival))
				return perr(ps, kcol, "'%.*s' given twice (or with another name)", (int)kn, k);
			seen[key] = true;
		}
		int vcol = col(&j);
		int64_t v = 0;
		const char *s;
		size_t n;
		switch (key) {
		case K_ARRIVAL_S:
		case K_TIMESTAMP_MS: {
			if ((rc = jnumber(ps, &j, &s, &n)) < 0)
				return rc;
			double t;
			if (!parse_real(s, n, &t) || t < 0 || t > 1e13)
				return perr(ps, vcol, "'%.*s': '%.*s' is not a time", (int)kn, k, (int)(n > 40 ? 40 : n), s);
			f.arrival_s = key == K_TIMESTAMP_MS ? t / 1e3 : t;
			f.has_arrival = true;
			f.arrival_col = vcol;
			break;
		}
		case K_PROMPT:
			if ((rc = int_value(ps, &j, "prompt length", INT64_C(1) << 32, &f.prompt)) < 0)
				return rc;
			f.has_prompt = true;
			f.prompt_col = vcol;
			break;
		case K_OUTPUT:
			if ((rc = int_value(ps, &j, "output length", INT64_C(1) << 32, &f.output)) < 0)
				return rc;
			f.has_output = true;
			break;
		case K_IMAGES:
			if ((rc = int_value(ps, &j, "images", 64, &f.images)) < 0)
				return rc;
			break;
		case K_IMAGE_PX:
			if ((rc = int_value(ps, &j, "image_px", 3584, &f.image_px)) < 0)
				return rc;
			break;
		case K_VIDEO_FRAMES:
			if ((rc = int_value(ps, &j, "video_frames", 4096, &f.video_frames)) < 0)
				return rc;
			break;
		case K_VIDEO_PX:
			if ((rc = int_value(ps, &j, "video_px", 3584, &f.video_px)) < 0)
				return rc;
			break;
		case K_TURN:
			if ((rc = int_value(ps, &j, "turn", 1 << 30, &f.turn)) < 0)
				return rc;
			break;
		case K_PREFIX_TOKENS:
			if ((rc = int_value(ps, &j, "prefix_tokens", INT64_C(1) << 32, &f.prefix_tokens)) < 0)
				return rc;
			break;
		case K_CONV:
			if ((rc = id_value(ps, &j, "conversation", &f.conv)) < 0)
				return rc;
			f.has_conv = true;
			break;
		case K_PREFIX_ID:
			if ((rc = id_value(ps, &j, "prefix_id", &f.prefix)) < 0)
				return rc;
			f.has_prefix = true;
			break;
		case K_HASH_IDS:
			if (j.p >= j.end || *j.p != '[')
				return perr(ps, vcol, "hash_ids: expected an array of integers");
			j.p++;
			ws(&j);
			if (j.p < j.end && *j.p == ']') {
				j.p++;
				break;
			}
			for (;;) {
				ws(&j);
				int icol = col(&j);
				if (j.p >= j.end || !isdigit((unsigned char)*j.p))
					return perr(ps, icol, "hash_ids: expected a non-negative integer");
				if ((rc = jnumber(ps, &j, &s, &n)) < 0)
					return rc;
				if (!parse_count(s, n, &v))
					return perr(ps, icol, "hash_ids: '%.*s' is not an integer in [0, 2^40]",
						    (int)(n > 40 ? 40 : n), s);
				if ((rc = push_id(ps, serve_mix(UINT64_C(0x1d5), (uint64_t)v), icol)) < 0)
					return rc;
				f.n_ids++;
				if (f.n_ids > INT32_MAX / 2)
					return perr(ps, icol, "hash_ids: too many");
				ws(&j);
				if (j.p < j.end && *j.p == ',') {
					j.p++;
					continue;
				}
				if (j.p < j.end && *j.p == ']') {
					j.p++;
					break;
				}
				return perr(ps, col(&j), "hash_ids: expected ',' or ']'");
			}
			break;
		case K_UNKNOWN:
			if ((rc = jskip(ps, &j, 0)) < 0)
				return rc;
			break;
		}
		ws(&j);
		if (j.p < j.end && *j.p == ',') {
			j.p++;
			continue;
		}
		if (j.p < j.end && *j.p == '}') {
			j.p++;
			break;
		}
		return perr(ps, col(&j), "expected ',' or '}'");
	}
done:
	ws(&j);
	if (j.p != j.end)
		return perr(ps, col(&j), "text after the object");
	if (f.has_prefix != (f.prefix_tokens > 0))
		return perr(ps, 0, "prefix_id and prefix_tokens go together");
	return add_request(ps, &f);
}

/* ---- CSV ---- */

enum { CSV_MAX_COLS = 32 };

static const struct {
	const char *name;
	enum key key;
} csv_cols[] = {
	{"arrival_s", K_ARRIVAL_S},       {"timestamp", K_ARRIVAL_S},        {"prompt_tokens", K_PROMPT},
	{"contexttokens", K_PROMPT},      {"output_tokens", K_OUTPUT},       {"generatedtokens", K_OUTPUT},
	{"images", K_IMAGES},             {"image_px", K_IMAGE_PX},          {"video_frames", K_VIDEO_FRAMES},
	{"video_px", K_VIDEO_PX},         {"conversation", K_CONV},          {"turn", K_TURN},
	{"prefix_id", K_PREFIX_ID},       {"prefix_tokens", K_PREFIX_TOKENS},
};

struct csv {
	enum key col[CSV_MAX_COLS];
	int n;
};

/* Splits a CSV line (no quotes inside fields except around a whole field) into fields. */
static int split_csv(struct parser *ps, const char *line, size_t len, const char **f, size_t *fn, int *fcol,
		     int cap)
{
	int n = 0;
	size_t i = 0;
	for (;;) {
		if (n == cap)
			return perr(ps, (int)i + 1, "more than %d columns", cap);
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		size_t b = i;
		if (i < len && line[i] == '"') {
			b = ++i;
			while (i < len && line[i] != '"')
				i++;
			if (i >= len)
				return perr(ps, (int)b, "unterminated quote");
			f[n] = line + b;
			fn[n] = i - b;
			fcol[n] = (int)b;
			i++;
			while (i < len && (line[i] == ' ' || line[i] == '\t'))
				i++;
		} else {
			while (i < len && line[i] != ',')
				i++;
			size_t e2 = i;
			while (e2 > b && (line[e2 - 1] == ' ' || line[e2 - 1] == '\t'))
				e2--;
			f[n] = line + b;
			fn[n] = e2 - b;
			fcol[n] = (int)b + 1;
		}
		n++;
		if (i >= len)
			return n;
		if (line[i] != ',')
			return perr(ps, (int)i + 1, "expected ','");
		i++;
	}
}

static int csv_header(struct parser *ps, struct csv *c, const char *line, size_t len)
{
	const char *f[CSV_MAX_COLS];
	size_t fn[CSV_MAX_COLS];
	int fc[CSV_MAX_COLS];
	int n = split_csv(ps, line, len, f, fn, fc, CSV_MAX_COLS);
	if (n < 0)
		return n;
	static const char *names[sizeof csv_cols / sizeof csv_cols[0] + 1];
	for (size_t i = 0; i < sizeof csv_cols / sizeof csv_cols[0]; i++)
		names[i] = csv_cols[i].name;
	bool seen[K_UNKNOWN] = {false};
	for (int i = 0; i < n; i++) {
		char name[64];
		if (fn[i] >= sizeof name)
			return perr(ps, fc[i], "column name too long");
		for (size_t k = 0; k < fn[i]; k++)
			name[k] = (char)tolower((unsigned char)f[i][k]);
		name[fn[i]] = 0;
		enum key key = K_UNKNOWN;
		for (size_t k = 0; k < sizeof csv_cols / sizeof csv_cols[0]; k++)
			if (strcmp(csv_cols[k].name, name) == 0)
				key = csv_cols[k].key;
		if (key == K_UNKNOWN) {
			const char *sug = err_suggest(name, names);
			if (sug)
				return perr(ps, fc[i], "unknown column '%s' (did you mean '%s'?)", name, sug);
			return perr(ps, fc[i], "unknown column '%s' (k3sim: arrival_s, prompt_tokens, output_tokens, ...; "
					       "Azure: TIMESTAMP, ContextTokens, GeneratedTokens)", name);
		}
		if (seen[key])
			return perr(ps, fc[i], "column '%s' given twice (or with another name)", name);
		seen[key] = true;
		c->col[i] = key;
	}
	c->n = n;
	if (!seen[K_ARRIVAL_S] || !seen[K_PROMPT] || !seen[K_OUTPUT])
		return perr(ps, 1, "the header needs an arrival time, a prompt and an output length (arrival_s, "
				   "prompt_tokens, output_tokens; or Azure's TIMESTAMP, ContextTokens, GeneratedTokens)");
	return 0;
}

static int csv_row(struct parser *ps, const struct csv *c, const char *line, size_t len)
{
	size_t k = 0;
	while (k < len && (line[k] == ' ' || line[k] == '\t'))
		k++;
	if (k == len)
		return 0;
	const char *f[CSV_MAX_COLS];
	size_t fn[CSV_MAX_COLS];
	int fc[CSV_MAX_COLS];
	int n = split_csv(ps, line, len, f, fn, fc, CSV_MAX_COLS);
	if (n < 0)
		return n;
	if (n != c->n)
		return perr(ps, 0, "%d fields, the header has %d", n, c->n);
	struct fields x = {.ids_off = ps->w->n_ids};
	for (int i = 0; i < n; i++) {
		int64_t v = 0;
		const char *what = "value";
		int64_t max = INT64_C(1) << 32;
		int64_t *dst = NULL;
		switch (c->col[i]) {
		case K_ARRIVAL_S:
			if (!parse_real(f[i], fn[i], &x.arrival_s) && !parse_datetime(f[i], fn[i], &x.arrival_s))
				return perr(ps, fc[i], "'%.*s' is neither seconds nor a date and time (YYYY-MM-DD HH:MM:SS.f)",
					    (int)(fn[i] > 40 ? 40 : fn[i]), f[i]);
			if (!(x.arrival_s >= 0))
				return perr(ps, fc[i], "negative time");
			x.has_arrival = true;
			continue;
		case K_CONV:
			if (fn[i] == 0)
				continue;
			x.conv = parse_count(f[i], fn[i], &v) ? (uint64_t)v : hash_text(f[i], fn[i]);
			x.has_conv = true;
			continue;
		case K_PREFIX_ID:
			if (fn[i] == 0)
				continue;
			x.prefix = parse_count(f[i], fn[i], &v) ? (uint64_t)v : hash_text(f[i], fn[i]);
			x.has_prefix = true;
			continue;
		case K_PROMPT:
			dst = &x.prompt, what = "prompt length", x.has_prompt = true, x.prompt_col = fc[i];
			break;
		case K_OUTPUT:
			dst = &x.output, what = "output length", x.has_output = true;
			break;
		case K_IMAGES:
			dst = &x.images, what = "images", max = 64;
			break;
		case K_IMAGE_PX:
			dst = &x.image_px, what = "image_px", max = 3584;
			break;
		case K_VIDEO_FRAMES:
			dst = &x.video_frames, what = "video_frames", max = 4096;
			break;
		case K_VIDEO_PX:
			dst = &x.video_px, what = "video_px", max = 3584;
			break;
		case K_TURN:
			dst = &x.turn, what = "turn", max = 1 << 30;
			break;
		case K_PREFIX_TOKENS:
			dst = &x.prefix_tokens, what = "prefix_tokens";
			break;
		default:
			continue;
		}
		if (fn[i] == 0 && c->col[i] != K_PROMPT && c->col[i] != K_OUTPUT)
			continue;
		if (!parse_count(f[i], fn[i], &v) || v > max)
			return perr(ps, fc[i], "%s: '%.*s' is not an integer in [0, %lld]", what, (int)(fn[i] > 40 ? 40 : fn[i]),
				    f[i], (long long)max);
		*dst = v;
	}
	if (x.has_prefix != (x.prefix_tokens > 0))
		return perr(ps, 0, "prefix_id and prefix_tokens go together");
	return add_request(ps, &x);
}

/* ---- the file ---- */

static int parse(struct serve_workload *w, struct src *s, enum serve_trace_format fmt, double time_scale,
		 struct err *e)
{
	memset(w, 0, sizeof *w);
	struct parser ps = {.w = w, .s = s, .e = e, .time_scale = time_scale};
	struct csv csv = {.n = 0};
	bool header = false;
	int rc = 0;
	const char *line;
	size_t len;
	enum serve_trace_format f = fmt;
	while ((rc = next_line(s, &line, &len, e)) > 0) {
		if (f == SERVE_TRACE_AUTO) {
			size_t k = 0;
			while (k < len && isspace((unsigned char)line[k]))
				k++;
			if (k == len)
				continue;
			f = line[k] == '{' || line[k] == '[' ? SERVE_TRACE_JSONL : SERVE_TRACE_CSV;
		}
		if (f == SERVE_TRACE_JSONL) {
			rc = json_line(&ps, line, len);
		} else if (!header) {
			size_t k = 0;
			while (k < len && isspace((unsigned char)line[k]))
				k++;
			if (k == len)
				continue;
			rc = csv_header(&ps, &csv, line, len);
			header = true;
		} else {
			rc = csv_row(&ps, &csv, line, len);
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && w->n == 0) {
		err_set(e, s->name, s->line, 0, "no request in the trace");
		rc = -EINVAL;
	}
	if (rc < 0) {
		free(ps.ids_off);
		serve_workload_release(w);
		return rc;
	}
	double t0 = INFINITY;
	for (int64_t i = 0; i < w->n; i++)
		t0 = fmin(t0, w->req[i].arrival_s);
	for (int64_t i = 0; i < w->n; i++) {
		w->req[i].arrival_s = (w->req[i].arrival_s - t0) * time_scale;
		w->req[i].ids = w->req[i].n_ids ? w->ids + ps.ids_off[i] : NULL;
	}
	free(ps.ids_off);
	snprintf(w->source, sizeof w->source, "trace %s (%s), %lld requests", s->name,
		 f == SERVE_TRACE_JSONL ? "JSON lines" : "CSV", (long long)w->n);
	return 0;
}

int serve_trace_parse(struct serve_workload *w, const char *name, const char *text, size_t len_bytes,
		      enum serve_trace_format f, double time_scale, struct err *e)
{
	struct src s = {.name = name, .mem = text, .mem_len = len_bytes};
	return parse(w, &s, f, time_scale, e);
}

int serve_trace_load(struct serve_workload *w, const char *path, enum serve_trace_format f, double time_scale,
		     struct err *e)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		memset(w, 0, sizeof *w);
		return -ENOENT;
	}
	struct src s = {.name = path, .f = fp};
	int rc = parse(w, &s, f, time_scale, e);
	free(s.buf);
	fclose(fp);
	return rc;
}
