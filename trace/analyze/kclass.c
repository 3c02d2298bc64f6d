#include "trace/analyze/kclass.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file trace_kclass_files[];

enum { KCLASS_ARENA_BYTES = 1024 * 1024 };

static const char *const COLLECTIVES[] = {
	"allreduce", "allgather", "reducescatter", "alltoall", "sendrecv", "broadcast", "reduce",
	"dispatch", "combine", "other", NULL,
};

static int fold(int c, bool fold_case)
{
	return fold_case ? tolower(c) : c;
}

bool trace_glob(const char *p, const char *s, bool fold_case)
{
	const char *star_p = NULL, *star_s = NULL;
	while (*s) {
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
			continue;
		}
		bool ok = false;
		const char *next = p + 1;
		int sc = fold((unsigned char)*s, fold_case);
		if (*p == '?') {
			ok = true;
		} else if (*p == '[') {
			const char *q = p + 1;
			bool neg = *q == '!' || *q == '^';
			if (neg)
				q++;
			bool in = false;
			const char *first = q;
			while (*q && (*q != ']' || q == first)) {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					int lo = fold((unsigned char)q[0], fold_case);
					int hi = fold((unsigned char)q[2], fold_case);
					if (sc >= lo && sc <= hi)
						in = true;
					q += 3;
				} else {
					if (fold((unsigned char)*q, fold_case) == sc)
						in = true;
					q++;
				}
			}
			if (*q == ']') {
				ok = in != neg;
				next = q + 1;
			} else {
				ok = *s == '['; /* an unclosed '[' is a literal */
			}
		} else if (*p) {
			ok = fold((unsigned char)*p, fold_case) == sc;
		}
		if (ok) {
			p = next;
			s++;
		} else if (star_p) {
			p = star_p;
			s = ++star_s;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

bool trace_kclass_collective_known(const char *s)
{
	for (const char *const *c = COLLECTIVES; *c; c++)
		if (strcmp(*c, s) == 0)
			return true;
	return false;
}

static int str_of(const struct doc *d, const struct doc_node *map, const char *key, struct arena *a,
		  const char **out, struct err *e)
{
	const struct doc_node *v = doc_get(map, key);
	*out = NULL;
	if (!v)
		return 0;
	const char *s;
	int rc = doc_str(d, v, key, &s, e);
	if (rc < 0)
		return rc;
	if (!*s)
		return doc_error(d, v, e, "%s: empty", key);
	*out = arena_strndup(a, s, strlen(s));
	return *out ? 0 : -ENOMEM;
}

static int parse_rule(const struct doc *d, const struct doc_node *n, struct trace_kclass_rules *r,
		      struct err *e)
{
	static const char *const keys[] = {"name", "kernel", "class", "collective", "library", NULL};
	struct trace_kclass_rule *rule = &r->rule[r->n];
	memset(rule, 0, sizeof *rule);
	rule->line = n->line;
	int rc = doc_expect(d, n, DOC_MAP, "rule", e);
	if (rc < 0 || (rc = doc_check_keys(d, n, keys, e)) < 0)
		return rc;
	const char *cls = NULL;
	if ((rc = str_of(d, n, "kernel", &r->arena, &rule->pattern, e)) < 0 ||
	    (rc = str_of(d, n, "name", &r->arena, &rule->name, e)) < 0 ||
	    (rc = str_of(d, n, "class", &r->arena, &cls, e)) < 0 ||
	    (rc = str_of(d, n, "collective", &r->arena, &rule->collective, e)) < 0 ||
	    (rc = str_of(d, n, "library", &r->arena, &rule->library, e)) < 0)
		return rc;
	if (!rule->pattern)
		return doc_error(d, n, e, "rule: missing key 'kernel' (a glob over kernel names)");
	if (!cls)
		return doc_error(d, n, e, "rule: missing key 'class' (comm or compute)");
	if (!rule->name)
		rule->name = rule->pattern;
	if (strcmp(cls, "comm") == 0) {
		rule->cls = TRACE_KCLASS_COMM;
	} else if (strcmp(cls, "compute") == 0) {
		rule->cls = TRACE_KCLASS_COMPUTE;
	} else {
		static const char *const names[] = {"comm", "compute", NULL};
		const char *hint = err_suggest(cls, names);
		return doc_error(d, doc_get(n, "class"), e, "class: '%s' is neither comm nor compute%s%s%s",
				 cls, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
	}
	const struct doc_node *cv = doc_get(n, "collective");
	if (rule->cls == TRACE_KCLASS_COMM) {
		if (!rule->collective)
			return doc_error(d, n, e, "rule '%s': a comm rule needs 'collective'", rule->name);
		if (!trace_kclass_collective_known(rule->collective)) {
			const char *hint = err_suggest(rule->collective, COLLECTIVES);
			return doc_error(d, cv, e, "collective: unknown '%s'%s%s%s", rule->collective,
					 hint ? " (did you mean '" : "", hint ? hint : "",
					 hint ? "'?)" : " (allreduce, allgather, reducescatter, alltoall,"
							" sendrecv, broadcast, reduce, dispatch, combine,"
							" other)");
		}
		if (!rule->library)
			rule->library = "other";
	} else if (rule->collective || rule->library) {
		return doc_error(d, cv ? cv : doc_get(n, "library"), e,
				 "rule '%s': a compute rule takes no collective or library", rule->name);
	}
	r->n++;
	return 0;
}

static int load_doc(const struct doc *d, struct trace_kclass_rules *r, struct err *e)
{
	static const char *const top[] = {"rules", NULL};
	int rc;
	if (!d->root)
		return doc_error(d, NULL, e, "empty kernel classes file (expected 'rules:' with a list)");
	if ((rc = doc_expect(d, d->root, DOC_MAP, "kernel classes file", e)) < 0 ||
	    (rc = doc_check_keys(d, d->root, top, e)) < 0)
		return rc;
	const struct doc_node *list = doc_get(d->root, "rules");
	if (!list)
		return doc_error(d, d->root, e, "missing key 'rules'");
	if ((rc = doc_expect(d, list, DOC_SEQ, "rules", e)) < 0)
		return rc;
	if (list->n > TRACE_KCLASS_MAX_RULES)
		return doc_error(d, list, e, "rules: at most %d rules, got %zu", TRACE_KCLASS_MAX_RULES,
				 list->n);
	r->rule = arena_alloc(&r->arena, (list->n ? list->n : 1) * sizeof *r->rule);
	if (!r->rule)
		return -ENOMEM;
	for (size_t i = 0; i < list->n; i++)
		if ((rc = parse_rule(d, list->items[i], r, e)) < 0)
			return rc;
	return 0;
}

int trace_kclass_load_string(struct trace_kclass_rules *r, const char *file, const char *text,
			     size_t len_bytes, struct err *e)
{
	struct doc d;
	struct trace_kclass_rules tmp;
	memset(&tmp, 0, sizeof tmp);
	arena_init(&tmp.arena, KCLASS_ARENA_BYTES);
	snprintf(tmp.file, sizeof tmp.file, "%s", file);
	int rc = doc_load_string(&d, file, text, len_bytes, e);
	if (rc < 0)
		goto out;
	rc = load_doc(&d, &tmp, e);
	doc_release(&d);
	if (rc == -ENOMEM)
		err_set(e, file, 0, 0, "out of memory reading the kernel classes");
out:
	if (rc < 0) {
		arena_release(&tmp.arena);
		return rc;
	}
	*r = tmp;
	return 0;
}

static int parse_kclass(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return trace_kclass_load_string(obj, label, text, len_bytes, e);
}

int trace_kclass_load(struct trace_kclass_rules *r, const char *name_or_path, struct err *e)
{
	return embedded_load(trace_kclass_files, "kernel classes", "kernel classes", name_or_path, parse_kclass,
			     r, e);
}

void trace_kclass_release(struct trace_kclass_rules *r)
{
	arena_release(&r->arena);
	memset(r, 0, sizeof *r);
}

int trace_kclass_find(const struct trace_kclass_rules *r, const char *kernel)
{
	for (int i = 0; r && i < r->n; i++)
		if (trace_glob(r->rule[i].pattern, kernel, true))
			return i;
	return -1;
}

bool trace_kclass_is_comm(const struct trace_kclass_rules *r, const char *kernel)
{
	int i = trace_kclass_find(r, kernel);
	return i >= 0 && r->rule[i].cls == TRACE_KCLASS_COMM;
}
