/* util/: the YAML/JSON tree, typed reads with file:line:col errors, suggestions, dtypes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"
#include "util/dtype.h"
#include "util/err.h"
#include "util/numfmt.h"

static void test_doc_positions(void **state)
{
	const char *text = "a: 1\nb:\n  c: [x, y]\n";
	struct doc d;
	struct err e;
	assert_int_equal(doc_load_string(&d, "t.yaml", text, strlen(text), &e), 0);
	const struct doc_node *b = doc_get(d.root, "b");
	assert_non_null(b);
	const struct doc_node *c = doc_get(b, "c");
	assert_int_equal(c->kind, DOC_SEQ);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->items[1]->str, "y");
	assert_int_equal(c->line, 3);
	assert_int_equal(c->col, 6);
	doc_release(&d);
}

static void test_doc_json(void **state)
{
	const char *text = "{\"x\": 12, \"y\": [1.5, true], \"s\": \"q\\\"\"}";
	struct doc d;
	struct err e;
	assert_int_equal(doc_load_string(&d, "t.json", text, strlen(text), &e), 0);
	int64_t x;
	assert_int_equal(doc_i64(&d, doc_get(d.root, "x"), "x", &x, &e), 0);
	assert_int_equal(x, 12);
	bool t;
	assert_int_equal(doc_bool(&d, doc_get(d.root, "y")->items[1], "y", &t, &e), 0);
	assert_true(t);
	assert_string_equal(doc_get(d.root, "s")->str, "q\"");
	doc_release(&d);
}

static void test_doc_errors(void **state)
{
	struct doc d;
	struct err e;
	char buf[600];
	const char *bad = "a: [1, 2\nb: 3\n";
	assert_true(doc_load_string(&d, "bad.yaml", bad, strlen(bad), &e) < 0);
	assert_true(strncmp(err_format(&e, buf, sizeof buf), "bad.yaml:", 9) == 0);
	assert_non_null(strstr(buf, "malformed YAML"));
	assert_true(e.line > 0 && e.col > 0);

	const char *dup = "a: 1\na: 2\n";
	assert_true(doc_load_string(&d, "dup.yaml", dup, strlen(dup), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "dup.yaml:2:1: error: duplicate key 'a' (first at line 1)");

	const char *alias = "a: &x 1\nb: *x\n";
	assert_true(doc_load_string(&d, "alias.yaml", alias, strlen(alias), &e) < 0);
	assert_non_null(strstr(e.msg, "aliases"));

	/* Deep nesting is refused, not followed. */
	char deep[400];
	memset(deep, '[', 300);
	deep[300] = '\0';
	assert_true(doc_load_string(&d, "deep.yaml", deep, strlen(deep), &e) < 0);
	assert_non_null(strstr(e.msg, "nesting"));

	const char *two = "a: 1\n---\nb: 2\n";
	assert_true(doc_load_string(&d, "two.yaml", two, strlen(two), &e) < 0);
}

static void test_typed_reads(void **state)
{
	const char *text = "n: many\nbig: 99999999999999999999\nf: 1e6\ng: 1.5\nkind: {z: 1}\n";
	struct doc d;
	struct err e;
	char buf[600];
	assert_int_equal(doc_load_string(&d, "t.yaml", text, strlen(text), &e), 0);
	int64_t v = 7;
	assert_true(doc_i64(&d, doc_get(d.root, "n"), "n", &v, &e) < 0);
	assert_int_equal(v, 7); /* untouched on failure */
	assert_string_equal(err_format(&e, buf, sizeof buf), "t.yaml:1:4: error: n: expected an integer, got 'many'");
	assert_true(doc_i64(&d, doc_get(d.root, "big"), "big", &v, &e) < 0);
	assert_non_null(strstr(e.msg, "out of range"));
	assert_int_equal(doc_i64(&d, doc_get(d.root, "f"), "f", &v, &e), 0);
	assert_int_equal(v, 1000000);
	assert_true(doc_i64(&d, doc_get(d.root, "g"), "g", &v, &e) < 0);
	assert_true(doc_i64(&d, doc_get(d.root, "kind"), "kind", &v, &e) < 0);
	assert_non_null(strstr(e.msg, "expected a scalar, got a mapping"));
	static const char *const allowed[] = {"n", "big", "f", "g", "kinds", NULL};
	assert_true(doc_check_keys(&d, d.root, allowed, &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf), "t.yaml:5:1: error: unknown key 'kind' (did you mean 'kinds'?)");
	doc_release(&d);
}

static void test_suggest(void **state)
{
	static const char *const keys[] = {"tp_size", "ep_size", "batch", NULL};
	assert_string_equal(err_suggest("tp_sise", keys), "tp_size");
	assert_string_equal(err_suggest("bacth", keys), "batch");
	assert_null(err_suggest("completely_different", keys));
	static const char *const longer[] = {"hidden_size", "vocab_size", NULL};
	assert_string_equal(err_suggest("hiden", longer), "hidden_size");
}

static void test_dtypes(void **state)
{
	/* MXFP4: 0.5 + 1/32 bytes per weight (group 32, one E8M0 scale byte). */
	assert_int_equal(dtype_bytes(DT_MXFP4, 32), 17);
	assert_int_equal(dtype_bytes(DT_MXFP4, 3584 * 3072), 3584 * 3072 / 32 * 17);
	assert_int_equal(dtype_bytes(DT_MXFP8, 64), 66);
	assert_int_equal(dtype_bytes(DT_BF16, 1572864), 3145728);
	enum dtype t;
	assert_int_equal(dtype_parse("fp8", &t), 0);
	assert_int_equal(t, DT_FP8);
	assert_true(dtype_parse("fp7", &t) < 0);
	/* 1M tokens x 1024 requests x 27,648 B does not overflow. */
	assert_true(dtype_bytes(DT_BF16, INT64_C(1048576) * 1024 * 13824) > 0);
}

/* JSON numbers read back exactly and are as short as they can be (issue 12: trace summary --json
 * printed 76426648.5 as 7.64266e+07). */
static void test_double_str(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{76426648.5, "76426648.5"}, {0.1, "0.1"},   {1.0 / 3, "0.3333333333333333"},
		{1e300, "1e+300"},          {-2.5e-7, "-2.5e-07"},
		{9007199254740991.0, "9007199254740991"},   {123, "123"},
		{0.30000000000000004, "0.30000000000000004"}, {-0.0, "-0"},
		{NAN, "null"},              {INFINITY, "null"},
	};
	char buf[UTIL_DOUBLE_STR_BYTES];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_string_equal(util_double_str(buf, sizeof buf, cases[i].v), cases[i].want);
	/* round trip over awkward values */
	double v = 1.0;
	for (int i = 0; i < 2000; i++) {
		v = v * 1.7320508075688772 + 1e-9 * i;
		if (v > 1e200)
			v = 1.1e-200 * (i + 1);
		util_double_str(buf, sizeof buf, v);
		assert_true(strtod(buf, NULL) == v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_positions), cmocka_unit_test(test_doc_json),
		cmocka_unit_test(test_doc_errors),    cmocka_unit_test(test_typed_reads),
		cmocka_unit_test(test_suggest),       cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_double_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
