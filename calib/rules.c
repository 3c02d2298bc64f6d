#include "calib/rules.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/opspec.h"
#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file calib_rule_files[];

enum { RULES_ARENA_BYTES = 4 * 1024 * 1024 };

bool calib_glob(const char *p, const char *s)
{
	return trace_glob(p, s, false);
}

bool calib_nvtx_value(const char *text, const char *key, char *buf, size_t n)
{
	size_t klen = strlen(key);
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == ',' || *p == '\t' || *p == ';')
			p++;
		const char *tok = p;
		while (*p && *p != ' ' && *p != ',' && *p != '\t' && *p != ';')
			p++;
		if ((size_t)(p - tok) > klen && strncmp(tok, key, klen) == 0 && tok[klen] == '=') {
			size_t vlen = (size_t)(p - tok) - klen - 1;
			if (vlen == 0 || vlen >= n)
				return false;
			memcpy(buf, tok + klen + 1, vlen);
			buf[vlen] = '\0';
			return true;
		}
	}
	return false;
}

static const struct opspec_kind *find_kind(const char *name)
{
	int n;
	const struct opspec_kind *k = opspec_kinds(&n);
	for (int i = 0; i < n; i++)
		if (strcmp(k[i].name, name) == 0)
			return &k[i];
	return NULL;
}

static int parse_term(const struct doc *d, const struct doc_node *at, struct arena *a, const char *key,
                      const char *s, size_t len, struct calib_term *t, struct err *e)
{
	static const struct {
		const char *name;
		enum calib_term_kind kind;
	} names[] = {
	    {"grid.x", CALIB_TERM_GRID_X},   {"grid.y", CALIB_TERM_GRID_Y},   {"grid.z", CALIB_TERM_GRID_Z},
	    {"block.x", CALIB_TERM_BLOCK_X}, {"block.y", CALIB_TERM_BLOCK_Y}, {"block.z", CALIB_TERM_BLOCK_Z},
	    {"bytes", CALIB_TERM_BYTES},
	};
	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0)
		return doc_error(d, at, e, "%s: empty alternative", key);
	memset(t, 0, sizeof *t);
	t->mul = t->div = 1;
	/* a trailing *N or /N, for every term but literals */
	size_t base = len;
	const char *op = NULL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '*' || s[i] == '/') {
			op = s + i;
			base = i;
			break;
		}
	char head[96];
	if (base >= sizeof head)
		return doc_error(d, at, e, "%s: term too long", key);
	memcpy(head, s, base);
	head[base] = '\0';
	bool found = false;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(head, names[i].name) == 0) {
			t->kind = names[i].kind;
			found = true;
		}
	if (!found && (strcmp(head, "nvtx") == 0 || strncmp(head, "nvtx:", 5) == 0)) {
		t->kind = CALIB_TERM_NVTX;
		const char *nk = head[4] == ':' ? head + 5 : key;
		if (!*nk)
			return doc_error(d, at, e, "%s: 'nvtx:' needs a key name", key);
		t->text = arena_strndup(a, nk, strlen(nk));
		found = true;
	}
	if (!found) {
		if (op)
			return doc_error(d, at, e,
			                 "%s: '%.*s': '*' and '/' apply to nvtx, grid.*, block.* and bytes, "
			                 "not to a literal",
			                 key, (int)len, s);
		if (strncmp(head, "grid", 4) == 0 || strncmp(head, "block", 5) == 0)
			return doc_error(d, at, e,
			                 "%s: unknown term '%s' (expected grid.x|y|z or block.x|y|z)", key,
			                 head);
		t->kind = CALIB_TERM_LITERAL;
		t->text = arena_strndup(a, head, base);
	} else if (op) {
		int64_t v;
		char num[32];
		size_t nl = len - base - 1;
		if (nl == 0 || nl >= sizeof num)
			return doc_error(d, at, e, "%s: '%c' needs a positive integer", key, *op);
		memcpy(num, op + 1, nl);
		num[nl] = '\0';
		if (doc_parse_i64(num, &v) < 0 || v <= 0)
			return doc_error(d, at, e, "%s: '%c%s': expected a positive integer", key, *op, num);
		if (*op == '*')
			t->mul = v;
		else
			t->div = v;
	}
	if (!t->text && t->kind == CALIB_TERM_NVTX)
		return -ENOMEM;
	if (t->kind == CALIB_TERM_LITERAL && !t->text)
		return -ENOMEM;
	return 0;
}

