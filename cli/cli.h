#ifndef K3_CLI_CLI_H
#define K3_CLI_CLI_H

/* Helpers shared by the subcommands: error printing, human units, and a small JSON writer. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* "k3sim CMD: file:line:col: error: ..." on stderr. */
void cli_error(const char *cmd, const struct err *e);

/* Human units into buf (returns buf): "1.42 TiB", "207.0 MiB"; "412.3 ms", "25.1 us". */
const char *cli_bytes(double bytes, char *buf, size_t n);
const char *cli_time(double s, char *buf, size_t n);
const char *cli_count(double x, char *buf, size_t n); /* 2.780 T, 104.2 B, 443.9 M */

/* A streaming JSON writer: keys and values are escaped, commas placed automatically. */
struct jw {
	FILE *out;
	int depth;
	bool need_comma[32];
};
void jw_init(struct jw *w, FILE *out);
void jw_begin_object(struct jw *w, const char *key); /* key NULL inside arrays / at top */
void jw_end_object(struct jw *w);
void jw_begin_array(struct jw *w, const char *key);
void jw_end_array(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_f64(struct jw *w, const char *key, double v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_finish(struct jw *w); /* trailing newline */

/* True if argv[i] is -h or --help. */
bool cli_is_help(const char *arg);

#endif
