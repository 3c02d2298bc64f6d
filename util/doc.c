#include "util/doc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Children of the containers still open while parsing: one growable list per depth level. */
struct frame {
	struct doc_node *node;
	struct doc_node **kids;
	size_t n, cap;
};

struct builder {
	struct doc *d;
	struct err *e;
	struct frame stack[DOC_MAX_DEPTH];
	int depth;
	size_t nodes;
};

static int at_mark(struct builder *b, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int at_mark(struct builder *b, yaml_mark_t m, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_set(b->e, b->d->file, (int)m.line + 1, (int)m.column + 1, "%s", msg);
	return -EINVAL;
}

static struct doc_node *new_node(struct builder *b, enum doc_kind kind, yaml_mark_t m)
{
	if (++b->nodes > DOC_MAX_NODES)
		return NULL;
	struct doc_node *n = arena_alloc(&b->d->arena, sizeof *n);
	if (!n)
		return NULL;
	n->kind = kind;
	n->line = (int)m.line + 1;
	n->col = (int)m.column + 1;
	n->str = "";
	return n;
}

static int add_child(struct builder *b, struct doc_node *child)
{
	if (b->depth == 0) {
		b->d->root = child;
		return 0;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct doc_node **k = realloc(f->kids, cap * sizeof *k);
		if (!k)
			return -ENOMEM;
		f->kids = k;
		f->cap = cap;
	}
	f->kids[f->n++] = child;
	return 0;
}

static int check_duplicate_key(struct builder *b, struct frame *f)
{
	/* Keys sit at even positions; report a repeated scalar key at the second occurrence. */
	for (size_t i = 0; i + 1 < f->n; i += 2) {
		const struct doc_node *k = f->kids[i];
		if (k->kind != DOC_SCALAR)
			continue;
		for (size_t j = i + 2; j < f->n; j += 2) {
			const struct doc_node *k2 = f->kids[j];
			if (k2->kind == DOC_SCALAR && k2->len == k->len && memcmp(k->str, k2->str, k->len) == 0) {
				err_set(b->e, b->d->file, k2->line, k2->col,
					"duplicate key '%s' (first at line %d)", k2->str, k->line);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int close_container(struct builder *b)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct doc_node *n = f->node;
	int rc = 0;
	if (n->kind == DOC_MAP) {
		/* Small maps (configs) get the quadratic check; huge maps (traces) are not configs. */
		if (f->n <= 2 * 4096 && (rc = check_duplicate_key(b, f)) < 0)
			goto out;
		n->n = f->n / 2;
	} else {
		n->n = f->n;
	}
	if (f->n) {
		n->items = arena_alloc(&b->d->arena, f->n * sizeof *n->items);
		if (!n->items) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(n->items, f->kids, f->n * sizeof *n->items);
	}
	b->depth--;
	rc = add_child(b, n);
out:
	free(f->kids);
	f->kids = NULL;
	f->n = f->cap = 0;
	return rc;
}

static int handle_event(struct builder *b, const yaml_event_t *ev, int *done)
{
	struct doc_node *n;
	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		*done = 1;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->d->root || b->nodes)
			return at_mark(b, ev->start_mark, "expected a single document, found another");
		return 0;
	case YAML_ALIAS_EVENT:
		return at_mark(b, ev->start_mark, "YAML aliases are not supported; write the value out");
	case YAML_SCALAR_EVENT:
		n = new_node(b, DOC_SCALAR, ev->start_mark);
		if (!n)
			goto too_big;
		n->str = arena_strndup(&b->d->arena, (const char *)ev->data.scalar.value,
				       ev->data.scalar.length);
		if (!n->str)
			goto too_big;
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		return add_child(b, n);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth == DOC_MAX_DEPTH)
			return at_mark(b, ev->start_mark, "nesting deeper than %d levels", DOC_MAX_DEPTH);
		n = new_node(b, ev->type == YAML_MAPPING_START_EVENT ? DOC_MAP : DOC_SEQ, ev->start_mark);
		if (!n)
			goto too_big;
		b->stack[b->depth++] = (struct frame){.node = n};
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return close_container(b);
	default:
		return 0;
	}
too_big:
	return at_mark(b, ev->start_mark, "document too large (over %d nodes or %d MiB)", DOC_MAX_NODES,
		       DOC_MAX_INPUT_BYTES >> 20);
}

int doc_load_string(struct doc *d, const char *name, const char *text, size_t len_bytes,
		    struct err *e)
{
	memset(d, 0, sizeof *d);
	snprintf(d->file, sizeof d->file, "%s", name ? name : "<input>");
	if (len_bytes > DOC_MAX_INPUT_BYTES) {
		err_set(e, d->file, 0, 0, "file too large (%zu bytes; the limit is %d MiB)", len_bytes,
			DOC_MAX_INPUT_BYTES >> 20);
		return -EINVAL;
	}
	/* Nodes plus strings never exceed a small multiple of the input. */
	arena_init(&d->arena, 64 * (size_t)len_bytes + (1u << 20));

	struct builder b = {.d = d, .e = e};
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		err_set(e, d->file, 0, 0, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len_bytes);
	int rc = 0, done = 0;
	while (!done) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			const char *what = strstr(d->file, ".json") ? "JSON" : "YAML";
			err_set(e, d->file, (int)parser.problem_mark.line + 1,
				(int)parser.problem_mark.column + 1, "malformed %s: %s%s%s", what,
				parser.problem ? parser.problem : "syntax error",
				parser.context ? " " : "", parser.context ? parser.context : "");
			rc = -EINVAL;
			break;
		}
		rc = handle_event(&b, &ev, &done);
		yaml_event_delete(&ev);
		if (rc == -ENOMEM)
			err_set(e, d->file, 0, 0, "out of memory");
		if (rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
	for (int i = 0; i < b.depth; i++)
		free(b.stack[i].kids);
	if (rc < 0)
		doc_release(d);
	return rc;
}

int doc_read_file(const char *path, char **out, size_t *len_bytes, struct err *e)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		return -ENOENT;
	}
	int rc = 0;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= DOC_MAX_INPUT_BYTES) {
				err_set(e, path, 0, 0, "file too large (the limit is %d MiB)",
					DOC_MAX_INPUT_BYTES >> 20);
				rc = -EINVAL;
				goto out;
			}
			cap = cap ? 2 * cap : 64 * 1024;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				err_set(e, path, 0, 0, "out of memory");
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				err_set(e, path, 0, 0, "read error: %s", strerror(errno));
				rc = -EIO;
				goto out;
			}
			break;
		}
	}
	if (!buf && !(buf = malloc(1))) {
		err_set(e, path, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	*len_bytes = len;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return rc;
}

int doc_load_file(struct doc *d, const char *path, struct err *e)
{
	memset(d, 0, sizeof *d);
	char *buf;
	size_t len;
	int rc = doc_read_file(path, &buf, &len, e);
	if (rc < 0)
		return rc;
	rc = doc_load_string(d, path, buf, len, e);
	free(buf);
	return rc;
}

void doc_release(struct doc *d)
{
	arena_release(&d->arena);
	d->root = NULL;
}

const struct doc_node *doc_get(const struct doc_node *map, const char *key)
{
	if (!map || map->kind != DOC_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++) {
		const struct doc_node *k = doc_key(map, i);
		if (k->kind == DOC_SCALAR && strcmp(k->str, key) == 0)
			return doc_value(map, i);
	}
	return NULL;
}

int doc_error(const struct doc *d, const struct doc_node *n, struct err *e, const char *fmt, ...)
{
	char msg[480];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_set(e, d->file, n ? n->line : 0, n ? n->col : 0, "%s", msg);
	return -EINVAL;
}

static const char *kind_name(enum doc_kind k)
{
	return k == DOC_MAP ? "a mapping" : k == DOC_SEQ ? "a list" : "a scalar";
}

/* A short, printable excerpt of a scalar for messages. */
static const char *excerpt(const struct doc_node *n, char *buf, size_t cap)
{
	if (n->kind != DOC_SCALAR)
		return kind_name(n->kind);
	size_t len = n->len < cap - 4 ? n->len : cap - 4;
	size_t j = 0;
	for (size_t i = 0; i < len; i++)
		buf[j++] = (n->str[i] >= 32 && n->str[i] < 127) ? n->str[i] : '?';
	if (len < n->len) {
		memcpy(buf + j, "...", 3);
		j += 3;
	}
	buf[j] = '\0';
	return buf;
}

int doc_expect(const struct doc *d, const struct doc_node *n, enum doc_kind kind, const char *what,
	       struct err *e)
{
	if (n && n->kind == kind)
		return 0;
	if (!n)
		return doc_error(d, NULL, e, "%s: missing", what);
	char buf[64];
	return doc_error(d, n, e, "%s: expected %s, got %s%s%s", what, kind_name(kind),
			 n->kind == DOC_SCALAR ? "'" : "", excerpt(n, buf, sizeof buf),
			 n->kind == DOC_SCALAR ? "'" : "");
}

int doc_field_i64(struct doc_reader *r, const struct doc_node *map, const char *key, int64_t min, int64_t max,
		  int64_t *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	int64_t x;
	int rc = doc_i64(r->d, v, key, &x, r->e);
	if (rc < 0)
		return rc;
	if (x < min || x > max)
		return doc_error(r->d, v, r->e, "%s: %lld is out of range [%lld, %lld]", key, (long long)x,
				 (long long)min, (long long)max);
	*out = x;
	return 0;
}

int doc_field_double(struct doc_reader *r, const struct doc_node *map, const char *key, double min, double max,
		     double *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	double x;
	int rc = doc_double(r->d, v, key, &x, r->e);
	if (rc < 0)
		return rc;
	if (!(x >= min && x <= max))
		return doc_error(r->d, v, r->e, "%s: %g is out of range [%g, %g]", key, x, min, max);
	*out = x;
	return 0;
}

int doc_field_bool(struct doc_reader *r, const struct doc_node *map, const char *key, bool *out)
{
	const struct doc_node *v = doc_get(map, key);
	return v ? doc_bool(r->d, v, key, out, r->e) : 0;
}

int doc_field_enum(struct doc_reader *r, const struct doc_node *map, const char *key, const char *const *names,
		   int n, int *out)
{
	const struct doc_node *v = doc_get(map, key);
	if (!v)
		return 0;
	const char *s;
	int rc = doc_str(r->d, v, key, &s, r->e);
	if (rc < 0)
		return rc;
	char list[200] = "";
	for (int i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? (i + 1 < n ? ", " : " or ") : "",
			 names[i]);
	}
	return doc_error(r->d, v, r->e, "%s: expected %s, got '%s'", key, list, s);
}

