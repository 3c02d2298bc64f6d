/* x2-predict: the simulator's prediction of the two-GPU experiments of issue 20, built with the
 * step timeline's engine (sim/timeline.h) from the costs of single ops (sim_op_cost_ep), so that
 * bench/x2/compare.py can set them beside what bench/x2/run-x2-overlap-kcp.sh measured.
 *
 *   x2-predict overlap --rows R --touched G --a2a-bytes B --n-a2a N --n-gemm M [--hw NAME]
 *     One EP rank: N back-to-back all-to-alls (K3's dispatch payload; B = the equivalent even
 *     all-to-all's send buffer, as bench/calib/nccl-grid.py names it) on a communication stream and
 *     M (gate_up, down) grouped-GEMM pairs (R rows over 448 experts, G of them touched, BF16) on a
 *     compute stream: each stream alone, then both from the same instant, sharing SMs and HBM as
 *     the timeline shares them.
 *   x2-predict kcp --tokens T --heads H [--hw NAME]
 *     KDA context parallelism over 2 GPUs as sim/step.c lays it out (zero-start pass of T/2
 *     tokens, the fixed-size state all-gather, kcp.scan, kcp.fixup), and the same with the
 *     identity-start pass that yields the transition (which the step does not cost), against the
 *     single-GPU prefill of T tokens.
 *
 * Output: one `key=value` line per experiment (seconds), for scripts. */
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
#include "sim/timeline.h"

/* SMs an NCCL collective's kernels keep: sim/step.c's NCCL_SMS (not exported). */
enum { NCCL_SMS = 16 };

struct costed {
	struct op op;
	struct op_cost c;
	double sm, hbm;
};

/* Shares of the GPU an op uses alone, as sim/step.c's demands() derives them (a copy: that
 * function is static; keep the two in step). */
static void demands(const struct hw *hw, struct costed *x)
{
	const struct op *o = &x->op;
	const struct op_cost *c = &x->c;
	double t = c->time_s > 0 ? c->time_s : 1;
	if (op_is_comm(o->kind)) {
		double sms = o->ep.mode != EP_MODE_NONE ? sim_ep_sms(o) : NCCL_SMS;
		x->sm = fmin(1, sms / (double)hw->sms);
		x->hbm = fmin(1, 2.0 * (double)o->comm_bytes / (t * hw->hbm_bw_bytes_per_s));
		return;
	}
	double need = fmax(c->compute_s, 0.5 * c->memory_s) / t;
	if (c->waves > 0 && c->waves < 1)
		need *= c->waves;
	x->sm = fmin(1, need);
	x->hbm = fmin(1, c->memory_s / t);
}

static int cost(const struct hw *hw, const char *line, struct costed *x)
{
	struct err e;
	if (opspec_parse_line(line, &x->op, &e) < 0) {
		fprintf(stderr, "x2-predict: %s: %s\n", line, e.msg);
		return -1;
	}
	sim_op_cost_ep(hw, &x->op, NULL, &x->c);
	demands(hw, x);
	return 0;
}

struct tl_mem {
	struct timeline tl;
	void *mem;
};

static int tl_open(struct tl_mem *t, int32_t events)
{
	int64_t b = tl_storage_bytes(events, events);
	t->mem = b > 0 ? aligned_alloc(64, (size_t)((b + 63) / 64 * 64)) : NULL;
	if (!t->mem) {
		fprintf(stderr, "x2-predict: out of memory\n");
		return -1;
	}
	tl_init(&t->tl, t->mem, events, events);
	return 0;
}

static int add(struct timeline *tl, int stream, const char *name, const struct costed *x, int32_t dep)
{
	int32_t id = tl_add(tl, stream, name, x->c.time_s, x->sm, x->hbm, &dep, dep >= 0 ? 1 : 0);
	if (id < 0) {
		fprintf(stderr, "x2-predict: timeline: error %d\n", (int)id);
		return -1;
	}
	return id;
}

/* The end of a stream's last event after tl_run (0 when empty). */
static double stream_end(const struct timeline *tl, int s)
{
	int32_t last = tl->streams[s].last;
	return last >= 0 ? tl->ev[last].end_s : 0;
}

