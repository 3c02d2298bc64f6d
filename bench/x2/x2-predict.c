/* x2-predict: the simulator's prediction of the two-GPU experiments of issue 20, built from the
 * simulator's own pieces (sim_op_cost_ep for each op, sim_op_demands for its SM and HBM shares,
 * the timeline's SM admission and partition, sim_kcp_ops for KDA context parallelism), so that
 * bench/x2/compare.py can set them beside what bench/x2/run-x2-overlap-kcp.sh measured.
 *
 *   x2-predict overlap --rows R0[,R1] --touched G0[,G1] --a2a-bytes B --n-a2a N --n-gemm M
 *                      [--skew S] [--a2a-s T] [--gemm-s T0[,T1]] [--reserve SMS] [--hw NAME]
 *     Two EP ranks, each with N back-to-back all-to-alls (K3's dispatch payload; B = the
 *     equivalent even all-to-all's send buffer, as bench/calib/nccl-grid.py names it) on a
 *     communication stream, grouped across the ranks, and M (gate_up, down) grouped-GEMM pairs
 *     (its R rows over 448 experts, G of them touched, BF16) on a compute stream: each stream
 *     alone, then both released together, as the timeline runs them (a plain NCCL + cuBLAS
 *     overlap: no SMs reserved, GEMMs in 2-SM clusters). --skew: rank 1 released S seconds after
 *     rank 0 (negative: before), as the measurement's two processes were; each rank's times count
 *     from its own release. --a2a-s / --gemm-s: each op's work from measured times alone (one
 *     all-to-all back to back; one GEMM pair per rank, split as the model splits it) instead of
 *     its modeled cost, to test the sharing model by itself. --reserve: SMs kept for
 *     communication (compute on the rest), a what-if.
 *   x2-predict kcp --tokens T --heads H [--cp N] [--hw NAME]
 *     KDA context parallelism over N GPUs (default 2) as sim/step.c lays it out (sim_kcp_ops:
 *     zero-start pass of T/N tokens, then on every rank but the first the identity-start
 *     transition pass, the fixed-size state all-gather, kcp.scan, kcp.fixup), against the
 *     single-GPU prefill of T tokens; also without the transition pass (the model before it).
 *
 * Output: one `key=value` line per rank (overlap) or experiment (kcp), seconds, for scripts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"
#include "model/ops.h"
#include "sim/cost.h"
#include "sim/ep.h"
#include "sim/opspec.h"
#include "sim/step.h"
#include "reports/timeline.h"
#include "sim/timeline.h"

struct costed {
	struct op op;
	struct op_cost c;
	struct sim_demands d;
	double work_s; /* the time the timeline runs it for (its cost, or a measured time) */
};

static void demand(const struct hw *hw, struct costed *x)
{
	sim_op_cost_ep(hw, &x->op, NULL, &x->c);
	sim_op_demands(hw, &x->op, &x->c, &x->d);
	x->work_s = x->c.time_s;
}

static int cost(const struct hw *hw, const char *line, struct costed *x)
{
	struct err e;
	if (opspec_parse_line(line, &x->op, &e) < 0) {
		fprintf(stderr, "x2-predict: %s: %s\n", line, e.msg);
		return -1;
	}
	demand(hw, x);
	return 0;
}

/* Runs for a measured time instead: the same bytes over a longer time use less bandwidth (a kernel
 * keeps its SMs). */
static void measured(struct costed *x, double work_s)
{
	if (x->c.time_s > 0 && work_s > 0)
		x->d.hbm = (float)(x->d.hbm * x->c.time_s / work_s);
	x->work_s = work_s;
}

struct tl_mem {
	struct timeline tl;
	void *mem;
};

static int tl_open(struct tl_mem *t, int32_t events)
{
	int64_t b = tl_storage_bytes(events, 2 * events);
	t->mem = b > 0 ? aligned_alloc(64, (size_t)((b + 63) / 64 * 64)) : NULL;
	if (!t->mem) {
		fprintf(stderr, "x2-predict: out of memory\n");
		return -1;
	}
	tl_init(&t->tl, t->mem, events, 2 * events);
	return 0;
}

