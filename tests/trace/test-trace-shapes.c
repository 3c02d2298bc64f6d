/* trace/shapes: framework records from emit_nvtx range texts and from Kineto cpu_op events kept
 * by the importer (trace_kineto_opts.cpu_ops). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "trace/import/import.h"
#include "trace/analyze/shapes.h"
#include "trace/db/tracedb.h"

static void test_emit_nvtx(void **state)
{
	(void)state;
	struct fw_call c;
	struct err e = {0};
	assert_int_equal(fw_call_parse("aten::mm, seq = 12, op_id = 88, sizes = [[1024, 2048], [2048, 768]], "
	                               "input_op_ids = [(86,0), (82,0)]",
	                               &c, &e),
	                 1);
	assert_string_equal(c.name, "aten::mm");
	assert_int_equal(c.n_in, 2);
	assert_int_equal(c.in[0].rank, 2);
	assert_int_equal(c.in[0].dim[0], 1024);
	assert_int_equal(c.in[1].dim[1], 768);
	assert_int_equal(c.in[1].arg, 1);
	assert_false(c.has_types);
	assert_int_equal(fw_tensor_elements(&c.in[0]), 1024 * 2048);
	/* non-tensor arguments are [] */
	assert_int_equal(fw_call_parse("aten::add, op_id = 20, sizes = [[256], [], []], input_op_ids = []", &c, &e), 1);
	assert_int_equal(c.n_in, 3);
	assert_int_equal(c.in[1].rank, -1);
	assert_int_equal(fw_tensor_elements(&c.in[1]), -1);
	/* emit_nvtx flattens tensor lists already; a bare name with seq only is not a record */
	assert_int_equal(fw_call_parse("aten::cat, op_id = 52, sizes = [[1, 256, 32], [1, 256, 32], []]", &c, &e), 1);
	assert_int_equal(c.n_in, 3);
	assert_int_equal(c.in[1].arg, 1);
	assert_int_equal(fw_call_parse("aten::mm, seq = 4", &c, &e), 0);
	assert_int_equal(fw_call_parse("prefill, op_id = 2", &c, &e), 0);
	assert_int_equal(fw_call_parse("cub::DeviceScan::InclusiveScan", &c, &e), 0);
	assert_int_equal(fw_call_parse("k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16", &c, &e), 0);
	assert_int_equal(fw_call_parse("", &c, &e), 0);
	/* a record without inputs */
	assert_int_equal(fw_call_parse("aten::empty, sizes = []", &c, &e), 1);
	assert_int_equal(c.n_in, 0);
}

static void test_kineto_text(void **state)
{
	(void)state;
	struct fw_call c;
	struct err e = {0};
	/* a tensor list (nested) flattened; its type applies to every tensor of the list */
	assert_int_equal(fw_call_parse("aten::cat, sizes = [[[1, 256, 32], [1, 256, 32]], []], types = [TensorList, Scalar]",
	                               &c, &e),
	                 1);
	assert_int_equal(c.n_in, 3);
	assert_int_equal(c.in[0].arg, 0);
	assert_int_equal(c.in[1].arg, 0);
	assert_int_equal(c.in[2].arg, 1);
	assert_true(c.has_types);
	assert_string_equal(c.in[2].type, "Scalar");
	assert_int_equal(fw_call_parse("aten::mul, sizes = [[4, 8], []], types = [c10::BFloat16, c10::BFloat16]", &c, &e), 1);
	assert_string_equal(c.in[0].type, "c10::BFloat16");
	assert_int_equal(c.in[1].rank, 0); /* a 0-d tensor: [] with a tensor type */
	assert_int_equal(fw_tensor_elements(&c.in[1]), 1);
	assert_int_equal(fw_call_parse("aten::_grouped_mm, sizes = [[64, 32], [4, 32, 16], [4], [], []], "
	                               "types = [c10::BFloat16, c10::BFloat16, int, , ]",
	                               &c, &e),
	                 1);
	assert_string_equal(c.in[2].type, "int");
	assert_string_equal(c.in[3].type, "");
	enum dtype d;
	assert_int_equal(fw_type_dtype("c10::BFloat16", &d), 0);
	assert_int_equal(d, DT_BF16);
	assert_int_equal(fw_type_dtype("float", &d), 0);
	assert_int_equal(d, DT_FP32);
	assert_int_equal(fw_type_dtype("c10::Float8_e4m3fn", &d), 0);
	assert_int_equal(d, DT_FP8);
	assert_int_equal(fw_type_dtype("long int", &d), -1);
	assert_int_equal(fw_type_bytes("long int"), 8);
	assert_int_equal(fw_type_bytes("bool"), 1);
	assert_int_equal(fw_type_bytes("Scalar"), 0);
}

