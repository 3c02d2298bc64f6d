/* k3sim op KIND key=value... [--hw NAME|PATH] [--json]: predicted time of one op on one device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/cost.h"
#include "sim/ep.h"
#include "sim/opspec.h"
#include "sim/power.h"
#include "util/doc.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: k3sim op KIND key=value... [--hw NAME|PATH] [--clock boost|sustained|power|MHZ] [--json] [--graph]\n\n"
		     "Predicted time of one op on one GPU: cycles, what bounds it, FLOPs and bytes, its physical\n"
		     "floor, and whether a calibrated preset measured ops like it (else: extrapolated, the\n"
		     "physical model's form). Sizes are plain integers (elements, tokens, bytes); dtypes: %s.\n\n"
		     "  --hw NAME|PATH  hardware preset or YAML (default h200)\n"
		     "  --clock R       SM clock: boost (default; an op on its own), sustained (the power-limited\n"
		     "                  clock under continuous load, where the preset knows it), power (an op on\n"
		     "                  its own starts from an idle GPU: boost), or a clock in MHz (1830,\n"
		     "                  1830MHz: e.g. what a capture measured; not above the preset's boost).\n"
		     "                  Tensor and vector rates scale with it, HBM does not; a preset's\n"
		     "                  clock_bound_<class> keeps an op at its boost time down to that share\n"
		     "                  of boost (a roofline in the clock, measured on H200 GEMMs)\n"
		     "  --json          machine-readable: time_s, cycles, bound, flops, bytes, floor_s, clock, ...;\n"
		     "                  at --clock power also power: the op's power class, FLOP energy, draw at\n"
		     "                  boost and the clock it settles at run back to back (sim/power.h)\n"
		     "  --graph         launch latency of a CUDA graph instead of an eager launch\n\nkinds:\n",
		dtype_spellings());
	int n;
	const struct opspec_kind *kinds = opspec_kinds(&n);
	for (int i = 0; i < n; i++) {
		fprintf(out, "  %-13s %s\n               ", kinds[i].name, kinds[i].summary);
		for (const struct opspec_key *k = kinds[i].keys; k->name; k++)
			fprintf(out, " %s%s%s", k->name, k->def ? "=" : "", k->def ? (k->def[0] ? k->def : "-") : "");
		fprintf(out, "\n");
	}
	fprintf(out, "\nexample: k3sim op kda_decode b=64 h=96 k=128 v=128 state=fp32 --hw h200 --json\n");
}

int cmd_op(int argc, char **argv)
{
	const char *hw_name = "h200";
	bool json = false, graph = false;
	struct hw_clock_sel clock = {.regime = HW_CLOCK_BOOST};
	char why[200];
	const char *kind = NULL;
	const char *kv[64];
	int nkv = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (cli_is_help(s)) {
			usage(stdout);
			return 0;
		} else if (strcmp(s, "--json") == 0) {
			json = true;
		} else if (strcmp(s, "--graph") == 0) {
			graph = true;
		} else if (strcmp(s, "--clock") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "k3sim op: --clock takes boost, sustained, power or a clock in MHz\n");
				return 2;
			}
			if (hw_clock_sel_parse(argv[i + 1], &clock, why, sizeof why) < 0) {
				fprintf(stderr, "k3sim op: --clock: %s\n", why);
				return 2;
			}
			i++;
		} else if (strcmp(s, "--hw") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "k3sim op: --hw needs a value\n");
				return 2;
			}
			hw_name = argv[++i];
		} else if (s[0] == '-') {
			fprintf(stderr, "k3sim op: unknown option '%s'\n", s);
			return 2;
		} else if (!kind) {
			kind = s;
		} else if (nkv < 64) {
			kv[nkv++] = s;
		} else {
			fprintf(stderr, "k3sim op: too many arguments\n");
			return 2;
		}
	}
	if (!kind) {
		usage(stderr);
		return 2;
	}
	struct op op;
	struct err e;
	if (opspec_parse(kind, nkv, kv, &op, &e) < 0) {
		cli_error("op", &e);
		return 2;
	}

	struct hw hw;
	if (hw_load(&hw, hw_name, &e) < 0) {
		cli_error("op", &e);
		return 1;
	}
	if (hw_clock_sel_check(&hw, &clock, why, sizeof why) < 0) {
		fprintf(stderr, "k3sim op: --clock %s\n", why);
		return 2;
	}
	struct cost_opts opts = {.cuda_graph = graph, .clock = clock};
	struct op_cost c;
	sim_op_cost_ep(&hw, &op, &opts, &c);
	int64_t bytes = op_bytes(&op) + (op_is_comm(op.kind) ? op.comm_bytes : 0);
	struct sim_ep_traffic ept = {0};
	bool ep_model = op.ep.mode == EP_MODE_NORMAL || op.ep.mode == EP_MODE_LOW_LATENCY;
	if (ep_model) {
		/* what the kernels move per GPU, not the equivalent all-to-all's buffer */
		sim_ep_traffic(&hw, &op, &ept);
		bytes = (int64_t)(ept.nic_bytes + ept.nvlink_bytes);
	}
	if (json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "kind", op_kind_name(op.kind));
		jw_str(&w, "hw", hw.name);
		jw_bool(&w, "hw_calibrated", hw.calibrated);
		jw_f64(&w, "time_s", c.time_s);
		jw_f64(&w, "cycles", c.cycles);
		jw_str(&w, "bound", bound_name(c.bound));
		jw_f64(&w, "flops", op.flops);
		jw_i64(&w, "bytes", bytes);
		jw_f64(&w, "compute_s", c.compute_s);
		jw_f64(&w, "memory_s", c.memory_s);
		jw_f64(&w, "latency_s", c.latency_s);
		jw_f64(&w, "comm_s", c.comm_s);
		jw_f64(&w, "waves", c.waves);
		jw_f64(&w, "floor_s", c.floor_s);
		jw_str(&w, "clock", hw_clock_sel_kind(&clock));
		jw_f64(&w, "clock_hz", c.clock_hz);
		jw_bool(&w, "calibrated", c.calibrated);
		jw_bool(&w, "extrapolated", c.extrapolated);
		if (!(clock.given_hz > 0) && clock.regime == HW_CLOCK_POWER && !op_is_comm(op.kind)) {
			/* the power model's view (sim/power.h): the op on its own at boost */
			struct sim_power_op po;
			sim_power_op_cost(&hw, &op, &po);
			jw_begin_object(&w, "power");
			jw_str(&w, "class", hw_power_class_name(po.klass));
			jw_f64(&w, "flop_pj", sim_power_flop_j(&hw, po.klass) * 1e12);
			jw_f64(&w, "energy_flops", po.flops);
			jw_f64(&w, "welems", po.welems);
			jw_f64(&w, "boost_s", po.boost_s);
			jw_f64(&w, "draw_w", sim_power_draw_w(&hw, &po, hw.sm_clock_hz));
			jw_f64(&w, "steady_clock_hz", sim_power_steady_hz(&hw, &po));
			jw_end_object(&w);
		}
		jw_begin_object(&w, "bytes_by_kind");
		jw_i64(&w, "weights", op.bytes_weight);
		jw_i64(&w, "activations_in", op.bytes_act_in);
		jw_i64(&w, "activations_out", op.bytes_act_out);
		jw_i64(&w, "kv_read", op.bytes_kv_read);
		jw_i64(&w, "kv_write", op.bytes_kv_write);
		jw_i64(&w, "state_read", op.bytes_state_read);
		jw_i64(&w, "state_write", op.bytes_state_write);
		jw_end_object(&w);
		if (op.serial_steps)
			jw_i64(&w, "serial_steps", op.serial_steps);
		if (op.ep.mode != EP_MODE_NONE) {
			jw_begin_object(&w, "ep");
			jw_str(&w, "mode", sim_ep_mode_name(op.ep.mode));
			jw_i64(&w, "alltoall_bytes", op.comm_bytes);
			if (ep_model) {
				jw_f64(&w, "nic_bytes", ept.nic_bytes);
				jw_f64(&w, "nvlink_bytes", ept.nvlink_bytes);
				jw_f64(&w, "nodes_per_token", ept.nodes);
				jw_f64(&w, "ranks_per_token", ept.ranks);
			}
			jw_end_object(&w);
		}
		jw_end_object(&w);
		jw_finish(&w);
		return 0;
	}
	char t1[32], t2[32], t3[32], t4[32], b1[32];
	printf("%s on %s%s: %s (%.4g cycles at %.0f MHz, %s clock), %s-bound\n", op.name, hw.name,
	       hw.calibrated ? "" : " (datasheet)", cli_time(c.time_s, t1, sizeof t1), c.cycles, c.clock_hz / 1e6,
	       hw_clock_sel_kind(&clock), bound_name(c.bound));
	printf("  compute %s, memory %s, latency %s", cli_time(c.compute_s, t2, sizeof t2),
	       cli_time(c.memory_s, t3, sizeof t3), cli_time(c.latency_s, t4, sizeof t4));
	if (c.comm_s > 0)
		printf(", comm %s", cli_time(c.comm_s, t1, sizeof t1));
	printf("\n  %.4g FLOPs, %s moved", op.flops, cli_bytes((double)bytes, b1, sizeof b1));
	if (c.time_s > 0 && !op_is_comm(op.kind))
		printf(" (%.1f TFLOP/s, %.0f GB/s achieved)", op.flops / c.time_s / 1e12, (double)bytes / c.time_s / 1e9);
	if (op.serial_steps)
		printf("\n  %lld dependent chunk steps per (sequence, head) in %.0f wave(s)", (long long)op.serial_steps,
		       c.waves);
	if (ep_model) {
		char b2[32], b3[32];
		printf("\n  %s mode: %s over the NIC, %s over NVLink per GPU; a token reaches %.2f nodes, %.2f ranks "
		       "(the equivalent all-to-all: %s)",
		       sim_ep_mode_name(op.ep.mode), cli_bytes(ept.nic_bytes, b2, sizeof b2),
		       cli_bytes(ept.nvlink_bytes, b3, sizeof b3), ept.nodes, ept.ranks,
		       cli_bytes((double)op.comm_bytes, b1, sizeof b1));
	}
	printf("\n  floor %s (launch + peak FLOPs or bytes)", cli_time(c.floor_s, t2, sizeof t2));
	if (hw.calibrated)
		printf("; %s", c.extrapolated ? "extrapolated: outside what the calibration measured, the physical model's form"
			   : c.calibrated ? "calibrated: inside the measured range" : "no calibration for this op class");
	printf("\n");
	return 0;
}