static int overlap(const struct hw *hw, double rows, double touched, double bytes, long n_a, long n_g)
{
	char line[256];
	struct costed a2a, up, down;
	snprintf(line, sizeof line, "alltoall bytes=%.0f ranks=2", bytes);
	if (cost(hw, line, &a2a) < 0)
		return 1;
	snprintf(line, sizeof line, "grouped_gemm m=%.0f n=6144 k=3584 groups=448 touched=%.6g dtype=bf16", rows, touched);
	if (cost(hw, line, &up) < 0)
		return 1;
	snprintf(line, sizeof line, "grouped_gemm m=%.0f n=3584 k=3072 groups=448 touched=%.6g dtype=bf16", rows, touched);
	if (cost(hw, line, &down) < 0)
		return 1;
	struct tl_mem t;
	if (tl_open(&t, (int32_t)(n_a + 2 * n_g + 8)) < 0)
		return 1;
	double alone[2] = {0}, both_a = 0, both_g = 0, both = 0;
	for (int run = 0; run < 3; run++) { /* 0: a2a alone, 1: GEMMs alone, 2: together */
		tl_reset(&t.tl);
		int sa = tl_stream(&t.tl, 0, TL_COMM, "comm");
		int sg = tl_stream(&t.tl, 0, TL_COMPUTE, "compute");
		if (sa < 0 || sg < 0)
			goto fail;
		/* issued interleaved, as the measurement enqueues them; streams keep their order */
		long ia = 0;
		for (long ig = 0; ig <= n_g; ig++) {
			long upto = n_g ? (n_a * ig) / n_g : n_a;
			for (; run != 1 && ia < upto; ia++)
				if (add(&t.tl, sa, "alltoall", &a2a, -1) < 0)
					goto fail;
			if (run != 0 && ig < n_g &&
			    (add(&t.tl, sg, "gate_up", &up, -1) < 0 || add(&t.tl, sg, "down", &down, -1) < 0))
				goto fail;
		}
		for (; run != 1 && ia < n_a; ia++)
			if (add(&t.tl, sa, "alltoall", &a2a, -1) < 0)
				goto fail;
		if (tl_run(&t.tl) < 0)
			goto fail;
		if (run < 2) {
			alone[run] = t.tl.result.makespan_s;
		} else {
			both_a = stream_end(&t.tl, sa);
			both_g = stream_end(&t.tl, sg);
			both = t.tl.result.makespan_s;
		}
	}
	printf("overlap a2a_s=%.9g a2a_sm=%.4f a2a_hbm=%.4f gate_up_s=%.9g gate_up_sm=%.4f gate_up_hbm=%.4f "
	       "down_s=%.9g down_sm=%.4f down_hbm=%.4f alone_a2a_s=%.9g alone_gemm_s=%.9g both_a2a_s=%.9g "
	       "both_gemm_s=%.9g both_s=%.9g\n",
	       a2a.c.time_s, a2a.sm, a2a.hbm, up.c.time_s, up.sm, up.hbm, down.c.time_s, down.sm, down.hbm, alone[0],
	       alone[1], both_a, both_g, both);
	free(t.mem);
	return 0;
fail:
	fprintf(stderr, "x2-predict: timeline failed\n");
	free(t.mem);
	return 1;
}

