#include "util/jsonw.h"

#include <math.h>

#include "util/numfmt.h"

int util_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	int n;
	unsigned char lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void util_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc(c, f);
			p++;
		} else {
			int n = util_utf8_len(p);
			if (n > 0) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fputs("\xef\xbf\xbd", f);
				p++;
			}
		}
	}
	fputc('"', f);
}

const struct jw_style jw_style_pretty = {.wrap_depth = JW_MAX_DEPTH, .colon = ": "};

void jw_init_style(struct jw *w, FILE *out, const struct jw_style *style)
{
	*w = (struct jw){.out = out, .style = *style};
}

void jw_init(struct jw *w, FILE *out)
{
	jw_init_style(w, out, &jw_style_pretty);
}

static void newline(struct jw *w)
{
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

static void prefix(struct jw *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputc(',', w->out);
	w->need_comma[w->depth] = true;
	if (w->depth <= w->style.wrap_depth && (w->depth > 0 || w->style.wrap_top))
		newline(w);
	if (key) {
		util_json_str(w->out, key);
		fputs(w->style.colon, w->out);
	}
}

static void open_(struct jw *w, const char *key, char c)
{
	prefix(w, key);
	fputc(c, w->out);
	if (w->depth < JW_MAX_DEPTH)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(struct jw *w, char c)
{
	bool had = w->need_comma[w->depth];
	bool wrapped = w->depth <= w->style.wrap_depth;
	if (w->depth > 0)
		w->depth--;
	if (had && wrapped)
		newline(w);
	fputc(c, w->out);
}

void jw_begin_object(struct jw *w, const char *key)
{
	open_(w, key, '{');
}

void jw_end_object(struct jw *w)
{
	close_(w, '}');
}

void jw_begin_array(struct jw *w, const char *key)
{
	open_(w, key, '[');
}

void jw_end_array(struct jw *w)
{
	close_(w, ']');
}

void jw_str(struct jw *w, const char *key, const char *v)
{
	prefix(w, key);
	util_json_str(w->out, v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	prefix(w, key);
	fprintf(w->out, "%lld", (long long)v);
}

void jw_f64(struct jw *w, const char *key, double v)
{
	prefix(w, key);
	if (w->style.number_digits <= 0)
		util_json_double(w->out, v); /* null when not finite */
	else if (isfinite(v))
		fprintf(w->out, "%.*g", w->style.number_digits, v);
	else
		fputs("null", w->out);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	prefix(w, key);
	fputs(v ? "true" : "false", w->out);
}

void jw_null(struct jw *w, const char *key)
{
	prefix(w, key);
	fputs("null", w->out);
}

void jw_finish(struct jw *w)
{
	fputc('\n', w->out);
}
