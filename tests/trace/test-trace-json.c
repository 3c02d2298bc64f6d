/* trace/json: the streaming reader's tokens, escapes, limits and errors; exact decimal scaling. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "trace/import/json.h"

/* Read the whole document; return 0 or the error code, with e filled. */
static int drain(const char *text, size_t len, struct err *e, int64_t *tokens)
{
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", text, len);
	enum json_tok t;
	int rc;
	do
		rc = json_next(r, &t, e);
	while (!rc && t != JSON_EOF);
	if (tokens)
		*tokens = r->tokens;
	json_reader_close(r);
	free(r);
	return rc;
}

static void expect_error(const char *text, int line, int col, const char *what)
{
	struct err e = {0};
	int rc = drain(text, strlen(text), &e, NULL);
	if (rc == 0 || e.line != line || e.col != col || !strstr(e.msg, what))
		fprintf(stderr, "input %s: rc %d at %d:%d: %s\n", text, rc, e.line, e.col, e.msg);
	assert_int_not_equal(rc, 0);
	assert_string_equal(e.file, "t.json");
	assert_int_equal(e.line, line);
	assert_int_equal(e.col, col);
	assert_non_null(strstr(e.msg, what));
}

static void test_tokens(void **state)
{
	(void)state;
	const char *doc = "{\"a\": [1, -2.5e3, true, false, null, \"x\"], \"b\": {}, \"c\": []}";
	static const enum json_tok want[] = {
		JSON_OBJ_BEGIN, JSON_KEY, JSON_ARR_BEGIN, JSON_NUMBER, JSON_NUMBER, JSON_TRUE,
		JSON_FALSE, JSON_NULL, JSON_STRING, JSON_ARR_END, JSON_KEY, JSON_OBJ_BEGIN,
		JSON_OBJ_END, JSON_KEY, JSON_ARR_BEGIN, JSON_ARR_END, JSON_OBJ_END, JSON_EOF,
	};
	static const char *const text[] = {
		NULL, "a", NULL, "1", "-2.5e3", NULL, NULL, NULL, "x", NULL, "b", NULL, NULL, "c",
	};
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", doc, strlen(doc));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		enum json_tok t;
		assert_int_equal(json_next(r, &t, NULL), 0);
		assert_int_equal(t, want[i]);
		if (i < sizeof text / sizeof text[0] && text[i])
			assert_string_equal(r->str, text[i]);
	}
	json_reader_close(r);
	free(r);
}

static void test_escapes(void **state)
{
	(void)state;
	const char *doc = "[\"q\\\"b\\\\s\\/n\\nt\\t\", \"\\u00e9\\u4e2d\", \"\\ud83d\\ude00\", \"\\ud800x\"]";
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", doc, strlen(doc));
	enum json_tok t;
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "q\"b\\s/n\nt\t");
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "\xc3\xa9\xe4\xb8\xad");
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "\xf0\x9f\x98\x80");
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "\xef\xbf\xbdx"); /* lone surrogate -> U+FFFD */
	json_reader_close(r);
	free(r);
}

static void test_skip(void **state)
{
	(void)state;
	const char *doc = "{\"skip\": {\"a\": [1, {\"b\": [[]]}], \"c\": \"d\"}, \"keep\": 7}";
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", doc, strlen(doc));
	enum json_tok t;
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "skip");
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_int_equal(t, JSON_OBJ_BEGIN);
	assert_int_equal(json_skip(r, t, NULL), 0);
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_int_equal(t, JSON_KEY);
	assert_string_equal(r->str, "keep");
	assert_int_equal(json_next(r, &t, NULL), 0);
	assert_string_equal(r->str, "7");
	json_reader_close(r);
	free(r);
}

static void test_errors_have_positions(void **state)
{
	(void)state;
	expect_error("{\"a\": 1,}", 1, 9, "expected a string key");
	expect_error("{\"a\" 1}", 1, 6, "':' after the key");
	expect_error("[1 2]", 1, 4, "',' or ']'");
	expect_error("{\"a\": [1, 2", 1, 12, "end of file");
	expect_error("{\"a\":\n  \"unterminated", 2, 3, "unterminated string");
	expect_error("{} x", 1, 4, "the end of the document");
	expect_error("[tru]", 1, 2, "invalid literal");
	expect_error("[01]", 1, 2, "malformed number");
	expect_error("[1.]", 1, 2, "malformed number");
	expect_error("[\"a\tb\"]", 1, 4, "control character");
	expect_error("[\"\\x\"]", 1, 4, "escape");
	expect_error("[\"\\u12g4\"]", 1, 7, "hex digit");
	expect_error("", 1, 1, "end of file");
	expect_error("\n\n   @", 3, 4, "unexpected '@'");
	expect_error("[\"\\u0000\"]", 1, 9, "NUL");
}

