/* Evaluating one sweep point with sim_prefill() and sim_decode() (sim_run's two halves), so points
 * that differ only in batch or output length share one prefill. tests/reports/test-sweep.c checks
 * that every output equals sim_run()'s, bit for bit. */
#include "sweep/sweep.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void sweep_row_inputs(const struct sweep_point *pt, struct sweep_row *row)
{
	const struct scenario *s = &pt->s;
	memset(row, 0, sizeof *row);
	row->point = pt->index;
	snprintf(row->model, sizeof row->model, "%s", pt->m->name);
	snprintf(row->hw, sizeof row->hw, "%s", pt->hw->name);
	row->gpus = s->gpus;
	row->tp = s->tp;
	row->dp = s->dp;
	row->cp = s->cp;
	row->ep = s->ep;
	row->batch = s->batch;
	row->prompt_tokens = s->prompt_tokens;
	row->output_tokens = s->output_tokens;
	row->prefill_chunk = s->prefill_chunk;
	snprintf(row->kda_state, sizeof row->kda_state, "%s", dtype_name(s->kda_state));
	snprintf(row->mla_cache, sizeof row->mla_cache, "%s", dtype_name(s->mla_cache));
	snprintf(row->expert_activations, sizeof row->expert_activations, "%s", dtype_name(s->expert_act));
	snprintf(row->dispatch, sizeof row->dispatch, "%s", dtype_name(s->dispatch));
	snprintf(row->tp_comm, sizeof row->tp_comm, "%s", s->tp_rs_ag ? "rs_ag" : "allreduce");
	row->moe_imbalance = s->moe_imbalance;
	row->cuda_graph = s->cuda_graph;
	struct model_inventory inv;
	model_inventory(pt->m, &inv);
	row->weights_bytes = inv.weights_bytes;
	row->kv_bytes_per_token =
	    model_mla_kv_bytes_per_token(pt->m, s->mla_cache) + model_dsa_index_bytes_per_token(pt->m);
	row->state_bytes_per_request = model_kda_state_bytes_per_request(pt->m, s->kda_state) +
	                               model_conv_state_bytes_per_request(pt->m, s->kda_state);
}

int sweep_eval_prefill(const struct sweep_point *pt, struct sweep_scratch *sc, struct sweep_prefill *out,
                       struct err *e)
{
	const struct scenario *s = &pt->s;
	int rc = sim_check(s, pt->m, pt->hw, e);
	if (rc < 0)
		return rc;
	struct sim_prefill_result pre;
	if ((rc = sim_prefill(s, pt->m, pt->hw, &sc->prefill, &pre, e)) < 0)
		return rc;
	out->ttft_s = pre.ttft_s;
	out->chunks = pre.chunks;
	out->tokens_per_s_per_gpu = pre.tokens_per_s_per_gpu;
	out->exposed_comm_s = sc->prefill.exposed_comm_s;
	out->critical_comm_s = sc->prefill.critical_comm_s;
	out->peak_bytes = pre.peak_bytes;
	opclass_phase_times(pt->hw, &sc->prefill, false, out->class_s);
	return 0;
}