int doc_section(struct doc_reader *r, const struct doc_node *map, const char *key, const char *const *keys,
		const struct doc_node **out)
{
	*out = doc_get(map, key);
	if (!*out)
		return 0;
	int rc = doc_expect(r->d, *out, DOC_MAP, key, r->e);
	return rc < 0 ? rc : doc_check_keys(r->d, *out, keys, r->e);
}

int doc_parse_i64(const char *s, int64_t *out)
{
	char digits[64];
	size_t j = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '_')
			continue;
		if (j + 1 >= sizeof digits)
			return -ERANGE;
		digits[j++] = *p;
	}
	digits[j] = '\0';
	if (j == 0)
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(digits, &end, 10);
	if (*end == '\0' && end != digits) {
		if (errno == ERANGE)
			return -ERANGE;
		*out = v;
		return 0;
	}
	/* Exponent form for exact integers only: 1e6 or 1.5e3, never 1.5. */
	if (!strpbrk(digits, "eE"))
		return -EINVAL;
	double dv;
	int rc = doc_parse_double(digits, &dv);
	if (rc < 0)
		return rc;
	if (dv != floor(dv))
		return -EINVAL;
	if (dv >= 9.2e18 || dv <= -9.2e18)
		return -ERANGE;
	*out = (int64_t)dv;
	return 0;
}