static int32_t add(struct timeline *tl, int stream, int32_t group, const char *name, const struct costed *x,
		   int32_t dep)
{
	int32_t id = tl_add_in_group(tl, stream, group, name, x->work_s, x->d.sm, x->d.hbm, &dep, dep >= 0 ? 1 : 0);
	if (id < 0)
		fprintf(stderr, "x2-predict: timeline: error %d\n", (int)id);
	else
		tl->ev[id].tail = x->d.tail;
	return id;
}

/* The end of a stream's last event after tl_run (0 when empty). */
static double stream_end(const struct timeline *tl, int s)
{
	int32_t last = tl->streams[s].last;
	return last >= 0 ? tl->ev[last].end_s : 0;
}

struct overlap_args {
	double rows[2], touched[2], bytes, skew_s, a2a_s, gemm_s[2];
	long n_a, n_g;
	int reserve_sms;
	const char *timeline_path; /* the overlapped pattern as Perfetto JSON, or NULL */
};

struct rank_result {
	double alone_a2a, alone_gemm, both_a2a, both_gemm;
};

/* One run: pattern 0 all-to-alls alone, 1 GEMMs alone, 2 both. */
static int overlap_run(const struct hw *hw, struct timeline *tl, const struct overlap_args *a, struct costed a2a[2],
		       struct costed up[2], struct costed down[2], int pattern, struct rank_result out[2])
{
	tl_reset(tl);
	int sa[2], sg[2];
	int32_t hold[2];
	double release[2] = {a->skew_s < 0 ? -a->skew_s : 0, a->skew_s > 0 ? a->skew_s : 0};
	for (int r = 0; r < 2; r++) {
		if (tl_partition(tl, r, (double)a->reserve_sms / (double)hw->sms, SIM_GEMM_CLUSTER_SMS) < 0)
			return -1;
		sa[r] = tl_stream(tl, r, TL_COMM, "comm");
		sg[r] = tl_stream(tl, r, TL_COMPUTE, "compute");
		int sh = tl_stream(tl, r, TL_COPY, "hold");
		if (sa[r] < 0 || sg[r] < 0 || sh < 0)
			return -1;
		/* the sleep kernel that holds the rank's streams until its release (takes no SMs) */
		struct costed h = {.work_s = release[r]};
		if ((hold[r] = add(tl, sh, -1, "hold", &h, -1)) < 0)
			return -1;
	}
	/* issued interleaved, as the measurement enqueues them; each stream keeps its order */
	long ia = 0;
	for (long ig = 0; ig <= a->n_g; ig++) {
		long upto = a->n_g ? (a->n_a * ig) / a->n_g : a->n_a;
		if (ig == a->n_g)
			upto = a->n_a;
		for (; pattern != 1 && ia < upto; ia++) {
			int32_t g = tl_group(tl);
			for (int r = 0; r < 2; r++)
				if (g < 0 || add(tl, sa[r], g, "alltoall", &a2a[r], ia == 0 ? hold[r] : -1) < 0)
					return -1;
		}
		if (pattern == 0 || ig == a->n_g)
			continue;
		for (int r = 0; r < 2; r++)
			if (add(tl, sg[r], -1, "gate_up", &up[r], ig == 0 ? hold[r] : -1) < 0 ||
			    add(tl, sg[r], -1, "down", &down[r], -1) < 0)
				return -1;
	}
	if (tl_run(tl) < 0)
		return -1;
	for (int r = 0; r < 2; r++) {
		double ea = a->n_a && pattern != 1 ? stream_end(tl, sa[r]) - release[r] : 0;
		double eg = a->n_g && pattern != 0 ? stream_end(tl, sg[r]) - release[r] : 0;
		if (pattern == 0)
			out[r].alone_a2a = ea;
		else if (pattern == 1)
			out[r].alone_gemm = eg;
		else
			out[r].both_a2a = ea, out[r].both_gemm = eg;
	}
	return 0;
}

