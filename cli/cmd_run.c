/* k3sim run [SCENARIO] [--json]: TTFT, TPOT, throughput and HBM per GPU for a scenario. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "reports/timeline.h"
#include "sim/sim.h"
#include "sim/step.h"
#include "util/doc.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim run [SCENARIO] [--json] [--top N] [overrides]\n\n"
		"Predicts TTFT, TPOT, decode throughput and HBM per GPU for a what-if scenario, with the\n"
		"ops that take the time and what bounds each of them.\n\n"
		"  SCENARIO        a YAML file, or an embedded scenario:");
	for (const char *const *p = scenario_preset_names(); *p; p++)
		fprintf(out, " %s", *p);
	fprintf(out, "\n"
		"                  (default: 'default', K3 on 16xH200); the schema is in scenarios/README.md\n"
		"  --json          machine-readable output (keys ttft_s, tpot_s, fits, hbm, ...)\n"
		"  --top N         ops to list per phase (default 12)\n"
		"  --print         print the scenario's YAML (embedded ones) and exit\n"
		"  --timeline FILE write the simulated step as Chrome/Perfetto trace JSON (ui.perfetto.dev;\n"
		"                  the layout of `k3sim trace export`): every op of every layer on its\n"
		"                  GPU's compute, communication and side streams, with the busiest and the\n"
		"                  mean EP rank; '-' for stdout\n"
		"  --timeline-step decode|prefill\n"
		"                  which step --timeline writes: the mean decode step (default) or the\n"
		"                  first prefill step (with engine.prefill_tokens: the batched step\n"
		"                  TTFT sums)\n"
		"  --force         replace an existing --timeline file\n"
		"overrides (applied after loading):\n"
		"  --model NAME|PATH  --hw NAME|PATH  --batch N  --prompt N  --output N\n"
		"  --clock boost|sustained|power|MHZ   SM clock (scenario options.clock; default\n"
		"                     sustained: a serving GPU runs power-limited all day, where the preset\n"
		"                     knows it); power: each op of a step at the clock the preset's power-\n"
		"                     limit model gives it from what ran before it, the step repeated back\n"
		"                     to back (sim/power.h: h200's limiter follows the draw 20 ms late, up\n"
		"                     in ~30 ms, down in ~2; presets with device.power_*; each phase's\n"
		"                     mean board draw over its ops is reported, at those clocks and at\n"
		"                     boost: --json prefill/decode power.draw_w, draw_at_boost_w); or a\n"
		"                     clock in MHz (1830, 1830MHz: e.g. the clock a run was measured at;\n"
		"                     not above the preset's boost). Tensor and vector rates scale with it,\n"
		"                     HBM and the interconnects do not (a preset's clock_bound_<class>: an\n"
		"                     op keeps its boost time down to that share of boost)\n");
}

static int parse_count(const char *opt, const char *v, int64_t *out)
{
	int64_t x;
	if (!v || doc_parse_i64(v, &x) < 0 || x < 1) {
		fprintf(stderr, "k3sim run: %s needs a positive integer, got '%s'\n", opt, v ? v : "");
		return -EINVAL;
	}
	*out = x;
	return 0;
}

struct agg {
	const char *name;
	double total_s, cycles;
	enum bound bound;
	double bound_s;
	int64_t layers;
};

/* Rows with the same op name (e.g. one per layer group) are added together. */
static int aggregate(const struct sim_phase *ph, struct agg *out, int cap)
{
	int n = 0;
	for (int i = 0; i < ph->n_rows; i++) {
		const struct sim_op_row *r = &ph->rows[i];
		int j;
		for (j = 0; j < n; j++)
			if (strcmp(out[j].name, r->op.name) == 0)
				break;
		if (j == n) {
			if (n == cap)
				continue;
			out[n] = (struct agg){.name = r->op.name, .bound = r->cost.bound};
			n++;
		}
		out[j].total_s += r->total_s;
		out[j].cycles += r->total_cycles;
		out[j].layers += r->op.layers;
		if (r->total_s > out[j].bound_s) {
			out[j].bound_s = r->total_s;
			out[j].bound = r->cost.bound;
		}
	}
	for (int a = 1; a < n; a++) /* insertion sort, largest first */
		for (int b = a; b > 0 && out[b].total_s > out[b - 1].total_s; b--) {
			struct agg t = out[b];
			out[b] = out[b - 1];
			out[b - 1] = t;
		}
	return n;
}

