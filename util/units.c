#include "util/units.h"

#include <math.h>
#include <stdio.h>

/* Three significant digits, trailing zeros kept (24.0 ms, 1.50 s, 597 s). */
static void three(double v, const char *unit, char *buf, size_t n)
{
	double a = fabs(v);
	snprintf(buf, n, a >= 99.95 ? "%.0f %s" : a >= 9.995 ? "%.1f %s" : "%.2f %s", v, unit);
}

const char *units_bytes(double b, int decimals, char *buf, size_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = 0;
	double v = b;
	while (fabs(v) >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f B", v);
	else if (decimals == UNITS_SIG3)
		snprintf(buf, n, fabs(v) >= 100 ? "%.0f %s" : fabs(v) >= 10 ? "%.1f %s" : "%.2f %s", v, units[u]);
	else
		snprintf(buf, n, "%.*f %s", decimals, v, units[u]);
	return buf;
}

const char *units_time(double s, int decimals, char *buf, size_t n)
{
	if (decimals == UNITS_SIG3) {
		if (s >= 1.0)
			three(s, "s", buf, n);
		else if (s >= 1e-3)
			three(s * 1e3, "ms", buf, n);
		else
			three(s * 1e6, "us", buf, n);
	} else if (s >= 1.0) {
		snprintf(buf, n, "%.3f s", s);
	} else if (s >= 1e-3) {
		snprintf(buf, n, "%.*f ms", decimals, s * 1e3);
	} else {
		snprintf(buf, n, "%.2f us", s * 1e6);
	}
	return buf;
}

const char *units_count(double x, bool with_k, char *buf, size_t n)
{
	if (fabs(x) >= 1e12)
		snprintf(buf, n, "%.3f T", x / 1e12);
	else if (fabs(x) >= 1e9)
		snprintf(buf, n, "%.1f B", x / 1e9);
	else if (fabs(x) >= 1e6)
		snprintf(buf, n, "%.1f M", x / 1e6);
	else if (with_k && fabs(x) >= 1e3)
		snprintf(buf, n, "%.1f K", x / 1e3);
	else
		snprintf(buf, n, "%.0f", x);
	return buf;
}
