#ifndef K3_REPORTS_FMT_H
#define K3_REPORTS_FMT_H

/* Number formatting shared by the report writers. Every function writes into buf and returns it. */

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* 1.42 TiB, 207.0 MiB, 656 B (binary units, 3 significant digits or more). */
const char *fmt_bytes(double bytes, char *buf, size_t cap);
/* 412.3 ms, 25.1 us, 1.234 s. */
const char *fmt_time(double s, char *buf, size_t cap);
/* A context length: powers of two of 1024 as 4K, 128K, 1M; anything else with separators
 * (5,461). */
const char *fmt_tokens(int64_t tokens, char *buf, size_t cap);
/* 1,234,567 */
const char *fmt_int(int64_t v, char *buf, size_t cap);
/* A table value: 4 significant digits in fixed notation (0.3546, 17.98, 123.4), integers of
 * 1000 and above in full (12345); the number of decimals says the precision. */
const char *fmt_sig4(double v, char *buf, size_t cap);
/* 2.780 T, 104.2 B, 443.9 M parameters. */
const char *fmt_count(double v, char *buf, size_t cap);

/* Text as one Markdown table cell: '|' escaped, line breaks as spaces. Writes to f. */
void fmt_md_cell(FILE *f, const char *s);

#endif
