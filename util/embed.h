#ifndef K3_UTIL_EMBED_H
#define K3_UTIL_EMBED_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

/* A file compiled into the binary by tools/embed.c. Tables end with an entry whose name is NULL.
 * data is NUL-terminated; size_bytes excludes the NUL. */
struct embedded_file {
	const char *name;
	const char *data;
	size_t size_bytes;
};

/* The entry named `name`, or NULL. */
const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name);

/* The same, or NULL with e set to "unknown <what> 'x' (did you mean 'y'?)" or, with no close
 * name, the list of presets. */
const struct embedded_file *embedded_lookup(const struct embedded_file *table, const char *name,
					    const char *what, struct err *e);

/* The table's names, NULL-terminated, in names[cap] (at most cap - 1 of them). */
const char *const *embedded_names(const struct embedded_file *table, const char **names, size_t cap);

/* A name the user means as a file rather than a preset: it has a '/' or a .yaml, .yml or .json
 * suffix. */
bool embedded_is_path(const char *s);

/* Parses len_bytes of text (NUL-terminated) into obj; label names it in errors: the file's path,
 * or "<KIND NAME>" for an embedded file (KIND: "preset", "scenario", "rules"). */
typedef int (*embedded_parse_fn)(void *obj, const char *label, const char *text, size_t len_bytes,
                                 struct err *e);

/* The one preset-or-path loader (hw, model, scenario, sweep, rules): a path (embedded_is_path)
 * is read and parsed under its own name; anything else is the embedded file of that name in
 * table, or -ENOENT with embedded_lookup's message ("unknown <what> 'x' (did you mean ...)").
 * Returns parse's result, or the read's error (-ENOENT, -EIO, ...). obj is parse's to fill. */
int embedded_load(const struct embedded_file *table, const char *what, const char *label_kind,
                  const char *name_or_path, embedded_parse_fn parse, void *obj, struct err *e);

/* A path written in `file`, made relative to that file's directory, in place when it fits in cap:
 * "model.yaml" in "dir/s.yaml" becomes "dir/model.yaml". Absolute paths, paths in an embedded file
 * ("<...>") and files named without a directory stay as they are. Callers that also take preset
 * names resolve only what embedded_is_path calls a path. */
void embedded_resolve_relative(char *path, size_t cap, const char *file);

#endif
