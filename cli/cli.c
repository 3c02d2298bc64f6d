#include "cli/cli.h"

#include <math.h>
#include <string.h>

#include "util/numfmt.h"

void cli_error(const char *cmd, const struct err *e)
{
	char buf[1024];
	fprintf(stderr, "k3sim %s: %s\n", cmd, err_format(e, buf, sizeof buf));
}

const char *cli_bytes(double b, char *buf, size_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = 0;
	double v = b;
	while (fabs(v) >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, n, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
	return buf;
}

const char *cli_time(double s, char *buf, size_t n)
{
	if (s >= 1.0)
		snprintf(buf, n, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.2f ms", s * 1e3);
	else
		snprintf(buf, n, "%.2f us", s * 1e6);
	return buf;
}

const char *cli_count(double x, char *buf, size_t n)
{
	if (fabs(x) >= 1e12)
		snprintf(buf, n, "%.3f T", x / 1e12);
	else if (fabs(x) >= 1e9)
		snprintf(buf, n, "%.1f B", x / 1e9);
	else if (fabs(x) >= 1e6)
		snprintf(buf, n, "%.1f M", x / 1e6);
	else if (fabs(x) >= 1e3)
		snprintf(buf, n, "%.1f K", x / 1e3);
	else
		snprintf(buf, n, "%.0f", x);
	return buf;
}

bool cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void jw_init(struct jw *w, FILE *out)
{
	memset(w, 0, sizeof *w);
	w->out = out;
}

static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void prefix(struct jw *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputc(',', w->out);
	w->need_comma[w->depth] = true;
	if (w->depth > 0) {
		fputc('\n', w->out);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->out);
	}
	if (key) {
		put_string(w->out, key);
		fputs(": ", w->out);
	}
}

static void open_(struct jw *w, const char *key, char c)
{
	prefix(w, key);
	fputc(c, w->out);
	if (w->depth < 31)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(struct jw *w, char c)
{
	bool had = w->need_comma[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (had) {
		fputc('\n', w->out);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->out);
	}
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
	put_string(w->out, v);
}
void jw_i64(struct jw *w, const char *key, int64_t v)
{
	prefix(w, key);
	fprintf(w->out, "%lld", (long long)v);
}
void jw_f64(struct jw *w, const char *key, double v)
{
	prefix(w, key);
	util_json_double(w->out, v); /* full precision; null when not finite */
}
void jw_bool(struct jw *w, const char *key, bool v)
{
	prefix(w, key);
	fputs(v ? "true" : "false", w->out);
}
void jw_finish(struct jw *w)
{
	fputc('\n', w->out);
}
