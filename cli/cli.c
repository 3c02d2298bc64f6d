#include "cli/cli.h"

#include <math.h>
#include <string.h>

#include "util/units.h"

void cli_error(const char *cmd, const struct err *e)
{
	char buf[1024];
	fprintf(stderr, "k3sim %s: %s\n", cmd, err_format(e, buf, sizeof buf));
}

const char *cli_bytes(double b, char *buf, size_t n)
{
	return units_bytes(b, 2, buf, n);
}

const char *cli_time(double s, char *buf, size_t n)
{
	return units_time(s, 2, buf, n);
}

const char *cli_count(double x, char *buf, size_t n)
{
	return units_count(x, true, buf, n);
}

bool cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}
