/* Framework records (trace/analyze/shapes.h): operator name, input sizes and types from a range text. */
#include "trace/analyze/shapes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct pcur {
	const char *text, *p;
	int arg; /* top-level argument being read */
	struct fw_call *c;
	struct err *e;
};

static int bad(struct pcur *k, const char *what)
{
	err_set(k->e, NULL, 1, (int)(k->p - k->text) + 1, "framework record '%.60s%s': %s", k->text,
		strlen(k->text) > 60 ? "..." : "", what);
	return -EINVAL;
}

static void ws(struct pcur *k)
{
	while (*k->p == ' ')
		k->p++;
}

static struct fw_tensor *next_input(struct pcur *k)
{
	struct fw_call *c = k->c;
	c->n_in++;
	if (c->n_kept == FW_INPUTS_MAX) {
		c->truncated = true;
		return NULL;
	}
	struct fw_tensor *t = &c->in[c->n_kept++];
	memset(t, 0, sizeof *t);
	t->arg = k->arg;
	return t;
}

/* A list at k->p ('['): a list of integers is one input's sizes; a list of lists is flattened
 * (tensor lists); [] is a non-tensor input. depth 0 is the outer "sizes" list. */
static int parse_list(struct pcur *k, int depth)
{
	if (depth > 8)
		return bad(k, "lists nested too deep");
	k->p++; /* '[' */
	ws(k);
	if (*k->p == ']') {
		k->p++;
		if (depth > 0) {
			struct fw_tensor *t = next_input(k);
			if (t)
				t->rank = -1;
		}
		return 0;
	}
	if (*k->p == '[' || depth == 0) {
		for (;;) {
			ws(k);
			if (*k->p != '[')
				return bad(k, "expected '[' (one input's sizes)");
			int rc = parse_list(k, depth + 1);
			if (rc)
				return rc;
			if (depth == 0)
				k->arg++;
			ws(k);
			if (*k->p == ',') {
				k->p++;
				continue;
			}
			if (*k->p == ']') {
				k->p++;
				return 0;
			}
			return bad(k, "expected ',' or ']'");
		}
	}
	/* integers: one tensor's sizes */
	struct fw_tensor *t = next_input(k);
	int rank = 0;
	for (;;) {
		ws(k);
		const char *s = k->p;
		bool neg = *s == '-';
		if (neg)
			s++;
		if (*s < '0' || *s > '9')
			return bad(k, "expected a size (an integer)");
		int64_t v = 0;
		while (*s >= '0' && *s <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return bad(k, "size out of range");
			v = v * 10 + (*s++ - '0');
		}
		k->p = s;
		if (neg)
			return bad(k, "negative size");
		if (t) {
			if (rank < FW_RANK_MAX)
				t->dim[rank] = v;
			else
				k->c->truncated = true;
		}
		rank++;
		ws(k);
		if (*k->p == ',') {
			k->p++;
			continue;
		}
		if (*k->p == ']') {
			k->p++;
			break;
		}
		return bad(k, "expected ',' or ']' in sizes");
	}
	if (t)
		t->rank = rank < FW_RANK_MAX ? rank : FW_RANK_MAX;
	return 0;
}

static int parse_types(struct pcur *k)
{
	k->p++; /* '[' */
	int i = 0;
	for (;;) {
		ws(k);
		if (*k->p == ']') {
			k->p++;
			return 0;
		}
		const char *s = k->p;
		while (*k->p && *k->p != ',' && *k->p != ']')
			k->p++;
		const char *end = k->p;
		while (end > s && end[-1] == ' ')
			end--;
		if (!*k->p)
			return bad(k, "types list not closed");
		size_t n = (size_t)(end - s);
		for (int j = 0; j < k->c->n_kept; j++) {
			struct fw_tensor *t = &k->c->in[j];
			if (t->arg != i)
				continue;
			size_t m = n < sizeof t->type ? n : sizeof t->type - 1;
			if (strncmp(s, "TensorList", 10) != 0 && strncmp(s, "GenericList", 11) != 0) {
				memcpy(t->type, s, m);
				t->type[m] = '\0';
			}
			/* a 0-d tensor is written [] like a non-tensor: the type tells them apart */
			if (t->rank < 0 && fw_type_bytes(t->type) > 0)
				t->rank = 0;
		}
		i++;
		if (*k->p == ',')
			k->p++;
	}
}

int fw_call_parse(const char *text, struct fw_call *out, struct err *e)
{
	const char *sz = strstr(text, ", sizes = [");
	if (!sz)
		return 0;
	const char *comma = strchr(text, ',');
	size_t n = (size_t)(comma - text);
	while (n > 0 && text[n - 1] == ' ')
		n--;
	if (n == 0 || n >= sizeof out->name)
		return 0;
	struct fw_call c; /* out is left alone on failure */
	memset(&c, 0, sizeof c);
	memcpy(c.name, text, n);
	c.name[n] = '\0';
	struct pcur k = {.text = text, .p = sz + strlen(", sizes = "), .c = &c, .e = e};
	int rc = parse_list(&k, 0);
	if (rc)
		return rc;
	const char *ty = strstr(k.p, ", types = [");
	if (ty) {
		k.p = ty + strlen(", types = ");
		if ((rc = parse_types(&k)) != 0)
			return rc;
		c.has_types = true;
	}
	*out = c;
	return 1;
}

int64_t fw_tensor_elements(const struct fw_tensor *t)
{
	if (t->rank < 0)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dim[i] != 0 && n > (INT64_C(1) << 62) / t->dim[i])
			return -ERANGE;
		n *= t->dim[i];
	}
	return n;
}

static const struct {
	const char *name;
	int bytes;
	int dtype; /* enum dtype, or -1 */
} types[] = {
	{"c10::BFloat16", 2, DT_BF16}, {"BFloat16", 2, DT_BF16},     {"c10::Half", 2, DT_FP16},
	{"Half", 2, DT_FP16},          {"float", 4, DT_FP32},          {"double", 8, -1},
	{"c10::Float8_e4m3fn", 1, DT_FP8}, {"c10::Float8_e4m3fnuz", 1, DT_FP8},
	{"c10::Float8_e5m2", 1, -1},   {"c10::Float8_e8m0fnu", 1, -1}, {"long int", 8, -1},
	{"long", 8, -1},               {"int", 4, -1},                 {"short int", 2, -1},
	{"signed char", 1, -1},        {"unsigned char", 1, -1},       {"bool", 1, -1},
	{"c10::complex<float>", 8, -1},
};

int fw_type_bytes(const char *type)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(type, types[i].name) == 0)
			return types[i].bytes;
	return 0;
}

int fw_type_dtype(const char *type, enum dtype *out)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(type, types[i].name) == 0) {
			if (types[i].dtype < 0)
				return -1;
			*out = (enum dtype)types[i].dtype;
			return 0;
		}
	return -1;
}