int doc_parse_double(const char *s, double *out)
{
	if (!*s)
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end != '\0' || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*out = v;
	return 0;
}

int doc_i64(const struct doc *d, const struct doc_node *n, const char *what, int64_t *out,
	    struct err *e)
{
	int rc = doc_expect(d, n, DOC_SCALAR, what, e);
	if (rc < 0)
		return rc;
	int64_t v;
	rc = doc_parse_i64(n->str, &v);
	char buf[64];
	if (rc == -ERANGE)
		return doc_error(d, n, e, "%s: integer out of range '%s'", what, excerpt(n, buf, sizeof buf));
	if (rc < 0)
		return doc_error(d, n, e, "%s: expected an integer, got '%s'", what, excerpt(n, buf, sizeof buf));
	*out = v;
	return 0;
}

int doc_double(const struct doc *d, const struct doc_node *n, const char *what, double *out,
	       struct err *e)
{
	int rc = doc_expect(d, n, DOC_SCALAR, what, e);
	if (rc < 0)
		return rc;
	double v;
	rc = doc_parse_double(n->str, &v);
	char buf[64];
	if (rc == -ERANGE)
		return doc_error(d, n, e, "%s: number out of range '%s'", what, excerpt(n, buf, sizeof buf));
	if (rc < 0)
		return doc_error(d, n, e, "%s: expected a number, got '%s'", what, excerpt(n, buf, sizeof buf));
	*out = v;
	return 0;
}

