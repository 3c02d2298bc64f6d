/* k3sim: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"model", cmd_model, "inventory of a model preset or an HF config.json"},
	{"run", cmd_run, "TTFT, TPOT and HBM per GPU for a scenario (default: the embedded one)"},
	{"op", cmd_op, "predicted time of one op on one device"},
	{"trace", cmd_trace, "capture, import, summarize and export kernel traces"},
	{"calibrate", cmd_calibrate, "fit a hardware preset to measured kernels"},
	{"sweep", cmd_sweep, "evaluate the cartesian product of a scenario's sweep axes (SQLite, CSV)"},
	{"merge", cmd_merge, "join the shard databases of a sweep"},
	{"compare", cmd_compare, "designs side by side over context: Markdown/HTML report with charts"},
	{"serve", cmd_serve, "requests over time: TTFT/TPOT/ITL percentiles, goodput, prefix cache, P/D"},
	{"plan", cmd_plan, "the best deployment under TTFT/TPOT SLOs: Pareto fronts, P/D, per GPU budget"},
	{"check", cmd_check, "physical sanity of hardware presets: floors, growth, steps (random draws)"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: k3sim COMMAND [ARGS...]\n\n"
		     "A cycle-aware performance simulator and trace analyzer for Kimi K3-class models.\n\n"
		     "commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-8s %s\n", c->name, c->summary);
	fprintf(out, "\n'k3sim COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("k3sim %s\n", K3SIM_VERSION);
		return 0;
	}
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(argv[1], c->name) == 0)
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "k3sim: unknown command '%s'; see 'k3sim --help'\n", argv[1]);
	return 2;
}
