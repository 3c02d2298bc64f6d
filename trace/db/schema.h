#ifndef K3_TRACE_SCHEMA_H
#define K3_TRACE_SCHEMA_H

/* The activity tables' columns, each written once (issue 15): the CREATE statements, the INSERT
 * column lists and row buffers (trace/db/tracedb.c) and the nsys-export reader (trace/import/
 * import_sqlite.c) are generated from these lists, so adding a column is one line here and no
 * index shifts anywhere. Order is nsys' (PRAGMA table_info of an nsys export); every column is
 * INTEGER.
 *
 * X(column, field, how, absent): column is the nsys column name; field the member of the record
 * struct (trace/db/tracedb.h) or, for ID columns, the writer's local string id; absent the value an
 * importer takes when the column is NULL or missing. how:
 *   HEAD  the GPU activity head (times, device, stream, ids): written from field, read by
 *         hand (the importer shifts times and renumbers devices and processes)
 *   INT   written from field; read into it
 *   INTZ  INT, stored NULL when 0 (graph node ids: 0 means no graph)
 *   INTN  INT, stored NULL when negative (unknown peer device)
 *   RAW   written from field; read by hand (API times and class)
 *   ID    a StringIds id the writer interns; read by hand
 *   IDZ   ID, stored NULL when 0 (no such string)
 *   NONE  nsys has the column; k3sim creates it and leaves it NULL */

/* The head every GPU activity table begins with. */
#define TRACE_GPU_HEAD_COLUMNS(X)                                       \
	X(start, start_ns, HEAD, 0)                                     \
	X(end, end_ns, HEAD, 0)                                         \
	X(deviceId, device_id, HEAD, 0)                                 \
	X(contextId, context_id, HEAD, 0)                               \
	X(greenContextId, -, NONE, 0)                                   \
	X(streamId, stream_id, HEAD, 0)                                 \
	X(correlationId, correlation_id, HEAD, 0)                       \
	X(globalPid, global_pid, HEAD, 0)

#define TRACE_KERNEL_COLUMNS(X)                                         \
	TRACE_GPU_HEAD_COLUMNS(X)                                       \
	X(demangledName, name_id, ID, -1)                               \
	X(shortName, short_id, ID, -1)                                  \
	X(mangledName, mangled_id, IDZ, -1)                             \
	X(launchType, launch_type, INT, 0)                              \
	X(cacheConfig, cache_config, INT, 0)                            \
	X(registersPerThread, registers_per_thread, INT, 0)             \
	X(gridX, grid_x, INT, 0)                                        \
	X(gridY, grid_y, INT, 0)                                        \
	X(gridZ, grid_z, INT, 0)                                        \
	X(blockX, block_x, INT, 0)                                      \
	X(blockY, block_y, INT, 0)                                      \
	X(blockZ, block_z, INT, 0)                                      \
	X(staticSharedMemory, static_shared_bytes, INT, 0)              \
	X(dynamicSharedMemory, dynamic_shared_bytes, INT, 0)            \
	X(localMemoryPerThread, local_bytes_per_thread, INT, 0)         \
	X(localMemoryTotal, local_bytes_total, INT, 0)                  \
	X(gridId, grid_id, INT, 0)                                      \
	X(sharedMemoryExecuted, shared_memory_executed_bytes, INT, 0)   \
	X(graphNodeId, graph_node_id, INTZ, 0)                          \
	X(sharedMemoryLimitConfig, -, NONE, 0)

#define TRACE_MEMCPY_COLUMNS(X)                                         \
	TRACE_GPU_HEAD_COLUMNS(X)                                       \
	X(bytes, bytes, INT, 0)                                         \
	X(copyKind, copy_kind, INT, 0)                                  \
	X(deprecatedSrcId, -, NONE, 0)                                  \
	X(srcKind, src_kind, INT, 0)                                    \
	X(dstKind, dst_kind, INT, 0)                                    \
	X(srcDeviceId, src_device_id, INTN, -1)                         \
	X(srcContextId, -, NONE, 0)                                     \
	X(dstDeviceId, dst_device_id, INTN, -1)                         \
	X(dstContextId, -, NONE, 0)                                     \
	X(migrationCause, -, NONE, 0)                                   \
	X(graphNodeId, graph_node_id, INTZ, 0)                          \
	X(virtualAddress, -, NONE, 0)

