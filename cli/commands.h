#ifndef K3_CLI_COMMANDS_H
#define K3_CLI_COMMANDS_H

/* One entry point per subcommand: argv[0] is the subcommand's name. Each returns the process exit
 * status: 0 success, 1 a failure it reported, 2 bad usage. Every command answers --help. */
int cmd_model(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_op(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_compare(int argc, char **argv);
/* `k3sim serve`: a serving simulation (serve/serve.h). */
int cmd_serve(int argc, char **argv);
/* `k3sim plan`: the best deployment under SLOs (plan/plan.h). */
int cmd_plan(int argc, char **argv);
/* `k3sim check`: physical sanity of hardware presets on random ops and scenarios. */
int cmd_check(int argc, char **argv);
/* `k3sim trace capture ...` (argv[0] is "capture"); called by cmd_trace. */
int cmd_trace_capture(int argc, char **argv);

/* `k3sim trace validate ...` (argv[0] is "validate"); called by cmd_trace. */
int cmd_trace_validate(int argc, char **argv);
/* `k3sim trace profile ...` (argv[0] is "profile"); called by cmd_trace. */
int cmd_trace_profile(int argc, char **argv);
/* `k3sim calibrate ...`: fit a hardware preset to measured kernels. */
int cmd_calibrate(int argc, char **argv);

#endif
