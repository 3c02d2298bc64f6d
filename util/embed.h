#ifndef K3_UTIL_EMBED_H
#define K3_UTIL_EMBED_H

#include <stddef.h>

/* A file compiled into the binary by tools/embed.c. Tables end with an entry whose name is NULL.
 * data is NUL-terminated; size_bytes excludes the NUL. */
struct embedded_file {
	const char *name;
	const char *data;
	size_t size_bytes;
};

/* The entry named `name`, or NULL. */
const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name);

#endif