static int parse_value(const struct doc *d, const struct doc_node *v, struct arena *a, const char *key,
                       struct calib_value *out, struct err *e)
{
	const char *s;
	int rc = doc_str(d, v, key, &s, e);
	if (rc < 0)
		return rc;
	memset(out, 0, sizeof *out);
	const char *p = s;
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (out->n == CALIB_VALUE_ALTS_MAX)
			return doc_error(d, v, e, "%s: at most %d alternatives", key, CALIB_VALUE_ALTS_MAX);
		if ((rc = parse_term(d, v, a, key, p, len, &out->alt[out->n], e)) < 0)
			return rc;
		out->n++;
		if (!bar)
			break;
		p = bar + 1;
	}
	return 0;
}

static int parse_rule(const struct doc *d, const struct doc_node *n, struct calib_rules *r, struct err *e)
{
	static const char *const keys[] = {"name", "kernel", "collective", "op", "group", "keys", NULL};
	struct calib_rule *rule = &r->rule[r->n];
	memset(rule, 0, sizeof *rule);
	rule->line = n->line;
	int rc = doc_expect(d, n, DOC_MAP, "rule", e);
	if (rc < 0 || (rc = doc_check_keys(d, n, keys, e)) < 0)
		return rc;
	const char *s;
	const struct doc_node *v;
	if ((v = doc_get(n, "collective"))) {
		if ((rc = doc_str(d, v, "collective", &s, e)) < 0)
			return rc;
		if (!trace_kclass_collective_known(s))
			return doc_error(d, v, e, "collective: unknown '%s' (allreduce, allgather,"
			                 " reducescatter, alltoall, sendrecv, broadcast, reduce, dispatch,"
			                 " combine, other)", s);
		rule->collective = arena_strndup(&r->arena, s, strlen(s));
		rule->name = rule->collective;
	}
	if ((v = doc_get(n, "kernel"))) {
		if ((rc = doc_str(d, v, "kernel", &s, e)) < 0)
			return rc;
		if (!*s)
			return doc_error(d, v, e, "kernel: empty pattern");
		rule->pattern = arena_strndup(&r->arena, s, strlen(s));
		rule->name = rule->pattern;
	} else if (!rule->collective) {
		return doc_error(d, n, e, "rule: missing key 'kernel' (a glob over kernel names) or"
		                 " 'collective'");
	}
	if ((v = doc_get(n, "name"))) {
		if ((rc = doc_str(d, v, "name", &s, e)) < 0)
			return rc;
		rule->name = arena_strndup(&r->arena, s, strlen(s));
	}
	if ((v = doc_get(n, "group"))) {
		if ((rc = doc_str(d, v, "group", &s, e)) < 0)
			return rc;
		rule->group = arena_strndup(&r->arena, s, strlen(s));
	}
	if (!(v = doc_get(n, "op")))
		return doc_error(d, n, e, "rule: missing key 'op' (a k3sim op kind, or skip)");
	if ((rc = doc_str(d, v, "op", &s, e)) < 0)
		return rc;
	const struct opspec_kind *kind = NULL;
	if (strcmp(s, "skip") != 0) {
		kind = find_kind(s);
		if (!kind) {
			int nk;
			const struct opspec_kind *all = opspec_kinds(&nk);
			const char *names[40];
			int m = 0;
			for (int i = 0; i < nk && m < 38; i++)
				names[m++] = all[i].name;
			names[m++] = "skip";
			names[m] = NULL;
			const char *hint = err_suggest(s, names);
			return doc_error(d, v, e, "op: unknown op kind '%s'%s%s%s", s,
			                 hint ? " (did you mean '" : "", hint ? hint : "",
			                 hint ? "'?)" : " (see k3sim op --help, or skip)");
		}
		rule->op = kind->name;
	}
	const struct doc_node *kv = doc_get(n, "keys");
	if (kv && !kind)
		return doc_error(d, kv, e, "keys: a skip rule takes no keys");
	if (kv) {
		if ((rc = doc_expect(d, kv, DOC_MAP, "keys", e)) < 0)
			return rc;
		const char *allowed[CALIB_RULE_KEYS_MAX + 1];
		int na = 0;
		for (const struct opspec_key *k = kind->keys; k->name && na < CALIB_RULE_KEYS_MAX; k++)
			allowed[na++] = k->name;
		allowed[na] = NULL;
		if ((rc = doc_check_keys(d, kv, allowed, e)) < 0)
			return rc;
		for (size_t i = 0; i < kv->n && rule->n_keys < CALIB_RULE_KEYS_MAX; i++) {
			const struct doc_node *k = doc_key(kv, i);
			rule->key[rule->n_keys] = arena_strndup(&r->arena, k->str, k->len);
			if (!rule->key[rule->n_keys])
				return -ENOMEM;
			if ((rc = parse_value(d, doc_value(kv, i), &r->arena, k->str,
			                      &rule->value[rule->n_keys], e)) < 0)
				return rc;
			rule->n_keys++;
		}
	}
	if (kind)
		for (const struct opspec_key *k = kind->keys; k->name; k++) {
			if (k->def)
				continue;
			bool given = false;
			for (int i = 0; i < rule->n_keys; i++)
				given |= strcmp(rule->key[i], k->name) == 0;
			if (!given)
				return doc_error(d, kv ? kv : n, e, "rule '%s': op %s needs key '%s' (%s)",
				                 rule->name, kind->name, k->name, k->help);
		}
	if (!rule->name || (doc_get(n, "kernel") && !rule->pattern) ||
	    (doc_get(n, "collective") && !rule->collective))
		return -ENOMEM;
	r->n++;
	return 0;
}