int sweep_eval_decode(const struct sweep_point *pt, const struct sweep_prefill *pre, struct sweep_scratch *sc,
                      struct sweep_row *row, struct err *e)
{
	const struct scenario *s = &pt->s;
	struct sim_prefill_result p = {.ttft_s = pre->ttft_s, .chunks = pre->chunks, .peak_bytes = pre->peak_bytes};
	struct sim_decode_result d;
	int rc = sim_decode(s, pt->m, pt->hw, &p, &sc->decode, &d, e);
	if (rc < 0)
		return rc;
	const struct sim_phase *ph = &sc->decode;
	const struct sim_hbm *h = &d.hbm;
	row->ok = 1;
	row->error[0] = 0;
	row->ttft_s = pre->ttft_s;
	row->tpot_s = d.tpot_s;
	row->tpot_first_s = d.tpot_first_s;
	row->tpot_last_s = d.tpot_last_s;
	row->e2e_s = pre->ttft_s + (double)(s->output_tokens - 1) * d.tpot_s;
	row->tokens_per_s = d.tpot_s > 0 ? (double)s->batch / d.tpot_s : 0;
	row->tokens_per_s_per_gpu = row->tokens_per_s / (double)s->gpus;
	row->prefill_chunks = pre->chunks;
	row->decode_context = d.decode_context;
	row->requests_per_gpu = d.requests_per_gpu;
	row->fits = d.fits;
	row->missing_bytes = d.missing_bytes;
	row->max_batch = d.max_batch;
	row->hbm_weights = h->weights;
	row->hbm_kda_state = h->kda_state;
	row->hbm_conv_state = h->conv_state;
	row->hbm_mla_kv = h->mla_kv;
	row->hbm_dsa_index = h->dsa_index;
	row->hbm_activations = h->activations;
	row->hbm_workspace = h->workspace;
	row->hbm_total = h->total;
	row->hbm_capacity = h->capacity;
	row->decode_compute_s = ph->compute_s;
	row->decode_memory_s = ph->memory_s;
	row->decode_latency_s = ph->latency_s;
	row->decode_comm_s = ph->comm_s;
	row->prefill_tokens_per_s_per_gpu = pre->tokens_per_s_per_gpu;
	row->decode_step_s = d.step_s;
	row->prefill_exposed_comm_s = pre->exposed_comm_s;
	row->decode_exposed_comm_s = ph->exposed_comm_s;
	row->prefill_critical_comm_s = pre->critical_comm_s;
	row->decode_critical_comm_s = ph->critical_comm_s;
	memcpy(row->prefill_s, pre->class_s, sizeof row->prefill_s);
	opclass_phase_times(pt->hw, ph, s->cuda_graph, row->decode_s);
	return 0;
}

int sweep_eval_point(const struct sweep_point *pt, struct sweep_scratch *sc, struct sweep_row *row)
{
	struct err e;
	struct sweep_prefill pre;
	sweep_row_inputs(pt, row);
	int rc = sweep_eval_prefill(pt, sc, &pre, &e);
	if (rc == 0)
		rc = sweep_eval_decode(pt, &pre, sc, row, &e);
	if (rc < 0) {
		row->ok = 0;
		snprintf(row->error, sizeof row->error, "%.*s", (int)sizeof row->error - 1, e.msg);
	}
	return 0;
}

/* ---- columns ---- */

#define COL(n, t)                                                                                            \
	{                                                                                                    \
#n, SWEEP_COL_##t, offsetof(struct sweep_row, n), sizeof(((struct sweep_row *)0)->n), false  \
	}
#define OUT(n, t)                                                                                            \
	{                                                                                                    \
#n, SWEEP_COL_##t, offsetof(struct sweep_row, n), sizeof(((struct sweep_row *)0)->n), true   \
	}

