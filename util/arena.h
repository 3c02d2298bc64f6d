#ifndef K3_UTIL_ARENA_H
#define K3_UTIL_ARENA_H

#include <stddef.h>

/* A bump allocator with a hard cap: allocations come from chunks that are freed all at once.
 * Everything a parser builds lives in one arena, so a failure midway frees cleanly. */
struct arena {
	struct arena_chunk *head;
	size_t used_bytes;  /* sum of chunk sizes allocated so far */
	size_t cap_bytes;   /* arena_alloc fails once used_bytes would pass this */
};

void arena_init(struct arena *a, size_t cap_bytes);
/* Zeroed memory aligned for any type, or NULL when the cap is reached or malloc fails. */
void *arena_alloc(struct arena *a, size_t size_bytes);
/* A NUL-terminated copy of s[0..len). */
char *arena_strndup(struct arena *a, const char *s, size_t len);
void arena_release(struct arena *a);

#endif
