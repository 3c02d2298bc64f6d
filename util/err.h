#ifndef K3_UTIL_ERR_H
#define K3_UTIL_ERR_H

#include <stddef.h>

/* Errors are values. Functions return 0 or a negative errno-style code (-EINVAL, -ENOMEM, -ENOENT,
 * -EIO, -ERANGE) and, where they take a `struct err *`, fill it with where and why.
 * line and col are 1-based; 0 means "not known" (e.g. an error about a whole file). */
struct err {
	char file[256];
	int line;
	int col;
	char msg[512];
};

/* Record an error; `file` may be NULL. Later calls overwrite earlier ones. e may be NULL. */
void err_set(struct err *e, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* "file:line:col: error: msg" (omitting the parts not known) into buf; returns buf. */
const char *err_format(const struct err *e, char *buf, size_t n);

/* The closest of `candidates` (NULL-terminated) to `word` by edit distance, if close enough to be
 * a plausible typo; NULL otherwise. */
const char *err_suggest(const char *word, const char *const *candidates);

#endif