static int overlap(const struct hw *hw, const struct overlap_args *a)
{
	char line[256];
	struct costed a2a[2], up[2], down[2];
	for (int r = 0; r < 2; r++) {
		snprintf(line, sizeof line, "alltoall bytes=%.0f ranks=2", a->bytes);
		if (cost(hw, line, &a2a[r]) < 0)
			return 1;
		snprintf(line, sizeof line, "grouped_gemm m=%.0f n=6144 k=3584 groups=448 touched=%.6g dtype=bf16",
			 a->rows[r], a->touched[r]);
		if (cost(hw, line, &up[r]) < 0)
			return 1;
		snprintf(line, sizeof line, "grouped_gemm m=%.0f n=3584 k=3072 groups=448 touched=%.6g dtype=bf16",
			 a->rows[r], a->touched[r]);
		if (cost(hw, line, &down[r]) < 0)
			return 1;
		if (a->a2a_s > 0)
			measured(&a2a[r], a->a2a_s);
		if (a->gemm_s[r] > 0) {
			double share = up[r].c.time_s / (up[r].c.time_s + down[r].c.time_s);
			measured(&up[r], a->gemm_s[r] * share);
			measured(&down[r], a->gemm_s[r] * (1 - share));
		}
	}
	struct tl_mem t;
	if (tl_open(&t, (int32_t)(2 * (a->n_a + 2 * a->n_g) + 16)) < 0)
		return 1;
	struct rank_result res[2] = {{0}};
	for (int pattern = 0; pattern < 3; pattern++)
		if (overlap_run(hw, &t.tl, a, a2a, up, down, pattern, res) < 0) {
			fprintf(stderr, "x2-predict: timeline failed\n");
			free(t.mem);
			return 1;
		}
	if (a->timeline_path) {
		/* the last pattern run, both streams released together, as `k3sim run --timeline` writes a step */
		FILE *f = fopen(a->timeline_path, "w");
		const char *names[TL_MAX_GPUS] = {"rank 0 (simulated)", "rank 1 (simulated)"};
		char title[160];
		snprintf(title, sizeof title, "EP all-to-all beside grouped GEMMs, %.0f + %.0f rows, %ld all-to-alls, %ld GEMM pairs",
			 a->rows[0], a->rows[1], a->n_a, a->n_g);
		struct timeline_report rep = {.title = title};
		for (int g = 0; g < 2; g++)
			rep.gpu_names[g] = names[g];
		int bad = !f || report_timeline_json(&t.tl, &rep, f) < 0;
		if (f && fclose(f) != 0)
			bad = 1;
		if (bad) {
			fprintf(stderr, "x2-predict: cannot write '%s'\n", a->timeline_path);
			free(t.mem);
			return 1;
		}
	}
	for (int r = 0; r < 2; r++)
		printf("overlap rank=%d a2a_s=%.9g a2a_sms=%.3g a2a_sm=%.4f a2a_hbm=%.4f gate_up_s=%.9g gate_up_sm=%.4f "
		       "gate_up_hbm=%.4f gate_up_tail=%.4f down_s=%.9g down_sm=%.4f down_hbm=%.4f reserve_sms=%d cluster_sms=%d "
		       "alone_a2a_s=%.9g alone_gemm_s=%.9g both_a2a_s=%.9g both_gemm_s=%.9g both_s=%.9g\n",
		       r, a2a[r].work_s, sim_ep_sms(&a2a[r].op), a2a[r].d.sm, a2a[r].d.hbm, up[r].work_s, up[r].d.sm,
		       up[r].d.hbm, up[r].d.tail, down[r].work_s, down[r].d.sm, down[r].d.hbm, a->reserve_sms, (int)SIM_GEMM_CLUSTER_SMS,
		       res[r].alone_a2a, res[r].alone_gemm, res[r].both_a2a, res[r].both_gemm,
		       fmax(res[r].both_a2a, res[r].both_gemm));
	free(t.mem);
	return 0;
}

/* KCP over cp GPUs on the timeline: rank 0 its zero-start pass; every other rank that pass and
 * sim_kcp_ops' transition pass; the all-gather across all; then each other rank's scan and
 * fix-up. Returns the makespan, or a negative value on failure. */