static void test_depth_limit(void **state)
{
	(void)state;
	char deep[200];
	memset(deep, '[', 100);
	deep[100] = '\0';
	expect_error(deep, 1, 65, "nesting deeper than 64");
	/* 64 levels are fine */
	char ok[130];
	memset(ok, '[', 64);
	memset(ok + 64, ']', 64);
	ok[128] = '\0';
	struct err e = {0};
	assert_int_equal(drain(ok, 128, &e, NULL), 0);
}

/* A string past the limit is kept cut (on a UTF-8 boundary), never an error: a 3 MiB call stack
 * must not stop an import (issue 12; this test failed with -E2BIG before). */
static void test_string_limit(void **state)
{
	(void)state;
	size_t n = 3u << 20;
	char *big = malloc(n + 16);
	big[0] = '[';
	big[1] = '"';
	memset(big + 2, 'a', n);
	/* a 3-byte character straddles the 1 MiB limit */
	memcpy(big + 2 + (1u << 20) - 1, "\xe2\x82\xac", 3);
	memcpy(big + 2 + n, "\", 7]", 5);
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", big, n + 6);
	enum json_tok t;
	struct err e = {0};
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(t, JSON_STRING);
	assert_true(r->str_cut);
	assert_int_equal(r->str_len, (1u << 20) - 1); /* the euro sign is left out whole */
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(t, JSON_NUMBER);
	assert_false(r->str_cut);
	assert_string_equal(r->str, "7");
	json_reader_close(r);
	/* dropped without a copy: the reader's text buffer never grows */
	json_reader_open_mem(r, "t.json", big, n + 6);
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(json_skip_value(r, &t, &e), 0);
	assert_int_equal(t, JSON_STRING);
	assert_true(r->str_cap <= 256);
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(t, JSON_NUMBER);
	json_reader_close(r);
	free(r);
	free(big);
}

/* A UTF-8 byte order mark before the document is skipped; a stray one is an error (issue 12:
 * "unexpected byte 0xef" before). */
static void test_bom(void **state)
{
	(void)state;
	int64_t tokens = 0;
	struct err e = {0};
	assert_int_equal(drain("\xef\xbb\xbf{\"a\": 1}", 11, &e, &tokens), 0);
	assert_int_equal(tokens, 4);
	expect_error("\xef\xbb{}", 1, 1, "byte order mark");
	expect_error("[1, \xef\xbb\xbf]", 1, 5, "unexpected byte 0xef");
}

/* json_skip_value drops whole containers, and reports an array's end. */
static void test_skip_value(void **state)
{
	(void)state;
	const char *doc = "[{\"a\": [1, {\"b\": \"x\\\"y\"}]}, 2]";
	struct json_reader *r = malloc(sizeof *r);
	json_reader_open_mem(r, "t.json", doc, strlen(doc));
	enum json_tok t;
	struct err e = {0};
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(json_skip_value(r, &t, &e), 0);
	assert_int_equal(t, JSON_OBJ_BEGIN);
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(t, JSON_NUMBER);
	assert_int_equal(json_skip_value(r, &t, &e), 0);
	assert_int_equal(t, JSON_ARR_END);
	assert_int_equal(json_next(r, &t, &e), 0);
	assert_int_equal(t, JSON_EOF);
	json_reader_close(r);
	free(r);
}