static void test_bad(void **state)
{
	(void)state;
	struct fw_call c;
	struct err e = {0};
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[4, x]]", &c, &e), -EINVAL);
	assert_int_equal(e.col, 24);
	assert_non_null(strstr(e.msg, "expected a size"));
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[4, 8]", &c, &e), -EINVAL);
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[4, -8]]", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "negative"));
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[99999999999999999999]]", &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "out of range"));
	assert_int_equal(fw_call_parse("aten::mm, sizes = [4]", &c, &e), -EINVAL);
	assert_int_equal(fw_call_parse("aten::mm, sizes = [[1]], types = [float", &c, &e), -EINVAL);
	/* deep nesting is refused, not recursed into */
	char deep[200] = "aten::x, sizes = ";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	assert_int_equal(fw_call_parse(deep, &c, &e), -EINVAL);
	/* ranks and inputs beyond the bounds are counted, not overrun */
	assert_int_equal(fw_call_parse("aten::x, sizes = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]", &c, &e), 1);
	assert_true(c.truncated);
	assert_int_equal(c.in[0].rank, FW_RANK_MAX);
	char many[2048] = "aten::y, sizes = [";
	for (int i = 0; i < 40; i++)
		strcat(many, i ? ", [1]" : "[1]");
	strcat(many, "]");
	assert_int_equal(fw_call_parse(many, &c, &e), 1);
	assert_int_equal(c.n_in, 40);
	assert_int_equal(c.n_kept, FW_INPUTS_MAX);
	assert_true(c.truncated);
	/* overflowing products are an error value, not a wrap */
	assert_int_equal(fw_call_parse("aten::z, sizes = [[4294967296, 4294967296, 4294967296]]", &c, &e), 1);
	assert_int_equal(fw_tensor_elements(&c.in[0]), -ERANGE);
}

static const char kineto[] =
	"{\"traceEvents\": [\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, \"tid\": 7, \"ts\": 10, \"dur\": 5,\n"
	" \"args\": {\"External id\": 3, \"Input Dims\": [[64, 128], [128, 32]], \"Input type\": [\"c10::BFloat16\", "
	"\"c10::BFloat16\"]}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 7, \"tid\": 7, \"ts\": 20, \"dur\": 5,\n"
	" \"args\": {\"Input Dims\": [[[1, 2], [1, 2]], []], \"Input type\": [\"TensorList\", \"Scalar\"]}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 7, \"tid\": 7, \"ts\": 30, \"dur\": 1,\n"
	" \"args\": {\"External id\": 5}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"odd\", \"pid\": 7, \"tid\": 7, \"ts\": 40, \"dur\": 1,\n"
	" \"args\": {\"Input type\": [\"a,b[c]\"], \"Input Dims\": [[3]]}},\n"
	"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\", \"pid\": 7, \"tid\": 7, \"ts\": 9, \"dur\": 50}\n"
	"]}\n";

static int count_rows(struct trace_db *db, const char *path, char texts[][128], int max)
{
	struct err e = {0};
	assert_int_equal(trace_db_close(db, &e), 0);
	sqlite3 *s;
	assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(s,
	                                    "SELECT coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId)), "
	                                    "n.globalTid FROM NVTX_EVENTS n ORDER BY start",
	                                    -1, &st, NULL),
	                 SQLITE_OK);
	int n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n < max)
			snprintf(texts[n], 128, "%s", (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

static void test_import_cpu_ops(void **state)
{
	(void)state;
	char path[] = "/tmp/k3-shapes-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct trace_db *db;
	struct err e = {0};
	struct trace_import_stats st;
	/* without the option: no ranges (the importer's default output is unchanged) */
	assert_int_equal(trace_db_create(&db, path, &(struct trace_db_opts){.overwrite = true}, &e), 0);
	assert_int_equal(trace_import_kineto_mem(db, "t.json", kineto, sizeof kineto - 1, NULL, &st, &e), 0);
	assert_int_equal(st.cpu_ops, 0);
	char texts[8][128];
	assert_int_equal(count_rows(db, path, texts, 8), 0);
	/* with it: one range per cpu_op that has Input Dims */
	assert_int_equal(trace_db_create(&db, path, &(struct trace_db_opts){.overwrite = true}, &e), 0);
	struct trace_kineto_opts o = {.cpu_ops = true};
	assert_int_equal(trace_import_kineto_mem(db, "t.json", kineto, sizeof kineto - 1, &o, &st, &e), 0);
	assert_int_equal(st.cpu_ops, 3);
	assert_int_equal(count_rows(db, path, texts, 8), 3);
	assert_string_equal(texts[0], "aten::mm, sizes = [[64, 128], [128, 32]], types = [c10::BFloat16, c10::BFloat16]");
	assert_string_equal(texts[1], "aten::cat, sizes = [[[1, 2], [1, 2]], []], types = [TensorList, Scalar]");
	assert_string_equal(texts[2], "odd, sizes = [[3]], types = [a;b(c)]");
	struct fw_call c;
	assert_int_equal(fw_call_parse(texts[0], &c, &e), 1);
	assert_int_equal(c.in[0].dim[1], 128);
	assert_string_equal(c.in[1].type, "c10::BFloat16");
	assert_int_equal(fw_call_parse(texts[2], &c, &e), 1);
	assert_string_equal(c.in[0].type, "a;b(c)");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emit_nvtx),
		cmocka_unit_test(test_kineto_text),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_import_cpu_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
