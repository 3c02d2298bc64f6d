/* placeholder while the module is written; replaced before the first landing */
#include <stdio.h>
#include "cli/commands.h"
int cmd_op(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "k3sim %s: not built yet\n", argv[0]);
	return 1;
}