/* Files, pipes and gzip: the same tokens whatever the source (trace/import/input.h). */
static void test_sources(void **state)
{
	(void)state;
	const char *plain = fx_path("src.json");
	fx_write_str(plain, "\xef\xbb\xbf[1, \"two\", {\"x\": null}]");
	const char *gz = fx_path("src.json.gz");
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "gzip -c %s > %s", plain, gz);
	assert_int_equal(system(cmd), 0);
	const char *paths[] = {plain, gz};
	for (int i = 0; i < 2; i++) {
		struct json_reader *r = malloc(sizeof *r);
		struct err e = {0};
		assert_int_equal(json_reader_open_file(r, paths[i], &e), 0);
		enum json_tok t;
		int n = 0, rc;
		while (!(rc = json_next(r, &t, &e)) && t != JSON_EOF)
			n++;
		assert_int_equal(rc, 0);
		assert_int_equal(n, 8);
		json_reader_close(r);
		free(r);
	}
	/* a truncated gzip stream is an error, not a short document */
	const char *cut = fx_path("cut.json.gz");
	fx_truncate_copy(gz, cut, fx_size(gz) - 12);
	struct json_reader *r = malloc(sizeof *r);
	struct err e = {0};
	assert_int_equal(json_reader_open_file(r, cut, &e), 0);
	enum json_tok t;
	int rc;
	while (!(rc = json_next(r, &t, &e)) && t != JSON_EOF)
		;
	if (!strstr(e.msg, "gzip"))
		fprintf(stderr, "rc %d: %s\n", rc, e.msg);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(e.msg, "gzip"));
	json_reader_close(r);
	/* a directory is named as such */
	assert_int_equal(json_reader_open_file(r, fx_dir(), &e), -EISDIR);
	assert_non_null(strstr(e.msg, "is a directory"));
	free(r);
}

/* The file reader refills its buffer mid-token: strings and numbers straddling 64 KiB. */
static void test_file_buffer_boundaries(void **state)
{
	(void)state;
	size_t n = 200000;
	char *doc = malloc(n + 100);
	size_t p = 0;
	doc[p++] = '[';
	int64_t items = 0;
	while (p < n) {
		p += (size_t)sprintf(doc + p, "\"abc\\u00e9def\", 123456.789, ");
		items += 2;
	}
	p += (size_t)sprintf(doc + p, "0]");
	items++;
	const char *path = fx_path("big.json");
	fx_write(path, doc, p);
	struct json_reader *r = malloc(sizeof *r);
	assert_int_equal(json_reader_open_file(r, path, NULL), 0);
	enum json_tok t;
	int64_t strings = 0, numbers = 0;
	for (;;) {
		assert_int_equal(json_next(r, &t, NULL), 0);
		if (t == JSON_EOF)
			break;
		if (t == JSON_STRING) {
			assert_string_equal(r->str, "abc\xc3\xa9" "def");
			strings++;
		} else if (t == JSON_NUMBER) {
			numbers++;
			if (strcmp(r->str, "0") != 0)
				assert_string_equal(r->str, "123456.789");
		}
	}
	assert_int_equal(strings + numbers, items);
	json_reader_close(r);
	free(doc);
	struct err e = {0};
	assert_int_equal(json_reader_open_file(r, fx_path("missing.json"), &e), -ENOENT);
	assert_non_null(strstr(e.msg, "cannot open"));
	free(r);
}

static void test_scaled(void **state)
{
	(void)state;
	int64_t v;
	/* µs -> ns, exactly, at epoch magnitudes where a double would lose the last digits */
	assert_int_equal(json_parse_scaled("1700000000123.456", 3, &v), 0);
	assert_int_equal(v, 1700000000123456);
	assert_int_equal(json_parse_scaled("1700000000123456.789", 3, &v), 0);
	assert_int_equal(v, 1700000000123456789);
	assert_int_equal(json_parse_scaled("12.3456", 3, &v), 0);
	assert_int_equal(v, 12346); /* rounded half away from zero */
	assert_int_equal(json_parse_scaled("-0.0005", 3, &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(json_parse_scaled("1.5e2", 3, &v), 0);
	assert_int_equal(v, 150000);
	assert_int_equal(json_parse_scaled("2E-3", 3, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(json_parse_scaled("0", 3, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(json_parse_scaled("1e-900", 3, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(json_parse_scaled("9223372036854775807", 0, &v), 0);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(json_parse_scaled("9223372036854775808", 0, &v), -ERANGE);
	assert_int_equal(json_parse_scaled("1e30", 3, &v), -ERANGE);
	assert_int_equal(json_parse_scaled("abc", 3, &v), -EINVAL);
	assert_int_equal(json_parse_scaled("1.2.3", 3, &v), -EINVAL);
	assert_int_equal(json_parse_i64("42", &v), 0);
	assert_int_equal(v, 42);
	double d;
	assert_int_equal(json_parse_double("2.5", &d), 0);
	assert_true(d == 2.5);
}

static int teardown(void **state)
{
	(void)state;
	fx_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_errors_have_positions),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_string_limit),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_skip_value),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_file_buffer_boundaries),
		cmocka_unit_test(test_scaled),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
