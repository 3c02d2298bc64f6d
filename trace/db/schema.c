#include "trace/db/schema.h"

#define WRITTEN_HEAD 1
#define WRITTEN_INT 1
#define WRITTEN_INTZ 1
#define WRITTEN_INTN 1
#define WRITTEN_RAW 1
#define WRITTEN_ID 1
#define WRITTEN_IDZ 1
#define WRITTEN_NONE 0
#define COLUMN(c, f, how, absent) {#c, WRITTEN_##how},

static const struct trace_schema_column kernel[] = {TRACE_KERNEL_COLUMNS(COLUMN)};
static const struct trace_schema_column memcpy_[] = {TRACE_MEMCPY_COLUMNS(COLUMN)};
static const struct trace_schema_column memset_[] = {TRACE_MEMSET_COLUMNS(COLUMN)};
static const struct trace_schema_column api[] = {TRACE_API_COLUMNS(COLUMN)};

#define TABLE(name, cols, n) {name, cols, (int)(sizeof cols / sizeof cols[0]), n}
const struct trace_schema_table trace_schema_tables[TRACE_SCHEMA_COUNT] = {
	[TRACE_SCHEMA_KERNEL] = TABLE("CUPTI_ACTIVITY_KIND_KERNEL", kernel, TRACE_KERNEL_NCOLS),
	[TRACE_SCHEMA_MEMCPY] = TABLE("CUPTI_ACTIVITY_KIND_MEMCPY", memcpy_, TRACE_MEMCPY_NCOLS),
	[TRACE_SCHEMA_MEMSET] = TABLE("CUPTI_ACTIVITY_KIND_MEMSET", memset_, TRACE_MEMSET_NCOLS),
	[TRACE_SCHEMA_API] = TABLE("CUPTI_ACTIVITY_KIND_RUNTIME", api, TRACE_API_NCOLS),
};

void trace_schema_written_names(const struct trace_schema_table *t, const char **names)
{
	int n = 0;
	for (int i = 0; i < t->n_columns; i++)
		if (t->columns[i].written)
			names[n++] = t->columns[i].name;
}