static void print_ops(const char *title, const struct sim_phase *ph, int top)
{
	static struct agg rows[SIM_MAX_OPS];
	int n = aggregate(ph, rows, SIM_MAX_OPS);
	char a[32];
	printf("\n%s: %s per GPU; by bound: compute %.0f%%, memory %.0f%%, latency %.0f%%, comm %.0f%%\n",
	       title, cli_time(ph->time_s, a, sizeof a), 100 * ph->compute_s / ph->time_s,
	       100 * ph->memory_s / ph->time_s, 100 * ph->latency_s / ph->time_s, 100 * ph->comm_s / ph->time_s);
	printf("  %-26s %12s %7s %16s  %s\n", "op", "time", "share", "cycles", "bound");
	for (int i = 0; i < n && i < top; i++)
		printf("  %-26s %12s %6.1f%% %16.4g  %s\n", rows[i].name, cli_time(rows[i].total_s, a, sizeof a),
		       100 * rows[i].total_s / ph->time_s, rows[i].cycles, bound_name(rows[i].bound));
}

static void print_human(const struct scenario *s, const struct model *m, const struct hw *hw,
			const struct sim_result *r, int top)
{
	char a[32], b[32], c[32];
	printf("k3sim run: %s - %s on %lld x %s%s\n", s->name, m->name, (long long)s->gpus,
	       hw->description[0] ? hw->description : hw->name,
	       hw->calibrated ? " (calibrated)" : " (datasheet, uncalibrated)");
	if (s->description[0])
		printf("  %s\n", s->description);
	printf("  engine: %s path, overlap %s%s%s\n", scenario_path_name(s->path), scenario_overlap_name(s->overlap),
	       s->shared_expert_stream ? ", shared experts on a side stream" : "",
	       s->attnres_side_stream ? ", AttnRes inter-block pass on a side stream" : "");
	printf("  layout: attention TP%lld x DP%lld x CP%lld%s, MoE EP%lld (imbalance %.2f); TP sync %s\n",
	       (long long)s->tp, (long long)s->dp, (long long)s->cp,
	       s->pp > 1 ? (snprintf(c, sizeof c, " x PP%lld", (long long)s->pp), c) : "", (long long)s->ep, s->moe_imbalance,
	       s->tp_rs_ag ? "reduce-scatter + all-gather" : "all-reduce");
	printf("  workload: batch %lld, prompt %lld, output %lld tokens, prefill chunk %lld; "
	       "KDA state %s, MLA cache %s, expert inputs %s\n",
	       (long long)s->batch, (long long)s->prompt_tokens, (long long)s->output_tokens,
	       (long long)s->prefill_chunk, dtype_name(s->kda_state), dtype_name(s->mla_cache),
	       dtype_name(s->expert_act));
	if (s->clock.given_hz > 0)
		printf("  clock: %.6g MHz (given; the preset's boost %.6g MHz)\n\n", s->clock.given_hz / 1e6,
		       hw->sm_clock_hz / 1e6);
	else if (s->clock.regime == HW_CLOCK_POWER)
		printf("  clock: power, each op at its power-limit clock (%.0f W limit), %.0f-%.0f MHz\n\n",
		       hw->power_limit_w, hw->power_min_sm_clock_hz / 1e6, hw->sm_clock_hz / 1e6);
	else
		printf("  clock: %s, SM %.0f MHz%s\n\n", hw_clock_name(s->clock.regime),
		       hw_clock_sel_hz(hw, &s->clock) / 1e6,
		       s->clock.regime == HW_CLOCK_SUSTAINED && !(hw->sustained_sm_clock_hz > 0)
			       ? " (the preset has no sustained clock: boost)" : "");

	if (s->prefill_tokens)
		printf("  %-18s %12s   (prefill of %lld tokens in %lld step%s of %lld tokens per DP group, "
		       "%lld prompt%s per step)\n",
		       "TTFT", cli_time(r->ttft_s, a, sizeof a), (long long)s->prompt_tokens,
		       (long long)r->prefill_chunks, r->prefill_chunks == 1 ? "" : "s", (long long)s->prefill_tokens,
		       (long long)r->prefill_prompts_per_step, r->prefill_prompts_per_step == 1 ? "" : "s");
	else
		printf("  %-18s %12s   (prefill of %lld tokens in %lld chunk%s, one request)\n", "TTFT",
		       cli_time(r->ttft_s, a, sizeof a), (long long)s->prompt_tokens, (long long)r->prefill_chunks,
		       r->prefill_chunks == 1 ? "" : "s");
	printf("  %-18s %12s   (decode step at context %lld, batch %lld; first %s, last %s)\n", "TPOT",
	       cli_time(r->tpot_s, a, sizeof a), (long long)r->decode_context, (long long)s->batch,
	       cli_time(r->tpot_first_s, b, sizeof b), cli_time(r->tpot_last_s, c, sizeof c));
	if (s->mtp_draft_tokens)
		printf("  %-18s %12s   (%lld draft token%s, %.2f accepted per request per step)\n", "decode step",
		       cli_time(r->decode_step_s, a, sizeof a), (long long)s->mtp_draft_tokens,
		       s->mtp_draft_tokens == 1 ? "" : "s", s->mtp_acceptance);
	printf("  %-18s %12.0f   (%.1f per GPU)\n", "decode tokens/s", r->tokens_per_s, r->tokens_per_s_per_gpu);
	printf("  %-18s %12.0f   (%.1f per GPU%s)\n", "prefill tokens/s",
	       r->prefill_tokens_per_s_per_gpu * (double)s->gpus, r->prefill_tokens_per_s_per_gpu,
	       s->prefill_tokens ? "" : "; one prompt at a time");
	if (s->mixed_prefill_tokens)
		printf("  %-18s %12.0f   (%.1f per GPU, %lld per DP group in each decode step)\n",
		       "mixed prefill tok/s", r->mixed_prefill_tokens_per_s_per_gpu * (double)s->gpus,
		       r->mixed_prefill_tokens_per_s_per_gpu, (long long)s->mixed_prefill_tokens);
	printf("  %-18s %12s\n", "request latency", cli_time(r->e2e_s, a, sizeof a));
	if (s->pp > 1)
		printf("  %-18s %12lld   (each stage holds a share of the layers; the steps below are all layers on one "
		       "stage's GPUs; TTFT's pipeline bubble %s)\n",
		       "pipeline stages", (long long)s->pp, cli_time(r->pp_bubble_s, a, sizeof a));

	printf("\n  step timeline (busiest EP rank)  overlap  critical path = compute + comm"
	       "            exposed comm   ops in sequence\n");
	const struct sim_phase *phs[2] = {&r->prefill, &r->decode};
	const char *labels[2] = {"prefill (TTFT), all chunks", "decode step (TPOT)"};
	for (int i = 0; i < 2; i++) {
		const struct sim_phase *ph = phs[i];
		char d[32], f[32], g[32];
		char ov[16];
		snprintf(ov, sizeof ov, "%s%s", scenario_overlap_name(ph->overlap), ph->microbatches == 2 ? " x2" : "");
		printf("    %-29s %-8s %10s = %10s + %10s   %10s   %12s\n", labels[i], ov,
		       cli_time(ph->step_s, a, sizeof a), cli_time(ph->critical_compute_s, b, sizeof b),
		       cli_time(ph->critical_comm_s, c, sizeof c), cli_time(ph->exposed_comm_s, d, sizeof d),
		       cli_time(ph->time_s, f, sizeof f));
		(void)g;
	}
	for (int i = 0; i < 2; i++) {
		const struct sim_phase *ph = phs[i];
		if (!(ph->power_busy_s > 0 && ph->power_boost_busy_s > 0))
			continue;
		printf("    %-29s board draw %.0f W over its ops at the power regime's clocks (%.0f W at boost; "
		       "limit %.0f W)\n", i ? "decode step" : "prefill", ph->power_energy_j / ph->power_busy_s,
		       ph->power_boost_energy_j / ph->power_boost_busy_s, hw->power_limit_w);
	}

	const struct sim_hbm *h = &r->hbm;
	printf("\n  HBM per GPU at context %lld, %lld request%s per attention group:\n",
	       (long long)(s->prompt_tokens + s->output_tokens), (long long)r->requests_per_gpu,
	       r->requests_per_gpu == 1 ? "" : "s");
	struct {
		const char *name;
		int64_t v;
	} rows[] = {
		{"weights", h->weights},         {"KDA state", h->kda_state}, {"ShortConv state", h->conv_state},
		{"MLA KV cache", h->mla_kv},     {"DSA index cache", h->dsa_index},
		{"activations", h->activations}, {"workspace", h->workspace},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (rows[i].v == 0 && (i == 1 || i == 2 || i == 4))
			continue;
		printf("    %-18s %12s %6.1f%%\n", rows[i].name, cli_bytes((double)rows[i].v, a, sizeof a),
		       100.0 * (double)rows[i].v / (double)h->capacity);
	}
	printf("    %-18s %12s %6.1f%%\n", "total", cli_bytes((double)h->total, a, sizeof a),
	       100.0 * (double)h->total / (double)h->capacity);
	printf("    %-18s %12s\n", "capacity", cli_bytes((double)h->capacity, a, sizeof a));
	if (r->fits)
		printf("  fits: yes (%s free; up to %lld requests fit at this context)\n",
		       cli_bytes((double)(h->capacity - h->total), a, sizeof a), (long long)r->max_batch);
	else
		printf("  fits: NO - %s over capacity per GPU (%.1f%% of it)%s\n",
		       cli_bytes((double)r->missing_bytes, a, sizeof a),
		       100.0 * (double)r->missing_bytes / (double)h->capacity,
		       h->weights > h->capacity ? "; the weights alone exceed it: add GPUs (EP) or use more TP" : "");

	print_ops("prefill (TTFT), summed over chunks", &r->prefill, top);
	print_ops("decode step (TPOT)", &r->decode, top);
}

