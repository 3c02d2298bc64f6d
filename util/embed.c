#include "util/embed.h"

#include <string.h>

const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name)
{
	for (const struct embedded_file *f = table; f && f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}
