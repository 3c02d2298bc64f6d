#ifndef K3_FUZZ_SCRATCH_H
#define K3_FUZZ_SCRATCH_H

/* Scratch files for fuzz targets whose code reads paths (SQLite): one per process and name, in
 * /dev/shm when it exists (no disk writes per run), else $TMPDIR or /tmp. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/analyze/analyze.h"

static inline int fuzz_scratch_write(char *path, size_t n, const char *name, const uint8_t *data,
				     size_t size)
{
	struct stat st;
	const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : NULL;
	if (!dir)
		dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, n, "%s/k3fuzz-%ld-%s.db", dir, (long)getpid(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = size ? fwrite(data, 1, size, f) : 0;
	int bad = fclose(f) != 0 || w != size;
	return bad ? -1 : 0;
}

/* trace summary of a file, released at once. */
static inline int fuzz_summary(const char *path, const struct trace_summary_opts *o,
			       struct trace_summary *s, struct err *e)
{
	int rc = trace_summary_compute(s, path, o, e);
	if (!rc)
		trace_summary_release(s);
	return rc;
}

#endif