/* One rule of the file: the array of all of them allocated at the first. */
static int load_rule(const struct doc *d, const struct doc_node *n, size_t i, size_t count, void *obj,
		     struct err *e)
{
	struct calib_rules *r = obj;
	if (i == 0 && !(r->rule = arena_alloc(&r->arena, count * sizeof *r->rule)))
		return -ENOMEM;
	return parse_rule(d, n, r, e);
}

int calib_rules_load_string(struct calib_rules *r, const char *file, const char *text, size_t len_bytes,
                            struct err *e)
{
	struct calib_rules tmp;
	memset(&tmp, 0, sizeof tmp);
	arena_init(&tmp.arena, RULES_ARENA_BYTES);
	snprintf(tmp.file, sizeof tmp.file, "%s", file);
	int rc = doc_rules_each(file, text, len_bytes, CALIB_RULES_MAX, "rules", load_rule, &tmp, e);
	if (!rc)
		rc = trace_kclass_load(&tmp.classes, "default", e);
	if (rc < 0) {
		arena_release(&tmp.arena);
		return rc;
	}
	*r = tmp;
	return 0;
}

static int parse_rules(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return calib_rules_load_string(obj, label, text, len_bytes, e);
}

int calib_rules_load(struct calib_rules *r, const char *name_or_path, struct err *e)
{
	return embedded_load(calib_rule_files, "rules", "rules", name_or_path, parse_rules, r, e);
}

void calib_rules_release(struct calib_rules *r)
{
	arena_release(&r->arena);
	trace_kclass_release(&r->classes);
	memset(r, 0, sizeof *r);
}

int calib_rules_find(const struct calib_rules *r, const char *kernel)
{
	int cls = -2; /* the kernel's class rule, looked up once: -2 not yet */
	for (int i = 0; r && i < r->n; i++) {
		const struct calib_rule *rule = &r->rule[i];
		if (rule->pattern && !calib_glob(rule->pattern, kernel))
			continue;
		if (rule->collective) {
			if (cls == -2)
				cls = trace_kclass_find(&r->classes, kernel);
			if (cls < 0 || r->classes.rule[cls].cls != TRACE_KCLASS_COMM ||
			    strcmp(r->classes.rule[cls].collective, rule->collective) != 0)
				continue;
		}
		return i;
	}
	return -1;
}

