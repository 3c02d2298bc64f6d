#ifndef K3_CLI_CLI_H
#define K3_CLI_CLI_H

/* Helpers shared by the subcommands: error printing, human units; JSON through util/jsonw.h. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/jsonw.h" /* struct jw: the --json writer */

/* "k3sim CMD: file:line:col: error: ..." on stderr. */
void cli_error(const char *cmd, const struct err *e);

/* Human units into buf (returns buf), the CLI's rounding of util/units.h: "1.42 TiB",
 * "207.03 MiB"; "412.30 ms", "25.10 us". */
const char *cli_bytes(double bytes, char *buf, size_t n);
const char *cli_time(double s, char *buf, size_t n);
const char *cli_count(double x, char *buf, size_t n); /* 2.780 T, 104.2 B, 443.9 M */

/* True if argv[i] is -h or --help. */
bool cli_is_help(const char *arg);

#endif
