#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t size_bytes;
	size_t off_bytes;
	max_align_t data[];
};

enum { ARENA_CHUNK_BYTES = 64 * 1024 };

void arena_init(struct arena *a, size_t cap_bytes)
{
	a->head = NULL;
	a->used_bytes = 0;
	a->cap_bytes = cap_bytes;
}

void *arena_alloc(struct arena *a, size_t size_bytes)
{
	const size_t align = sizeof(max_align_t);
	size_t need = (size_bytes + align - 1) / align * align;
	if (need < size_bytes)
		return NULL;
	struct arena_chunk *c = a->head;
	if (!c || c->size_bytes - c->off_bytes < need) {
		size_t chunk = need > ARENA_CHUNK_BYTES ? need : ARENA_CHUNK_BYTES;
		if (chunk > a->cap_bytes || a->used_bytes > a->cap_bytes - chunk)
			return NULL;
		c = malloc(sizeof *c + chunk);
		if (!c)
			return NULL;
		c->size_bytes = chunk;
		c->off_bytes = 0;
		c->next = a->head;
		a->head = c;
		a->used_bytes += chunk;
	}
	void *p = (char *)c->data + c->off_bytes;
	c->off_bytes += need;
	memset(p, 0, size_bytes);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used_bytes = 0;
}
