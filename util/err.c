#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_set(struct err *e, const char *file, int line, int col, const char *fmt, ...)
{
	if (!e)
		return;
	snprintf(e->file, sizeof e->file, "%s", file ? file : "");
	e->line = line;
	e->col = col;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}

const char *err_format(const struct err *e, char *buf, size_t n)
{
	if (e->file[0] && e->line > 0 && e->col > 0)
		snprintf(buf, n, "%s:%d:%d: error: %s", e->file, e->line, e->col, e->msg);
	else if (e->file[0] && e->line > 0)
		snprintf(buf, n, "%s:%d: error: %s", e->file, e->line, e->msg);
	else if (e->file[0])
		snprintf(buf, n, "%s: error: %s", e->file, e->msg);
	else
		snprintf(buf, n, "error: %s", e->msg);
	return buf;
}

/* Levenshtein distance, capped: words longer than 63 characters are never "typos". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return (size_t)-1;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *err_suggest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (size_t i = 0; candidates && candidates[i]; i++) {
		size_t d = edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	size_t len = strlen(word);
	size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	if (best_d <= limit)
		return best;
	/* A misspelt prefix of a longer key ("hiden" for "hidden_size"). */
	for (size_t i = 0; len >= 3 && candidates && candidates[i]; i++) {
		char head[64];
		size_t cl = strlen(candidates[i]);
		for (size_t take = len > 1 ? len - 1 : len; take <= len + 1 && take < sizeof head; take++) {
			if (take >= cl)
				break;
			memcpy(head, candidates[i], take);
			head[take] = '\0';
			if (edit_distance(word, head) <= 1)
				return candidates[i];
		}
	}
	return NULL;
}
