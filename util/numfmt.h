#ifndef K3_UTIL_NUMFMT_H
#define K3_UTIL_NUMFMT_H

/* Numbers as text that reads back exactly: every JSON number k3sim writes goes through here, so
 * 76426648.5 stays 76426648.5 (not 7.64266e+07) and 0.1 stays 0.1 (not 0.10000000000000001). */

#include <stddef.h>
#include <stdio.h>

enum { UTIL_DOUBLE_STR_BYTES = 32 }; /* always enough */

/* The shortest decimal text (printf %.Ng, N from 1 to 17) that strtod reads back as exactly v;
 * integers up to 2^53 without an exponent. "null" for NaN and infinities, which JSON cannot
 * spell. Writes at most n bytes including the NUL; returns buf. */
const char *util_double_str(char *buf, size_t n, double v);

/* The same, written to f. */
void util_json_double(FILE *f, double v);

#endif