#define TRACE_MEMSET_COLUMNS(X)                                         \
	TRACE_GPU_HEAD_COLUMNS(X)                                       \
	X(value, value, INT, 0)                                         \
	X(bytes, bytes, INT, 0)                                         \
	X(graphNodeId, graph_node_id, INTZ, 0)                          \
	X(memKind, mem_kind, INT, 0)

/* CUPTI_ACTIVITY_KIND_RUNTIME holds driver calls too (eventClass 1; the DRIVER view). */
#define TRACE_API_COLUMNS(X)                                            \
	X(start, start_ns, RAW, 0)                                      \
	X(end, end_ns, RAW, 0)                                          \
	X(eventClass, kind, RAW, 0)                                     \
	X(globalTid, global_tid, RAW, 0)                                \
	X(correlationId, correlation_id, INT, 0)                        \
	X(nameId, name_id, ID, -1)                                      \
	X(returnValue, return_value, INT, 0)                            \
	X(callchainId, -, NONE, 0)

/* The column's index among the columns k3sim writes and reads (all but NONE), per table:
 * TRACE_KERNEL_COL_gridX, TRACE_MEMCPY_COL_bytes, ... and TRACE_<T>_NCOLS. */
#define TRACE_COL_ENUM_HEAD(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_INT(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_INTZ(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_INTN(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_RAW(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_ID(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_IDZ(T, c) T##_COL_##c,
#define TRACE_COL_ENUM_NONE(T, c)
#define TRACE_KERNEL_ENUM(c, f, how, absent) TRACE_COL_ENUM_##how(TRACE_KERNEL, c)
#define TRACE_MEMCPY_ENUM(c, f, how, absent) TRACE_COL_ENUM_##how(TRACE_MEMCPY, c)
#define TRACE_MEMSET_ENUM(c, f, how, absent) TRACE_COL_ENUM_##how(TRACE_MEMSET, c)
#define TRACE_API_ENUM(c, f, how, absent) TRACE_COL_ENUM_##how(TRACE_API, c)
enum { TRACE_KERNEL_COLUMNS(TRACE_KERNEL_ENUM) TRACE_KERNEL_NCOLS };
enum { TRACE_MEMCPY_COLUMNS(TRACE_MEMCPY_ENUM) TRACE_MEMCPY_NCOLS };
enum { TRACE_MEMSET_COLUMNS(TRACE_MEMSET_ENUM) TRACE_MEMSET_NCOLS };
enum { TRACE_API_COLUMNS(TRACE_API_ENUM) TRACE_API_NCOLS };

/* A table's column, for generating SQL: its name and whether k3sim writes it. */
struct trace_schema_column {
	const char *name;
	int written; /* 0 for NONE */
};
struct trace_schema_table {
	const char *table;
	const struct trace_schema_column *columns;
	int n_columns;   /* all, NONE included */
	int n_written;   /* TRACE_<T>_NCOLS */
};
/* The four activity tables, in CREATE order: kernel, memcpy, memset, runtime API. */
enum { TRACE_SCHEMA_KERNEL, TRACE_SCHEMA_MEMCPY, TRACE_SCHEMA_MEMSET, TRACE_SCHEMA_API, TRACE_SCHEMA_COUNT };
extern const struct trace_schema_table trace_schema_tables[TRACE_SCHEMA_COUNT];

/* The names of the written columns, in order, for the importer's SELECT (names[n_written]). */
void trace_schema_written_names(const struct trace_schema_table *t, const char **names);

#endif