static double kcp_layout(const struct hw *hw, struct timeline *tl, const struct costed *pass, const struct costed kcp[],
			 int cp, bool transition)
{
	tl_reset(tl);
	int32_t g = tl_group(tl);
	if (g < 0)
		return -1;
	int32_t last[TL_MAX_GPUS];
	int comm[TL_MAX_GPUS], compute[TL_MAX_GPUS];
	for (int r = 0; r < cp; r++) {
		if (tl_partition(tl, r, 0, SIM_GEMM_CLUSTER_SMS) < 0 ||
		    (compute[r] = tl_stream(tl, r, TL_COMPUTE, "compute")) < 0 ||
		    (comm[r] = tl_stream(tl, r, TL_COMM, "comm")) < 0)
			return -1;
		if ((last[r] = add(tl, compute[r], -1, "kda.chunk", pass, -1)) < 0)
			return -1;
		if (r > 0 && transition && (last[r] = add(tl, compute[r], -1, "kcp.transition", &kcp[0], -1)) < 0)
			return -1;
	}
	for (int r = 0; r < cp; r++)
		if ((last[r] = add(tl, comm[r], g, "kcp.state_allgather", &kcp[1], last[r])) < 0)
			return -1;
	for (int r = 1; r < cp; r++)
		if (add(tl, compute[r], -1, "kcp.scan", &kcp[2], last[r]) < 0 ||
		    add(tl, compute[r], -1, "kcp.fixup", &kcp[3], -1) < 0)
			return -1;
	if (tl_run(tl) < 0)
		return -1;
	(void)hw;
	return tl->result.makespan_s;
}

