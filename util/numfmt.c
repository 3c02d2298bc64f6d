#include "util/numfmt.h"

#include <math.h>
#include <stdlib.h>

const char *util_double_str(char *buf, size_t n, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "null");
		return buf;
	}
	if (v == 0) {
		snprintf(buf, n, signbit(v) ? "-0" : "0");
		return buf;
	}
	if (fabs(v) < 9007199254740992.0 && v == floor(v)) {
		snprintf(buf, n, "%.0f", v); /* an integer: no exponent, no ".0" */
		return buf;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, n, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* fewer digits may do (0.1 at 15 digits is already shortest; %g drops trailing zeros) */
	return buf;
}

void util_json_double(FILE *f, double v)
{
	char buf[UTIL_DOUBLE_STR_BYTES];
	fputs(util_double_str(buf, sizeof buf, v), f);
}
