#ifndef K3_UTIL_DOC_H
#define K3_UTIL_DOC_H

/* A YAML or JSON document (libyaml reads both) as a tree of nodes that remember where they came
 * from, so every error about the content can say file:line:col. Loading is bounded: input size,
 * node count and nesting depth are capped, and aliases are rejected (they would let a small file
 * expand without limit). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

enum doc_kind { DOC_SCALAR, DOC_SEQ, DOC_MAP };

struct doc_node {
	enum doc_kind kind;
	int line, col;          /* 1-based position where the node starts */
	const char *str;        /* DOC_SCALAR: the value, NUL-terminated, never NULL */
	size_t len;             /* DOC_SCALAR: length of str in bytes */
	bool plain;             /* DOC_SCALAR: unquoted, so null/true/1e3 carry meaning */
	size_t n;               /* DOC_SEQ: items; DOC_MAP: key/value pairs */
	struct doc_node **items; /* DOC_SEQ: n items; DOC_MAP: 2n nodes, key then value */
};

struct doc {
	char file[256];        /* the name errors carry */
	struct doc_node *root; /* NULL when the document is empty */
	struct arena arena;    /* owns every node and string */
};

enum {
	DOC_MAX_INPUT_BYTES = 64 * 1024 * 1024,
	DOC_MAX_NODES = 4 * 1024 * 1024,
	DOC_MAX_DEPTH = 64,
};

/* Parse. On failure d is left released and e says where and why. */
int doc_load_file(struct doc *d, const char *path, struct err *e);
int doc_load_string(struct doc *d, const char *name, const char *text, size_t len_bytes,
		    struct err *e);
void doc_release(struct doc *d);
/* The whole file, NUL-terminated, in a malloc'd buffer the caller frees (capped at
 * DOC_MAX_INPUT_BYTES). *out is untouched on failure. */
int doc_read_file(const char *path, char **out, size_t *len_bytes, struct err *e);

/* Map lookup by key (first match); NULL when absent or when map is not a map. */
const struct doc_node *doc_get(const struct doc_node *map, const char *key);
static inline const struct doc_node *doc_key(const struct doc_node *map, size_t i)
{
	return map->items[2 * i];
}
static inline const struct doc_node *doc_value(const struct doc_node *map, size_t i)
{
	return map->items[2 * i + 1];
}

/* Record an error located at node n (or at the file when n is NULL); returns -EINVAL. */
int doc_error(const struct doc *d, const struct doc_node *n, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Typed reads: on a type mismatch they fail with "<what>: expected ..., got '...'" at the node,
 * leaving *out untouched. `what` names the field for the message (e.g. "tp"). */
int doc_expect(const struct doc *d, const struct doc_node *n, enum doc_kind kind, const char *what,
	       struct err *e);
int doc_i64(const struct doc *d, const struct doc_node *n, const char *what, int64_t *out,
	    struct err *e);
int doc_double(const struct doc *d, const struct doc_node *n, const char *what, double *out,
	       struct err *e);
int doc_bool(const struct doc *d, const struct doc_node *n, const char *what, bool *out,
	     struct err *e);
int doc_str(const struct doc *d, const struct doc_node *n, const char *what, const char **out,
	    struct err *e);
bool doc_is_null(const struct doc_node *n);

/* Every key of `map` must be one of `allowed` (NULL-terminated) and appear once; an unknown key
 * gets "unknown key 'tp_sise' (did you mean 'tp_size'?)" at its position. */
int doc_check_keys(const struct doc *d, const struct doc_node *map, const char *const *allowed,
		   struct err *e);

/* Optional fields of a map, read by key with their range checked. A parser keeps its document
 * and error struct in one doc_reader. An absent key returns 0 and leaves *out untouched (its
 * default); a present one of the wrong type or out of range fails at its position with
 * "<key>: <value> is out of range [<min>, <max>]" or "<key>: expected a, b or c, got '<value>'". */
struct doc_reader {
	const struct doc *d;
	struct err *e;
};
int doc_field_i64(struct doc_reader *r, const struct doc_node *map, const char *key, int64_t min, int64_t max,
		  int64_t *out);
int doc_field_double(struct doc_reader *r, const struct doc_node *map, const char *key, double min, double max,
		     double *out);
int doc_field_bool(struct doc_reader *r, const struct doc_node *map, const char *key, bool *out);
/* *out: the index of the value among names[0 .. n-1]. */
int doc_field_enum(struct doc_reader *r, const struct doc_node *map, const char *key, const char *const *names,
		   int n, int *out);
/* A section: *out is map's `key`, a map whose keys are among `keys` (doc_check_keys), or NULL
 * when absent (returns 0). */
int doc_section(struct doc_reader *r, const struct doc_node *map, const char *key, const char *const *keys,
		const struct doc_node **out);

/* A rules file's top level (kernel-name rules, derivation rules): a map whose one key `rules`
 * holds a list of at most `max` items; *list is that list. */
int doc_rules_list(const struct doc *d, size_t max, const struct doc_node **list, struct err *e);

/* Reads text as a rules file (doc_rules_list, at most max rules) and calls each(d, rule, i, n, obj,
 * e) on its n rules in order (n == 0: never), the document alive only during the call. A
 * negative return from `each` stops the reading and is returned; -ENOMEM (from `each` or the
 * reading) is reported as "out of memory reading the <what>" at the file. */
int doc_rules_each(const char *file, const char *text, size_t len_bytes, size_t max, const char *what,
		   int (*each)(const struct doc *d, const struct doc_node *rule, size_t i, size_t n, void *obj,
			       struct err *e),
		   void *obj, struct err *e);

/* Strict number parsing shared with the command line (key=value arguments):
 * integers in decimal with optional '_' separators, or an exact integer in exponent form (1e6);
 * doubles in C syntax. Return 0, -EINVAL (not a number) or -ERANGE. */
int doc_parse_i64(const char *s, int64_t *out);
int doc_parse_double(const char *s, double *out);

#endif
