/* k3sim compare: placeholder until the report lands. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "k3sim compare: not yet\n");
	return 1;
}
