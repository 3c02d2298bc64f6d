#ifndef K3_UTIL_UNITS_H
#define K3_UTIL_UNITS_H

/* Human units, the one place they are spelled: bytes in binary units (B, KiB, ... PiB), times in
 * s / ms / us, counts in K / M / B / T. Each writes at most n bytes into buf (NUL included) and
 * returns buf. Two roundings, named where they are chosen:
 *   UNITS_SIG3  three significant digits, trailing zeros kept: "24.0 ms", "1.50 s", "207 MiB"
 *               (reports: compare, serve);
 *   N >= 0      fixed decimals: times as "%.3f s", "%.Nf ms", "%.2f us"; bytes as "%.Nf MiB"
 *               (the CLI's tables: N = 2; calibration's: times with N = 3). */

#include <stdbool.h>
#include <stddef.h>

enum { UNITS_SIG3 = -1 };

const char *units_bytes(double bytes, int decimals, char *buf, size_t n);
const char *units_time(double s, int decimals, char *buf, size_t n);
/* 2.780 T, 104.2 B, 443.9 M; thousands as "1.5 K" when with_k, else in full ("1500"). */
const char *units_count(double x, bool with_k, char *buf, size_t n);

#endif