bool calib_rules_is_comm(const struct calib_rules *r, const char *kernel)
{
	return r && trace_kclass_is_comm(&r->classes, kernel);
}

/* 0 and buf set; -ENOENT when the term has no value here. */
static int eval_term(const struct calib_term *t, const struct calib_rule_ctx *c, char *buf, size_t n)
{
	int64_t v;
	switch (t->kind) {
	case CALIB_TERM_LITERAL:
		snprintf(buf, n, "%s", t->text);
		return 0;
	case CALIB_TERM_NVTX: {
		char tmp[64];
		bool found = false;
		for (int i = 0; i < c->n_nvtx && i < CALIB_NVTX_DEPTH_MAX && !found; i++)
			found = c->nvtx[i] && calib_nvtx_value(c->nvtx[i], t->text, tmp, sizeof tmp);
		if (!found)
			return -ENOENT;
		if (t->mul == 1 && t->div == 1) {
			snprintf(buf, n, "%s", tmp);
			return 0;
		}
		if (doc_parse_i64(tmp, &v) < 0)
			return -ENOENT;
		break;
	}
	case CALIB_TERM_GRID_X:
		v = c->grid[0];
		break;
	case CALIB_TERM_GRID_Y:
		v = c->grid[1];
		break;
	case CALIB_TERM_GRID_Z:
		v = c->grid[2];
		break;
	case CALIB_TERM_BLOCK_X:
		v = c->block[0];
		break;
	case CALIB_TERM_BLOCK_Y:
		v = c->block[1];
		break;
	case CALIB_TERM_BLOCK_Z:
		v = c->block[2];
		break;
	case CALIB_TERM_BYTES:
		v = c->bytes;
		break;
	default:
		return -ENOENT;
	}
	if (v <= 0)
		return -ENOENT;
	if (v > INT64_MAX / t->mul)
		return -ENOENT;
	snprintf(buf, n, "%lld", (long long)(v * t->mul / t->div));
	return 0;
}

static const char *term_name(const struct calib_term *t)
{
	static const char *const names[] = {"literal", "nvtx",    "grid.x",  "grid.y", "grid.z",
	                                    "block.x", "block.y", "block.z", "bytes"};
	return t->kind == CALIB_TERM_NVTX ? t->text : names[t->kind];
}

int calib_rule_build(const struct calib_rules *r, int idx, const struct calib_rule_ctx *ctx, struct op *op,
                     char *spec, size_t n, struct err *e)
{
	const struct calib_rule *rule = &r->rule[idx];
	if (!rule->op) {
		err_set(e, NULL, 0, 0, "rule '%s' skips this kernel", rule->name);
		return -EINVAL;
	}
	size_t used = (size_t)snprintf(spec, n, "%s", rule->op);
	for (int i = 0; i < rule->n_keys && used < n; i++) {
		char val[64];
		int rc = -ENOENT;
		for (int a = 0; a < rule->value[i].n && rc < 0; a++)
			rc = eval_term(&rule->value[i].alt[a], ctx, val, sizeof val);
		if (rc < 0) {
			const struct calib_term *t = &rule->value[i].alt[0];
			err_set(e, NULL, 0, 0, "rule '%s': no value for %s (%s%s unknown here)", rule->name,
			        rule->key[i], t->kind == CALIB_TERM_NVTX ? "NVTX key " : "", term_name(t));
			return -ENOENT;
		}
		used += (size_t)snprintf(spec + used, n - used, " %s=%s", rule->key[i], val);
	}
	if (used >= n) {
		err_set(e, NULL, 0, 0, "rule '%s': op spec too long", rule->name);
		return -EINVAL;
	}
	return opspec_parse_line(spec, op, e);
}