int doc_bool(const struct doc *d, const struct doc_node *n, const char *what, bool *out,
	     struct err *e)
{
	int rc = doc_expect(d, n, DOC_SCALAR, what, e);
	if (rc < 0)
		return rc;
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "on", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "off", NULL};
	for (int i = 0; yes[i]; i++)
		if (strcmp(n->str, yes[i]) == 0) {
			*out = true;
			return 0;
		}
	for (int i = 0; no[i]; i++)
		if (strcmp(n->str, no[i]) == 0) {
			*out = false;
			return 0;
		}
	char buf[64];
	return doc_error(d, n, e, "%s: expected true or false, got '%s'", what, excerpt(n, buf, sizeof buf));
}

int doc_str(const struct doc *d, const struct doc_node *n, const char *what, const char **out,
	    struct err *e)
{
	int rc = doc_expect(d, n, DOC_SCALAR, what, e);
	if (rc < 0)
		return rc;
	*out = n->str;
	return 0;
}

bool doc_is_null(const struct doc_node *n)
{
	return !n || (n->kind == DOC_SCALAR && n->plain &&
		      (n->len == 0 || strcmp(n->str, "null") == 0 || strcmp(n->str, "~") == 0));
}

int doc_check_keys(const struct doc *d, const struct doc_node *map, const char *const *allowed,
		   struct err *e)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct doc_node *k = doc_key(map, i);
		if (k->kind != DOC_SCALAR)
			return doc_error(d, k, e, "keys must be plain strings");
		bool known = false;
		for (size_t j = 0; allowed[j]; j++)
			if (strcmp(k->str, allowed[j]) == 0) {
				known = true;
				break;
			}
		if (known)
			continue;
		const char *hint = err_suggest(k->str, allowed);
		char buf[64];
		if (hint)
			return doc_error(d, k, e, "unknown key '%s' (did you mean '%s'?)",
					 excerpt(k, buf, sizeof buf), hint);
		return doc_error(d, k, e, "unknown key '%s'", excerpt(k, buf, sizeof buf));
	}
	return 0;
}

int doc_rules_list(const struct doc *d, size_t max, const struct doc_node **list, struct err *e)
{
	static const char *const top[] = {"rules", NULL};
	int rc;
	if (!d->root)
		return doc_error(d, NULL, e, "empty rules file (expected 'rules:' with a list)");
	if ((rc = doc_expect(d, d->root, DOC_MAP, "rules file", e)) < 0 ||
	    (rc = doc_check_keys(d, d->root, top, e)) < 0)
		return rc;
	const struct doc_node *l = doc_get(d->root, "rules");
	if (!l)
		return doc_error(d, d->root, e, "missing key 'rules'");
	if ((rc = doc_expect(d, l, DOC_SEQ, "rules", e)) < 0)
		return rc;
	if (l->n > max)
		return doc_error(d, l, e, "rules: at most %zu rules, got %zu", max, l->n);
	*list = l;
	return 0;
}

int doc_rules_each(const char *file, const char *text, size_t len_bytes, size_t max, const char *what,
		   int (*each)(const struct doc *d, const struct doc_node *rule, size_t i, size_t n, void *obj,
			       struct err *e),
		   void *obj, struct err *e)
{
	struct doc d;
	int rc = doc_load_string(&d, file, text, len_bytes, e);
	if (rc < 0)
		return rc;
	const struct doc_node *list;
	rc = doc_rules_list(&d, max, &list, e);
	for (size_t i = 0; rc == 0 && i < list->n; i++)
		rc = each(&d, list->items[i], i, list->n, obj, e);
	doc_release(&d);
	if (rc == -ENOMEM)
		err_set(e, file, 0, 0, "out of memory reading the %s", what);
	return rc;
}
