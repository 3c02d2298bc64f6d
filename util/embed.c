#include "util/embed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/doc.h"

const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name)
{
	for (const struct embedded_file *f = table; f && f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

const char *const *embedded_names(const struct embedded_file *table, const char **names, size_t cap)
{
	size_t n = 0;
	for (const struct embedded_file *f = table; f && f->name && n + 1 < cap; f++)
		names[n++] = f->name;
	names[n] = NULL;
	return names;
}

const struct embedded_file *embedded_lookup(const struct embedded_file *table, const char *name,
					    const char *what, struct err *e)
{
	const struct embedded_file *f = embedded_find(table, name);
	if (f)
		return f;
	const char *names[64];
	embedded_names(table, names, 64);
	const char *hint = err_suggest(name, names);
	if (hint) {
		err_set(e, NULL, 0, 0, "unknown %s '%s' (did you mean '%s'?)", what, name, hint);
		return NULL;
	}
	char list[400] = "";
	for (size_t i = 0; names[i]; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
	}
	err_set(e, NULL, 0, 0, "unknown %s '%s' (presets: %s; or give a path)", what, name, list);
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

bool embedded_is_path(const char *s)
{
	return strchr(s, '/') || ends_with(s, ".yaml") || ends_with(s, ".yml") || ends_with(s, ".json");
}

int embedded_load(const struct embedded_file *table, const char *what, const char *label_kind,
                  const char *name_or_path, embedded_parse_fn parse, void *obj, struct err *e)
{
	if (!embedded_is_path(name_or_path)) {
		const struct embedded_file *f = embedded_lookup(table, name_or_path, what, e);
		if (!f)
			return -ENOENT;
		char label[96];
		snprintf(label, sizeof label, "<%s %s>", label_kind, f->name);
		return parse(obj, label, f->data, f->size_bytes, e);
	}
	char *buf;
	size_t len;
	int rc = doc_read_file(name_or_path, &buf, &len, e);
	if (rc < 0)
		return rc;
	rc = parse(obj, name_or_path, buf, len, e);
	free(buf);
	return rc;
}

void embedded_resolve_relative(char *path, size_t cap, const char *file)
{
	if (!path[0] || path[0] == '/' || file[0] == '<')
		return;
	const char *slash = strrchr(file, '/');
	if (!slash)
		return;
	char joined[4096];
	int n = snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - file), file, path);
	if (n > 0 && (size_t)n < sizeof joined && (size_t)n < cap)
		snprintf(path, cap, "%s", joined);
}
