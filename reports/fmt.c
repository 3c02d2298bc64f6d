#include "reports/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/units.h"

const char *fmt_bytes(double b, char *buf, size_t cap)
{
	return units_bytes(b, UNITS_SIG3, buf, cap);
}

const char *fmt_time(double s, char *buf, size_t cap)
{
	return units_time(s, UNITS_SIG3, buf, cap);
}

const char *fmt_int(int64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
	size_t o = 0;
	if (v < 0 && o + 1 < cap)
		buf[o++] = '-';
	for (int i = 0; i < n && o + 1 < cap; i++) {
		if (i > 0 && (n - i) % 3 == 0 && o + 1 < cap)
			buf[o++] = ',';
		if (o + 1 < cap)
			buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

const char *fmt_tokens(int64_t t, char *buf, size_t cap)
{
	if (t >= 1048576 && t % 1048576 == 0)
		snprintf(buf, cap, "%lldM", (long long)(t / 1048576));
	else if (t >= 1024 && t % 1024 == 0)
		snprintf(buf, cap, "%lldK", (long long)(t / 1024));
	else
		fmt_int(t, buf, cap);
	return buf;
}

const char *fmt_sig4(double v, char *buf, size_t cap)
{
	if (!isfinite(v)) {
		snprintf(buf, cap, "-");
		return buf;
	}
	double a = fabs(v);
	if (a >= 1000 || a == 0) {
		snprintf(buf, cap, "%.0f", v);
		return buf;
	}
	int decimals = 3 - (int)floor(log10(a));
	if (decimals > 9)
		decimals = 9;
	/* Rounding may carry into a new digit (999.96 -> 1000.0): one decimal less then. */
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
	double r = fabs(atof(tmp));
	if (r >= 1000)
		snprintf(buf, cap, "%.0f", v);
	else if (decimals > 0 && r >= pow(10, 4 - decimals))
		snprintf(buf, cap, "%.*f", decimals - 1, v);
	else
		snprintf(buf, cap, "%s", tmp);
	return buf;
}

const char *fmt_count(double x, char *buf, size_t cap)
{
	return units_count(x, false, buf, cap);
}

void fmt_md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}