static int kcp(const struct hw *hw, long tokens, int heads)
{
	const long K = 128, V = 128, cp = 2;
	const long t_local = (tokens + cp - 1) / cp;
	char line[256];
	struct costed whole, pass, ag, scan, fix;
	snprintf(line, sizeof line, "kda_chunk b=1 t=%ld h=%d", tokens, heads);
	if (cost(hw, line, &whole) < 0)
		return 1;
	snprintf(line, sizeof line, "kda_chunk b=1 t=%ld h=%d", t_local, heads);
	if (cost(hw, line, &pass) < 0)
		return 1;
	/* sim/step.c: frag = H (K K + K V) 4 bytes per rank, all-gathered (output = cp frags) */
	snprintf(line, sizeof line, "allgather bytes=%ld ranks=%ld", (long)heads * (K * K + K * V) * 4 * cp, cp);
	if (cost(hw, line, &ag) < 0)
		return 1;
	snprintf(line, sizeof line, "gemm m=%ld n=%ld k=%ld dtype=fp32", (cp + 1) / 2 * heads * K, V, K);
	if (cost(hw, line, &scan) < 0)
		return 1;
	snprintf(line, sizeof line, "gemm m=%ld n=%ld k=%ld dtype=bf16 w_dtype=fp32", t_local, heads * V, K);
	if (cost(hw, line, &fix) < 0)
		return 1;
	struct tl_mem t;
	if (tl_open(&t, 32) < 0)
		return 1;
	double total[2] = {0};
	for (int with_ident = 0; with_ident < 2; with_ident++) {
		tl_reset(&t.tl);
		int s0 = tl_stream(&t.tl, 0, TL_COMPUTE, "rank0");
		int c0 = tl_stream(&t.tl, 0, TL_COMM, "rank0.comm");
		int s1 = tl_stream(&t.tl, 1, TL_COMPUTE, "rank1");
		int c1 = tl_stream(&t.tl, 1, TL_COMM, "rank1.comm");
		int32_t g = tl_group(&t.tl);
		int32_t z0 = add(&t.tl, s0, "kda.zero", &pass, -1);
		int32_t z1 = add(&t.tl, s1, "kda.zero", &pass, -1);
		if (z0 < 0 || z1 < 0)
			goto fail;
		int32_t last1 = z1;
		if (with_ident && (last1 = add(&t.tl, s1, "kda.identity", &pass, -1)) < 0)
			goto fail;
		int32_t a0 = tl_add_in_group(&t.tl, c0, g, "kcp.state_allgather", ag.c.time_s, ag.sm, ag.hbm, &z0, 1);
		int32_t a1 = tl_add_in_group(&t.tl, c1, g, "kcp.state_allgather", ag.c.time_s, ag.sm, ag.hbm, &last1, 1);
		if (a0 < 0 || a1 < 0)
			goto fail;
		int32_t sc = add(&t.tl, s1, "kcp.scan", &scan, a1);
		if (sc < 0 || add(&t.tl, s1, "kcp.fixup", &fix, sc) < 0)
			goto fail;
		if (tl_run(&t.tl) < 0)
			goto fail;
		total[with_ident] = t.tl.result.makespan_s;
	}
	printf("kcp tokens=%ld heads=%d single_s=%.9g pass_s=%.9g allgather_s=%.9g allgather_bytes=%ld scan_s=%.9g "
	       "fixup_s=%.9g kcp_sim_s=%.9g kcp_with_identity_s=%.9g\n",
	       tokens, heads, whole.c.time_s, pass.c.time_s, ag.c.time_s, (long)ag.op.comm_bytes, scan.c.time_s,
	       fix.c.time_s, total[0], total[1]);
	free(t.mem);
	return 0;
fail:
	fprintf(stderr, "x2-predict: timeline failed\n");
	free(t.mem);
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: x2-predict overlap --rows R --touched G --a2a-bytes B --n-a2a N --n-gemm M [--hw NAME]\n"
		   "       x2-predict kcp --tokens T --heads H [--hw NAME]\n\n"
		   "The timeline's prediction of issue 20's two-GPU experiments (bench/x2/run-x2-overlap-kcp.sh):\n"
		   "an EP all-to-all stream beside a grouped-GEMM stream, alone and together; KDA context\n"
		   "parallelism on 2 GPUs against one. Prints one key=value line (seconds).\n");
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

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *what = argv[1], *hw_name = "h200";
	double rows = -1, touched = -1, bytes = -1, n_a = -1, n_g = -1, tokens = -1, heads = -1;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		if (!strcmp(o, "--help")) {
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
			rc = num(o, v, 1, 1e9, &rows);
		else if (!strcmp(o, "--touched"))
			rc = num(o, v, 0, 448, &touched);
		else if (!strcmp(o, "--a2a-bytes"))
			rc = num(o, v, 1, 1e12, &bytes);
		else if (!strcmp(o, "--n-a2a"))
			rc = num(o, v, 0, 100000, &n_a);
		else if (!strcmp(o, "--n-gemm"))
			rc = num(o, v, 0, 10000, &n_g);
		else if (!strcmp(o, "--tokens"))
			rc = num(o, v, 2, 1e9, &tokens);
		else if (!strcmp(o, "--heads"))
			rc = num(o, v, 1, 4096, &heads);
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
		if (rows < 0 || touched < 0 || bytes < 0 || n_a < 0 || n_g < 0) {
			fprintf(stderr, "x2-predict overlap: --rows, --touched, --a2a-bytes, --n-a2a and --n-gemm are required\n");
			return 2;
		}
		return overlap(&hw, rows, touched, bytes, (long)n_a, (long)n_g);
	}
	if (!strcmp(what, "kcp")) {
		if (tokens < 0 || heads < 0) {
			fprintf(stderr, "x2-predict kcp: --tokens and --heads are required\n");
			return 2;
		}
		return kcp(&hw, (long)tokens, (int)heads);
	}
	fprintf(stderr, "x2-predict: unknown experiment '%s' (overlap or kcp)\n", what);
	return 2;
}