static int kcp(const struct hw *hw, long tokens, int heads, int cp)
{
	const long t_local = (tokens + cp - 1) / cp;
	char line[256];
	struct costed whole, pass, kc[SIM_KCP_OPS];
	snprintf(line, sizeof line, "kda_chunk b=1 t=%ld h=%d", tokens, heads);
	if (cost(hw, line, &whole) < 0)
		return 1;
	snprintf(line, sizeof line, "kda_chunk b=1 t=%ld h=%d", t_local, heads);
	if (cost(hw, line, &pass) < 0)
		return 1;
	struct op ops[SIM_KCP_OPS];
	if (sim_kcp_ops(&pass.op, cp, DT_BF16, ops) != SIM_KCP_OPS) {
		fprintf(stderr, "x2-predict: sim_kcp_ops failed\n");
		return 1;
	}
	for (int k = 0; k < SIM_KCP_OPS; k++) {
		kc[k].op = ops[k];
		demand(hw, &kc[k]);
	}
	struct tl_mem t;
	if (tl_open(&t, 8 * TL_MAX_GPUS) < 0)
		return 1;
	double with = kcp_layout(hw, &t.tl, &pass, kc, cp, true);
	double without = kcp_layout(hw, &t.tl, &pass, kc, cp, false);
	free(t.mem);
	if (with < 0 || without < 0) {
		fprintf(stderr, "x2-predict: timeline failed\n");
		return 1;
	}
	printf("kcp tokens=%ld heads=%d cp=%d single_s=%.9g pass_s=%.9g transition_s=%.9g allgather_s=%.9g "
	       "allgather_bytes=%lld scan_s=%.9g fixup_s=%.9g kcp_s=%.9g kcp_no_transition_s=%.9g speedup=%.4f\n",
	       tokens, heads, cp, whole.work_s, pass.work_s, kc[0].work_s, kc[1].work_s, (long long)kc[1].op.comm_bytes,
	       kc[2].work_s, kc[3].work_s, with, without, whole.work_s / with);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: x2-predict overlap --rows R0[,R1] --touched G0[,G1] --a2a-bytes B --n-a2a N --n-gemm M\n"
		"                          [--skew S] [--a2a-s T] [--gemm-s T0[,T1]] [--reserve SMS] [--hw NAME]\n"
		"                          [--timeline OUT.json]\n"
		"       x2-predict kcp --tokens T --heads H [--cp N] [--hw NAME]\n\n"
		"The simulator's prediction of issue 20's two-GPU experiments (bench/x2/run-x2-overlap-kcp.sh):\n"
		"an EP all-to-all stream beside a grouped-GEMM stream on two ranks, alone and together (the\n"
		"timeline's SM admission: NCCL gets SMs as the GEMMs' CTAs retire; --skew: rank 1's release after\n"
		"rank 0's, s; --a2a-s/--gemm-s: measured times alone as the ops' work; --reserve: SMs kept for\n"
		"communication; --timeline: the overlapped run as Perfetto JSON); KDA context parallelism on N GPUs (sim_kcp_ops) against one. Prints key=value\n"
		"lines (seconds).\n");
}

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "x2-predict: %s wants a number in [%g, %g], got '%s'\n", opt, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* "A" or "A,B": one value for both ranks, or one each. */
static int pair(const char *opt, const char *s, double lo, double hi, double out[2])
{
	char buf[128];
	if (strlen(s) >= sizeof buf) {
		fprintf(stderr, "x2-predict: %s: '%s' is too long\n", opt, s);
		return -1;
	}
	strcpy(buf, s);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = 0;
	if (num(opt, buf, lo, hi, &out[0]) < 0)
		return -1;
	out[1] = out[0];
	return comma ? num(opt, comma + 1, lo, hi, &out[1]) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *what = argv[1], *hw_name = "h200";
	struct overlap_args oa = {.rows = {-1, -1}, .touched = {-1, -1}, .bytes = -1, .n_a = -1, .n_g = -1};
	double n_a = -1, n_g = -1, tokens = -1, heads = -1, cp = 2, reserve = 0;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "x2-predict: %s needs a value\n", o);
			return 2;
		}
		const char *v = argv[++i];
		int rc = 0;
		if (!strcmp(o, "--hw"))
			hw_name = v;
		else if (!strcmp(o, "--rows"))
			rc = pair(o, v, 1, 1e9, oa.rows);
		else if (!strcmp(o, "--touched"))
			rc = pair(o, v, 0, 448, oa.touched);
		else if (!strcmp(o, "--a2a-bytes"))
			rc = num(o, v, 1, 1e12, &oa.bytes);
		else if (!strcmp(o, "--n-a2a"))
			rc = num(o, v, 0, 100000, &n_a);
		else if (!strcmp(o, "--n-gemm"))
			rc = num(o, v, 0, 10000, &n_g);
		else if (!strcmp(o, "--skew"))
			rc = num(o, v, -10, 10, &oa.skew_s);
		else if (!strcmp(o, "--a2a-s"))
			rc = num(o, v, 1e-9, 10, &oa.a2a_s);
		else if (!strcmp(o, "--gemm-s"))
			rc = pair(o, v, 1e-9, 100, oa.gemm_s);
		else if (!strcmp(o, "--timeline"))
			oa.timeline_path = v;
		else if (!strcmp(o, "--reserve"))
			rc = num(o, v, 0, 120, &reserve);
		else if (!strcmp(o, "--tokens"))
			rc = num(o, v, 2, 1e9, &tokens);
		else if (!strcmp(o, "--heads"))
			rc = num(o, v, 1, 4096, &heads);
		else if (!strcmp(o, "--cp"))
			rc = num(o, v, 2, TL_MAX_GPUS, &cp);
		else {
			fprintf(stderr, "x2-predict: unknown option '%s'\n", o);
			return 2;
		}
		if (rc < 0)
			return 2;
	}
	struct hw hw;
	struct err e;
	if (hw_load(&hw, hw_name, &e) < 0) {
		fprintf(stderr, "x2-predict: %s\n", e.msg);
		return 2;
	}
	if (!strcmp(what, "overlap")) {
		if (oa.rows[0] < 0 || oa.touched[0] < 0 || oa.bytes < 0 || n_a < 0 || n_g < 0) {
			fprintf(stderr, "x2-predict overlap: --rows, --touched, --a2a-bytes, --n-a2a and --n-gemm are required\n");
			return 2;
		}
		if (reserve >= 0.95 * (double)hw.sms) {
			fprintf(stderr, "x2-predict overlap: --reserve %g leaves no SMs for compute (%d in all)\n", reserve,
				(int)hw.sms);
			return 2;
		}
		oa.n_a = (long)n_a;
		oa.n_g = (long)n_g;
		oa.reserve_sms = (int)reserve;
		return overlap(&hw, &oa);
	}
	if (!strcmp(what, "kcp")) {
		if (tokens < 0 || heads < 0) {
			fprintf(stderr, "x2-predict kcp: --tokens and --heads are required\n");
			return 2;
		}
		return kcp(&hw, (long)tokens, (int)heads, (int)cp);
	}
	fprintf(stderr, "x2-predict: unknown experiment '%s' (overlap or kcp)\n", what);
	return 2;
}