static const struct sweep_column fixed_columns[] = {
    COL(point, INT),
    COL(model, TEXT),
    COL(hw, TEXT),
    COL(gpus, INT),
    COL(tp, INT),
    COL(dp, INT),
    COL(cp, INT),
    COL(ep, INT),
    COL(batch, INT),
    COL(prompt_tokens, INT),
    COL(output_tokens, INT),
    COL(prefill_chunk, INT),
    COL(kda_state, TEXT),
    COL(mla_cache, TEXT),
    COL(expert_activations, TEXT),
    COL(dispatch, TEXT),
    COL(tp_comm, TEXT),
    COL(moe_imbalance, REAL),
    COL(cuda_graph, INT),
    COL(ok, INT),
    COL(error, TEXT),
    COL(weights_bytes, INT),
    COL(kv_bytes_per_token, INT),
    COL(state_bytes_per_request, INT),
    OUT(ttft_s, REAL),
    OUT(tpot_s, REAL),
    OUT(tpot_first_s, REAL),
    OUT(tpot_last_s, REAL),
    OUT(e2e_s, REAL),
    OUT(tokens_per_s, REAL),
    OUT(tokens_per_s_per_gpu, REAL),
    OUT(prefill_chunks, INT),
    OUT(decode_context, INT),
    OUT(requests_per_gpu, INT),
    OUT(fits, INT),
    OUT(missing_bytes, INT),
    OUT(max_batch, INT),
    OUT(hbm_weights, INT),
    OUT(hbm_kda_state, INT),
    OUT(hbm_conv_state, INT),
    OUT(hbm_mla_kv, INT),
    OUT(hbm_dsa_index, INT),
    OUT(hbm_activations, INT),
    OUT(hbm_workspace, INT),
    OUT(hbm_total, INT),
    OUT(hbm_capacity, INT),
    OUT(decode_compute_s, REAL),
    OUT(decode_memory_s, REAL),
    OUT(decode_latency_s, REAL),
    OUT(decode_comm_s, REAL),
    OUT(prefill_tokens_per_s_per_gpu, REAL),
    OUT(decode_step_s, REAL),
    OUT(prefill_exposed_comm_s, REAL),
    OUT(decode_exposed_comm_s, REAL),
    OUT(prefill_critical_comm_s, REAL),
    OUT(decode_critical_comm_s, REAL),
};

enum { N_FIXED = sizeof fixed_columns / sizeof fixed_columns[0], N_COLUMNS = N_FIXED + 2 * OPC_COUNT };

static const struct sweep_column *build_columns(void)
{
	static struct sweep_column cols[N_COLUMNS];
	static char names[2 * OPC_COUNT][48];
	memcpy(cols, fixed_columns, sizeof fixed_columns);
	for (int ph = 0; ph < 2; ph++)
		for (int c = 0; c < OPC_COUNT; c++) {
			int i = ph * OPC_COUNT + c;
			snprintf(names[i], sizeof names[i], "%s_%s_s", ph ? "decode" : "prefill",
			         opclass_key((enum opclass)c));
			cols[N_FIXED + i] = (struct sweep_column){
			    .name = names[i],
			    .type = SWEEP_COL_REAL,
			    .offset = ph ? offsetof(struct sweep_row, decode_s) + (size_t)c * sizeof(double)
			                 : offsetof(struct sweep_row, prefill_s) + (size_t)c * sizeof(double),
			    .cap_bytes = sizeof(double),
			    .output = true,
			};
		}
	return cols;
}

const struct sweep_column *sweep_columns(void)
{
	/* Built by the first caller; sweep_run calls it before starting threads. */
	static const struct sweep_column *cols;
	if (!cols)
		cols = build_columns();
	return cols;
}

int sweep_n_columns(void)
{
	return N_COLUMNS;
}

/* ---- CSV ---- */

void sweep_csv_double(FILE *out, double v)
{
	fprintf(out, "%.17g", v);
}

void sweep_csv_header(FILE *out)
{
	const struct sweep_column *cols = sweep_columns();
	for (int i = 0; i < N_COLUMNS; i++)
		fprintf(out, "%s%s", i ? "," : "", cols[i].name);
	fputc('\n', out);
}

static void csv_text(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void sweep_csv_rows(FILE *out, const struct sweep_row *rows, int64_t n)
{
	const struct sweep_column *cols = sweep_columns();
	for (int64_t r = 0; r < n; r++) {
		const char *base = (const char *)&rows[r];
		for (int i = 0; i < N_COLUMNS; i++) {
			if (i)
				fputc(',', out);
			if (cols[i].output && !rows[r].ok)
				continue;
			const void *p = base + cols[i].offset;
			switch (cols[i].type) {
			case SWEEP_COL_INT: {
				int64_t v;
				memcpy(&v, p, sizeof v);
				fprintf(out, "%lld", (long long)v);
				break;
			}
			case SWEEP_COL_REAL: {
				double v;
				memcpy(&v, p, sizeof v);
				sweep_csv_double(out, v);
				break;
			}
			case SWEEP_COL_TEXT:
				csv_text(out, (const char *)p);
				break;
			}
		}
		fputc('\n', out);
	}
}