static void json_phase(struct jw *w, const char *key, const struct sim_phase *ph)
{
	jw_begin_object(w, key);
	jw_f64(w, "time_s", ph->time_s);
	jw_f64(w, "step_s", ph->step_s);
	jw_str(w, "overlap", scenario_overlap_name(ph->overlap));
	jw_i64(w, "microbatches", ph->microbatches);
	jw_i64(w, "comm_sms_reserved", ph->comm_sms_reserved);
	jw_begin_object(w, "critical_path");
	jw_f64(w, "compute_s", ph->critical_compute_s);
	jw_f64(w, "comm_s", ph->critical_comm_s);
	jw_end_object(w);
	jw_f64(w, "exposed_comm_s", ph->exposed_comm_s);
	jw_f64(w, "compute_bound_s", ph->compute_s);
	jw_f64(w, "memory_bound_s", ph->memory_s);
	jw_f64(w, "latency_bound_s", ph->latency_s);
	jw_f64(w, "comm_bound_s", ph->comm_s);
	jw_i64(w, "peak_activation_bytes", ph->peak_act_bytes);
	if (ph->power_busy_s > 0 && ph->power_boost_busy_s > 0) {
		jw_begin_object(w, "power");
		jw_f64(w, "draw_w", ph->power_energy_j / ph->power_busy_s);
		jw_f64(w, "draw_at_boost_w", ph->power_boost_energy_j / ph->power_boost_busy_s);
		jw_f64(w, "busy_s", ph->power_busy_s);
		jw_end_object(w);
	}
	jw_begin_array(w, "ops");
	for (int i = 0; i < ph->n_rows; i++) {
		const struct sim_op_row *r = &ph->rows[i];
		jw_begin_object(w, NULL);
		jw_str(w, "name", r->op.name);
		jw_str(w, "kind", op_kind_name(r->op.kind));
		jw_i64(w, "layers", r->op.layers);
		jw_f64(w, "time_s", r->total_s);
		jw_f64(w, "cycles", r->total_cycles);
		jw_f64(w, "instance_time_s", r->cost.time_s);
		jw_str(w, "bound", bound_name(r->cost.bound));
		jw_f64(w, "flops", r->total_flops);
		jw_f64(w, "bytes", r->total_bytes);
		/* one instance on one GPU: its dims and bytes by kind (KV writes are the cache growth) */
		const struct op *o = &r->op;
		jw_begin_object(w, "instance");
		if (op_is_comm(o->kind)) {
			jw_i64(w, "comm_bytes", o->comm_bytes);
			jw_i64(w, "ranks", o->ranks);
		} else {
			jw_i64(w, "m", o->m);
			jw_i64(w, "n", o->n);
			jw_i64(w, "k", o->k);
			jw_i64(w, "b", o->b);
			jw_i64(w, "t", o->t);
			jw_i64(w, "h", o->h);
			jw_i64(w, "ctx", o->ctx);
			jw_str(w, "w_dtype", dtype_name(o->w_dtype));
			jw_str(w, "a_dtype", dtype_name(o->a_dtype));
			jw_f64(w, "flops", o->flops);
			jw_i64(w, "weight_bytes", o->bytes_weight);
			jw_i64(w, "act_in_bytes", o->bytes_act_in);
			jw_i64(w, "act_out_bytes", o->bytes_act_out);
			jw_i64(w, "kv_read_bytes", o->bytes_kv_read);
			jw_i64(w, "kv_write_bytes", o->bytes_kv_write);
			jw_i64(w, "state_read_bytes", o->bytes_state_read);
			jw_i64(w, "state_write_bytes", o->bytes_state_write);
		}
		jw_end_object(w);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void print_json(const struct scenario *s, const struct model *m, const struct hw *hw,
		       const struct sim_result *r)
{
	struct jw w;
	jw_init(&w, stdout);
	jw_begin_object(&w, NULL);
	jw_str(&w, "scenario", s->name);
	jw_str(&w, "model", m->name);
	jw_str(&w, "hw", hw->name);
	jw_bool(&w, "hw_calibrated", hw->calibrated);
	jw_str(&w, "clock", hw_clock_sel_kind(&s->clock));
	jw_f64(&w, "sm_clock_hz", hw_clock_sel_hz(hw, &s->clock));
	jw_i64(&w, "gpus", s->gpus);
	jw_begin_object(&w, "parallel");
	jw_i64(&w, "tp", s->tp);
	jw_i64(&w, "dp", s->dp);
	jw_i64(&w, "cp", s->cp);
	jw_i64(&w, "ep", s->ep);
	jw_i64(&w, "pp", s->pp);
	jw_end_object(&w);
	jw_f64(&w, "pp_bubble_s", r->pp_bubble_s);
	jw_i64(&w, "batch", s->batch);
	jw_i64(&w, "prompt_tokens", s->prompt_tokens);
	jw_i64(&w, "output_tokens", s->output_tokens);
	jw_f64(&w, "ttft_s", r->ttft_s);
	jw_f64(&w, "tpot_s", r->tpot_s);
	jw_f64(&w, "tpot_first_s", r->tpot_first_s);
	jw_f64(&w, "tpot_last_s", r->tpot_last_s);
	jw_f64(&w, "e2e_s", r->e2e_s);
	jw_f64(&w, "tokens_per_s", r->tokens_per_s);
	jw_f64(&w, "tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
	jw_f64(&w, "decode_tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
	jw_f64(&w, "prefill_tokens_per_s_per_gpu", r->prefill_tokens_per_s_per_gpu);
	jw_f64(&w, "mixed_prefill_tokens_per_s_per_gpu", r->mixed_prefill_tokens_per_s_per_gpu);
	jw_i64(&w, "prefill_prompts_per_step", r->prefill_prompts_per_step);
	jw_f64(&w, "decode_step_s", r->decode_step_s);
	jw_f64(&w, "accepted_tokens_per_step", (double)s->batch * s->mtp_acceptance);
	jw_begin_object(&w, "engine");
	jw_str(&w, "path", scenario_path_name(s->path));
	jw_str(&w, "overlap", scenario_overlap_name(s->overlap));
	jw_bool(&w, "shared_expert_stream", s->shared_expert_stream);
	jw_bool(&w, "attnres_side_stream", s->attnres_side_stream);
	jw_i64(&w, "prefill_tokens", s->prefill_tokens);
	jw_i64(&w, "mixed_prefill_tokens", s->mixed_prefill_tokens);
	jw_str(&w, "mla_cp", s->mla_cp_ring ? "ring" : "allgather");
	jw_i64(&w, "mtp_draft_tokens", s->mtp_draft_tokens);
	jw_f64(&w, "mtp_acceptance", s->mtp_acceptance);
	jw_end_object(&w);
	jw_i64(&w, "prefill_chunks", r->prefill_chunks);
	jw_i64(&w, "decode_context", r->decode_context);
	jw_bool(&w, "fits", r->fits);
	jw_i64(&w, "missing_bytes", r->missing_bytes);
	jw_i64(&w, "max_batch", r->max_batch);
	jw_begin_object(&w, "hbm");
	jw_i64(&w, "weights", r->hbm.weights);
	jw_i64(&w, "kda_state", r->hbm.kda_state);
	jw_i64(&w, "conv_state", r->hbm.conv_state);
	jw_i64(&w, "mla_kv", r->hbm.mla_kv);
	jw_i64(&w, "dsa_index", r->hbm.dsa_index);
	jw_i64(&w, "activations", r->hbm.activations);
	jw_i64(&w, "workspace", r->hbm.workspace);
	jw_i64(&w, "total", r->hbm.total);
	jw_i64(&w, "capacity", r->hbm.capacity);
	jw_end_object(&w);
	json_phase(&w, "prefill", &r->prefill);
	json_phase(&w, "decode", &r->decode);
	jw_end_object(&w);
	jw_finish(&w);
}

/* The step --timeline names, laid out with every layer and the mean EP rank, to path. */
static int write_timeline(const struct scenario *s, const struct model *m, const struct hw *hw,
			  const struct sim_result *r, bool prefill, const char *path, bool force)
{
	/* every layer of two ranks: four times what sim_step lays out for one */
	enum { EVENTS = 4 * SIM_TL_EVENTS, DEPS = 4 * SIM_TL_DEPS };
	int64_t bytes = tl_storage_bytes(EVENTS, DEPS);
	struct timeline tl;
	void *mem = malloc((size_t)bytes);
	if (!mem) {
		fprintf(stderr, "k3sim run: out of memory\n");
		return 1;
	}
	tl_init(&tl, mem, EVENTS, DEPS);
	struct phase p;
	char title[160];
	if (prefill) {
		/* the first step as sim_prefill runs it: a token budget batches prompts */
		int64_t batch, chunk;
		sim_prefill_shape(s, &batch, &chunk);
		sim_phase_init(s, PHASE_PREFILL, batch, chunk, 0, &p);
		snprintf(title, sizeof title,
			 "prefill step: %lld tokens of %lld prompts per DP group (first of %lld), simulated",
			 (long long)chunk, (long long)(batch + s->dp - 1) / s->dp, (long long)r->prefill_chunks);
	} else {
		sim_phase_init(s, PHASE_DECODE, s->batch, 1, r->decode_context, &p);
		snprintf(title, sizeof title, "decode step (TPOT), batch %lld at context %lld, simulated",
			 (long long)s->batch, (long long)r->decode_context);
	}
	struct sim_step_opts o = {.every_layer = true, .mean_rank = true};
	struct sim_step_timing t;
	int rc = sim_step_timeline(s, m, hw, &p, &o, &tl, NULL, 1, &t);
	if (rc < 0) {
		fprintf(stderr, "k3sim run: the step does not fit the timeline (%s)\n", strerror(-rc));
		free(mem);
		return 1;
	}
	struct timeline_report rep = {.title = title, .timing = &t};
	char g0[96], g1[96];
	snprintf(g0, sizeof g0, "GPU 0: busiest EP rank (moe_imbalance %.2f), simulated", s->moe_imbalance);
	snprintf(g1, sizeof g1, "GPU 1: mean EP rank, simulated");
	rep.gpu_names[0] = g0;
	rep.gpu_names[1] = g1;
	bool to_stdout = strcmp(path, "-") == 0;
	FILE *f = stdout;
	struct outfile of = {0};
	struct err e = {0};
	if (!to_stdout) {
		/* atomically, never over the scenario it came from nor an existing file without --force */
		const char *inputs[] = {s->file};
		struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = s->file[0] == '<' ? 0 : 1};
		if (outfile_open(&of, path, &oo, &e) < 0 || !(f = outfile_stream(&of, &e))) {
			outfile_abort(&of);
			cli_error("run", &e);
			free(mem);
			return 1;
		}
	}
	rc = report_timeline_json(&tl, &rep, f);
	free(mem);
	if (to_stdout)
		rc = rc < 0 || fflush(stdout) != 0 ? -EIO : 0;
	else if (rc < 0)
		outfile_abort(&of);
	else
		rc = outfile_commit(&of, &e);
	if (rc < 0) {
		if (!e.msg[0])
			err_set(&e, path, 0, 0, "write failed: %s", strerror(-rc));
		cli_error("run", &e);
		return 1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *path = "default", *model_over = NULL, *hw_over = NULL, *clock_over = NULL, *timeline = NULL;
	bool timeline_prefill = false, force = false;
	bool json = false, print = false, have_path = false;
	int64_t batch = 0, prompt = 0, output = 0, top = 12;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "--print") == 0) {
			print = true;
		} else if (strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--timeline") == 0) {
			if (!v) {
				fprintf(stderr, "k3sim run: --timeline needs a file ('-' for stdout)\n");
				return 2;
			}
			timeline = v;
			i++;
		} else if (strcmp(a, "--timeline-step") == 0) {
			if (!v || (strcmp(v, "decode") != 0 && strcmp(v, "prefill") != 0)) {
				fprintf(stderr, "k3sim run: --timeline-step takes decode or prefill, got '%s'\n", v ? v : "");
				return 2;
			}
			timeline_prefill = v[0] == 'p';
			i++;
		} else if (strcmp(a, "--clock") == 0) {
			struct hw_clock_sel c;
			char why[200];
			if (!v) {
				fprintf(stderr, "k3sim run: --clock takes boost, sustained or a clock in MHz\n");
				return 2;
			}
			if (hw_clock_sel_parse(v, &c, why, sizeof why) < 0) {
				fprintf(stderr, "k3sim run: --clock: %s\n", why);
				return 2;
			}
			clock_over = v;
			i++;
		} else if (strcmp(a, "--model") == 0 || strcmp(a, "--hw") == 0) {
			if (!v) {
				fprintf(stderr, "k3sim run: %s needs a value\n", a);
				return 2;
			}
			*(a[2] == 'm' ? &model_over : &hw_over) = v;
			i++;
		} else if (strcmp(a, "--batch") == 0 || strcmp(a, "--prompt") == 0 ||
			   strcmp(a, "--output") == 0 || strcmp(a, "--top") == 0) {
			int64_t *dst = a[2] == 'b' ? &batch : a[2] == 'p' ? &prompt : a[2] == 'o' ? &output : &top;
			if (parse_count(a, v, dst) < 0)
				return 2;
			i++;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "k3sim run: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (!have_path) {
			path = a;
			have_path = true;
		} else {
			fprintf(stderr, "k3sim run: one scenario at a time\n");
			return 2;
		}
	}
	if (print) {
		const char *text = scenario_preset_text(path);
		if (!text) {
			fprintf(stderr, "k3sim run: '%s' is not an embedded scenario\n", path);
			return 1;
		}
		fputs(text, stdout);
		return 0;
	}
	struct err e;
	struct scenario s;
	if (scenario_load(&s, path, &e) < 0) {
		cli_error("run", &e);
		return 1;
	}
	if (model_over)
		snprintf(s.model, sizeof s.model, "%s", model_over);
	if (hw_over)
		snprintf(s.hw, sizeof s.hw, "%s", hw_over);
	if (clock_over) {
		char why[200];
		if (hw_clock_sel_parse(clock_over, &s.clock, why, sizeof why) < 0) {
			fprintf(stderr, "k3sim run: --clock: %s\n", why);
			return 2;
		}
		s.clock_line = s.clock_col = 0;
	}
	if (batch)
		s.batch = batch;
	if (prompt)
		s.prompt_tokens = prompt;
	if (output)
		s.output_tokens = output;
	/* the file's chunk, capped at the prompt as run (a --prompt above the file's own keeps the
	 * chunk the file asked for, not the file's prompt) */
	if (s.prefill_chunk_set > 0)
		s.prefill_chunk = s.prefill_chunk_set;
	if (s.prefill_chunk > s.prompt_tokens)
		s.prefill_chunk = s.prompt_tokens;

	struct model m;
	struct hw hw;
	if (model_load(&m, s.model, &e) < 0 || hw_load(&hw, s.hw, &e) < 0) {
		cli_error("run", &e);
		return 1;
	}
	if (clock_over) {
		char why[200];
		if (hw_clock_sel_check(&hw, &s.clock, why, sizeof why) < 0) {
			fprintf(stderr, "k3sim run: --clock %s\n", why);
			return 2;
		}
	}
	struct sim_result *r = malloc(sizeof *r);
	if (!r) {
		fprintf(stderr, "k3sim run: out of memory\n");
		return 1;
	}
	int rc = sim_run(&s, &m, &hw, r, &e);
	if (rc < 0) {
		cli_error("run", &e);
		free(r);
		return 1;
	}
	if (timeline && write_timeline(&s, &m, &hw, r, timeline_prefill, timeline, force) != 0) {
		free(r);
		return 1;
	}
	if (timeline && strcmp(timeline, "-") == 0) {
		free(r);
		return 0; /* the trace is the output */
	}
	if (json)
		print_json(&s, &m, &hw, r);
	else
		print_human(&s, &m, &hw, r, (int)top);
	free(r);
	return 0;
}
