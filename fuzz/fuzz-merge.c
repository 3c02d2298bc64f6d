/* Fuzz target: trace merge (trace/import/import_sqlite.c: pid and GPU identity maps, device maps,
 * re-interned strings) of two databases cut from one input: the first two bytes (big-endian) are
 * the length of the first file, the rest is the second. Any input must give 0 or an error with a message, never a crash or a leak.
 * Seeds: pairs of small databases (fuzz/corpus/merge). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz/scratch.h"
#include "trace/import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t rest = size - 2, cut = (size_t)data[0] << 8 | data[1];
	if (cut > rest)
		cut = rest;
	char a[512], b[512];
	if (fuzz_scratch_write(a, sizeof a, "a", data + 2, cut) ||
	    fuzz_scratch_write(b, sizeof b, "b", data + 2 + cut, rest - cut))
		return 0;
	const char *inputs[] = {a, b, a};
	struct trace_db_opts o = {.max_strings = 4096, .max_string_bytes = 1 << 20, .batch_rows = 256};
	struct trace_import_stats st;
	struct err e = {0};
	/* a file merged with itself, too: every process and GPU seen twice */
	int rc = trace_merge(":memory:", inputs, 3, &o, &st, &e);
	if (rc && !e.msg[0])
		abort();
	unlink(a);
	unlink(b);
	return 0;
}
