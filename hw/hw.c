#include "hw/hw.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file hw_presets[];

double hw_curve_eval(const struct hw_curve *c, double x)
{
	if (c->half <= 0)
		return c->max;
	if (x <= 0)
		return c->max * 1e-9;
	return c->max * x / (x + c->half);
}

double hw_curve_time_s(const struct hw_curve *c, double x, double peak_per_s)
{
	if (!(x > 0))
		return 0;
	return (x + (c->half > 0 ? c->half : 0)) / (peak_per_s * c->max);
}

static const char *const clock_names[HW_CLOCK_COUNT + 1] = {"boost", "sustained", "power", NULL};

const char *hw_clock_name(enum hw_clock c)
{
	return (unsigned)c < HW_CLOCK_COUNT ? clock_names[c] : "?";
}

int hw_clock_parse(const char *s, enum hw_clock *out)
{
	for (int c = 0; c < HW_CLOCK_COUNT; c++)
		if (strcmp(s, clock_names[c]) == 0) {
			*out = (enum hw_clock)c;
			return 0;
		}
	return -EINVAL;
}

double hw_clock_hz(const struct hw *hw, enum hw_clock c)
{
	if (c == HW_CLOCK_SUSTAINED && hw->sustained_sm_clock_hz > 0)
		return hw->sustained_sm_clock_hz;
	return hw->sm_clock_hz;
}

int hw_clock_sel_parse(const char *s, struct hw_clock_sel *out, char *why, size_t n)
{
	enum hw_clock r;
	if (hw_clock_parse(s, &r) == 0) {
		*out = (struct hw_clock_sel){.regime = r};
		return 0;
	}
	const char *p = s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '+' || *p == '-')) {
		snprintf(why, n,
			 "'%.64s' is not a clock (expected boost, sustained, power or a clock in MHz, e.g. 1830 or "
			 "1830MHz)",
			 s);
		return -EINVAL;
	}
	char *end;
	errno = 0;
	double mhz = strtod(p, &end);
	/* hexadecimal, inf, nan: not a clock */
	const bool digits = strspn(p, "0123456789.eE+-") >= (size_t)(end - p);
	while (*end == ' ')
		end++;
	if (strcasecmp(end, "mhz") == 0)
		end += 3;
	if (!digits || end == p || *end || errno == ERANGE || !isfinite(mhz)) {
		snprintf(why, n,
			 "'%.64s' is not a clock (expected boost, sustained, power or a finite clock in MHz, e.g. "
			 "1830 or 1830MHz)",
			 s);
		return -EINVAL;
	}
	if (!(mhz > 0)) {
		snprintf(why, n, "'%.64s': a clock must be positive", s);
		return -EINVAL;
	}
	*out = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST, .given_hz = mhz * 1e6};
	return 0;
}

int hw_clock_sel_check(const struct hw *hw, const struct hw_clock_sel *c, char *why, size_t n)
{
	if (!(c->given_hz > 0) && c->regime == HW_CLOCK_POWER && !(hw->power_limit_w > 0)) {
		snprintf(why, n, "power needs the preset's power-limit model (device.power_*): %s has none",
			 hw->name);
		return -EINVAL;
	}
	if (!(c->given_hz > 0))
		return 0;
	/* the preset's boost is what its rates are at: a faster clock is beyond what it describes
	 * (both are MHz times 1e6, so a clock given as the preset writes it compares equal) */
	if (!(c->given_hz <= hw->sm_clock_hz)) {
		snprintf(why, n, "%.6g MHz is above the boost clock: the preset's boost clock is %.6g MHz",
			 c->given_hz / 1e6, hw->sm_clock_hz / 1e6);
		return -ERANGE;
	}
	return 0;
}

double hw_clock_sel_hz(const struct hw *hw, const struct hw_clock_sel *c)
{
	if (!c)
		return hw->sm_clock_hz;
	return c->given_hz > 0 ? c->given_hz : hw_clock_hz(hw, c->regime);
}

const char *hw_clock_sel_arg(const struct hw_clock_sel *c, char *buf, size_t n)
{
	if (c->given_hz > 0)
		snprintf(buf, n, "%.10g", c->given_hz / 1e6);
	else
		snprintf(buf, n, "%s", hw_clock_name(c->regime));
	return buf;
}

const char *hw_clock_sel_kind(const struct hw_clock_sel *c)
{
	return c->given_hz > 0 ? "given" : hw_clock_name(c->regime);
}

static const char *const class_names[HW_CLASS_COUNT + 1] = {
	"gemm", "grouped_gemm", "memory", "kda_chunk", "kda_decode", "attention", "comm", "kda_verify",
	"attention_prefill", "attnres", "route", "combine", "short_conv", "quant", NULL,
};

const char *hw_class_name(enum hw_class c)
{
	return (unsigned)c < HW_CLASS_COUNT ? class_names[c] : "?";
}

int hw_class_parse(const char *s, enum hw_class *out)
{
	for (int c = 0; c < HW_CLASS_COUNT; c++)
		if (strcmp(s, class_names[c]) == 0) {
			*out = (enum hw_class)c;
			return 0;
		}
	return -EINVAL;
}

static const char *const coll_names[HW_COLL_COUNT + 1] = {
	"allreduce", "allgather", "reducescatter", "alltoall", NULL,
};

const char *hw_coll_name(enum hw_coll c)
{
	return (unsigned)c < HW_COLL_COUNT ? coll_names[c] : "?";
}

int hw_coll_parse(const char *s, enum hw_coll *out)
{
	for (int c = 0; c < HW_COLL_COUNT; c++)
		if (strcmp(s, coll_names[c]) == 0) {
			*out = (enum hw_coll)c;
			return 0;
		}
	return -EINVAL;
}

/* Linear in (log x, log y) between points, flat beyond the ends. xs ascending, ys > 0. */
static double interp_loglog(const double *xs, const double *ys, int n, double x)
{
	if (n <= 0)
		return 1;
	if (n == 1 || x <= xs[0])
		return ys[0];
	if (x >= xs[n - 1])
		return ys[n - 1];
	int lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (xs[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	/* linear in log-log: y = y_lo * (y_hi / y_lo)^t, t = log(x / x_lo) / log(x_hi / x_lo) */
	double t = log(x / xs[lo]) / log(xs[hi] / xs[lo]);
	return ys[lo] * exp(t * log(ys[hi] / ys[lo]));
}

/* Outside [x0, x1] the end value e tapers to 1 over L = max(1, 2 |log10 e|) decades: with the
 * key being modeled time, t = key / eff then keeps a log-log slope of at least 1/2. */
static double taper(double e, double decades_out)
{
	double l = fmax(1.0, 2.0 * fabs(log10(e)));
	double w = decades_out >= l ? 0 : 1 - decades_out / l;
	return exp(w * log(e));
}

double hw_table_eff_at(const struct hw_table *tb, double flops, double bytes, double model_s, bool *inside)
{
	double x = tb->key == HW_KEY_FLOPS ? flops : tb->key == HW_KEY_BYTES ? bytes : model_s;
	bool in = tb->n > 0 && x >= tb->x[0] && x <= tb->x[tb->n - 1];
	if (inside)
		*inside = in;
	if (tb->n <= 0)
		return 1;
	/* a table over a size (not modeled time) holds its end value: a constant factor keeps the
	 * model's growth, a taper over a size would not */
	if (in || !(x > 0) || tb->key != HW_KEY_MODEL_S)
		return interp_loglog(tb->x, tb->eff, tb->n, x);
	if (x < tb->x[0])
		return taper(tb->eff[0], log10(tb->x[0] / x));
	return taper(tb->eff[tb->n - 1], log10(x / tb->x[tb->n - 1]));
}

const struct hw_table *hw_table_find(const struct hw *hw, enum hw_class c, enum dtype t)
{
	const struct hw_table *any = NULL;
	for (int i = 0; i < hw->n_tables; i++) {
		const struct hw_table *tb = &hw->tables[i];
		if (tb->cls != c || (c == HW_CLASS_COMM && !tb->any_coll))
			continue;
		if (!tb->any_dtype && tb->dtype == t)
			return tb;
		if (tb->any_dtype && !any)
			any = tb;
	}
	return any;
}

double hw_table_eff(const struct hw *hw, enum hw_class c, enum dtype t, double flops, double bytes,
		    double model_s)
{
	const struct hw_table *tb = hw_table_find(hw, c, t);
	return tb ? hw_table_eff_at(tb, flops, bytes, model_s, NULL) : 1;
}

const struct hw_coll_model *hw_coll_model(const struct hw *hw, enum hw_coll c, int64_t ranks)
{
	const struct hw_coll_model *any = NULL, *below = NULL;
	for (int i = 0; i < hw->n_coll; i++) {
		const struct hw_coll_model *m = &hw->coll[i];
		if (m->coll != c)
			continue;
		if (m->ranks == ranks)
			return m;
		if (m->ranks == 0)
			any = m;
		else if (m->ranks < ranks && (!below || m->ranks > below->ranks))
			below = m;
	}
	return below ? below : any;
}

const struct hw_table *hw_comm_table_find(const struct hw *hw, enum hw_coll c, int64_t ranks)
{
	const struct hw_table *kind = NULL, *all = NULL, *below = NULL;
	for (int i = 0; i < hw->n_tables; i++) {
		const struct hw_table *tb = &hw->tables[i];
		if (tb->cls != HW_CLASS_COMM)
			continue;
		if (tb->any_coll) {
			all = all ? all : tb;
		} else if (tb->coll == c) {
			if (tb->ranks == ranks)
				return tb;
			if (tb->ranks == 0)
				kind = tb;
			else if (tb->ranks < ranks && (!below || tb->ranks > below->ranks))
				below = tb;
		}
	}
	return below ? below : kind ? kind : all;
}

double hw_comm_table_eff(const struct hw *hw, enum hw_coll c, int64_t ranks, double bytes, double model_s)
{
	const struct hw_table *tb = hw_comm_table_find(hw, c, ranks);
	return tb ? hw_table_eff_at(tb, 0, bytes, model_s, NULL) : 1;
}

const struct hw_gemm_points *hw_gemm_points_find(const struct hw *hw, enum dtype t, int64_t n, int64_t k)
{
	for (int i = 0; i < hw->n_gemm_points; i++) {
		const struct hw_gemm_points *g = &hw->gemm_points[i];
		if (g->dtype == t && g->n == n && g->k == k && g->points > 0)
			return g;
	}
	return NULL;
}

/* The number of measured m at most mm (the points' m ascend). */
static int gemm_points_le(const struct hw_gemm_points *g, double mm)
{
	int lo = 0, hi = g->points;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (g->m[mid] <= mm)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of measured m below mm. */
static int gemm_points_lt(const struct hw_gemm_points *g, double mm)
{
	int lo = 0, hi = g->points;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (g->m[mid] < mm)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void hw_gemm_bounds(const struct hw *hw, enum dtype t, int64_t m, int64_t n, int64_t k, double *lo_s,
		    double *hi_s)
{
	double lo = 0, hi = INFINITY, mm = (double)(m > 0 ? m : 1);
	for (int i = 0; i < hw->n_gemm_points; i++) {
		const struct hw_gemm_points *g = &hw->gemm_points[i];
		if (g->dtype != t || g->points < 1)
			continue;
		/* a shape no larger bounds from below at the last measured m at most m; one no smaller
		 * bounds from above at the first measured m at least m */
		if (g->n <= n && g->k <= k) {
			int a = gemm_points_le(g, mm) - 1;
			if (a >= 0 && g->time_s[a] > lo)
				lo = g->time_s[a];
		}
		if (g->n >= n && g->k >= k) {
			int b = gemm_points_lt(g, mm);
			if (b < g->points && g->time_s[b] < hi)
				hi = g->time_s[b];
		}
	}
	*lo_s = lo;
	*hi_s = hi;
}

double hw_gemm_waves(const struct hw *hw, double tiles)
{
	double exact = tiles / (double)hw->sms;
	return ceil(exact) - hw->gemm_wave_smoothing * (ceil(exact) - exact);
}

const char *const *hw_preset_names(void)
{
	static const char *names[32];
	return embedded_names(hw_presets, names, 32);
}

enum dtype hw_math_dtype(const struct hw *hw, enum dtype t)
{
	for (int guard = 0; guard < DT_COUNT; guard++) {
		if (hw->tensor_flops_per_s[t] > 0)
			return t;
		switch (t) {
		case DT_MXFP4:
			t = DT_MXFP8;
			break;
		case DT_MXFP8:
			t = DT_FP8;
			break;
		case DT_FP8:
		case DT_FP16:
			t = DT_BF16;
			break;
		default:
			return t;
		}
	}
	return t;
}

double hw_tensor_rate(const struct hw *hw, enum dtype t)
{
	enum dtype m = hw_math_dtype(hw, t);
	if (hw->tensor_flops_per_s[m] > 0)
		return hw->tensor_flops_per_s[m];
	return hw->vector_flops_per_s;
}

struct field {
	const char *key;
	double scale;  /* value in the file times scale = value in SI units */
	double *dst_d; /* one of dst_d / dst_i */
	int64_t *dst_i;
	bool required;
};

static int read_fields(const struct doc *d, const struct doc_node *map, const char *what,
		       const struct field *fields, struct err *e)
{
	int rc = doc_expect(d, map, DOC_MAP, what, e);
	if (rc < 0)
		return rc;
	const char *keys[48];
	int n = 0;
	for (const struct field *f = fields; f->key && n < 47; f++)
		keys[n++] = f->key;
	keys[n] = NULL;
	if ((rc = doc_check_keys(d, map, keys, e)) < 0)
		return rc;
	for (const struct field *f = fields; f->key; f++) {
		const struct doc_node *v = doc_get(map, f->key);
		if (!v) {
			if (f->required)
				return doc_error(d, map, e, "%s: missing key '%s'", what, f->key);
			continue;
		}
		if (!f->dst_d && !f->dst_i)
			continue; /* read by the caller */
		double x;
		if ((rc = doc_double(d, v, f->key, &x, e)) < 0)
			return rc;
		if (x < 0)
			return doc_error(d, v, e, "%s: must not be negative", f->key);
		if (f->dst_d) {
			*f->dst_d = x * f->scale;
		} else {
			double y = x * f->scale + 0.5;
			if (!(y < 9223372036854775807.0)) /* an int64 field: no float-to-int overflow */
				return doc_error(d, v, e, "%s: %g is too large", f->key, x);
			*f->dst_i = (int64_t)y;
		}
	}
	return 0;
}

/* ---- the key tables: the scalar keys of device:, interconnect: and kernels:, read by the loader
 * and written by hw_write_section, in the order they are written ---- */

enum hw_key_type {
	HK_F64,   /* double */
	HK_I64,   /* int64, the file's number rounded */
	HK_BYTES, /* int64 bytes from a file unit (MiB, GiB, KiB, GB), truncated */
	HK_HAND,  /* read and written by hand (maps: tensor_tflops, gemm_eff) */
};
enum hw_key_write { HK_ALWAYS, HK_NONZERO, HK_NEVER };

struct hw_key {
	const char *key;
	enum hw_key_type type;
	size_t offset;           /* into struct hw */
	double scale;            /* the file's value x scale = the struct's (SI units, bytes) */
	double out_mul, out_div; /* written: the struct's value x out_mul / out_div (the exact inverse) */
	int digits;              /* written with %.<digits>g; integers as %lld */
	bool required;
	enum hw_key_write write;
};

#define KEY(k, t, field, sc, mul, div, dig, req, w) {k, t, offsetof(struct hw, field), sc, mul, div, dig, req, w}
#define KEY_HAND(k, req) {k, HK_HAND, 0, 0, 1, 1, 0, req, HK_ALWAYS}

const char *hw_power_class_name(enum hw_power_class c)
{
#define POWER_CLASS_NAME(id, name) name,
	static const char *const names[] = {HW_POWER_CLASSES(POWER_CLASS_NAME)};
#undef POWER_CLASS_NAME
	return (unsigned)c < HW_POWER_CLASS_COUNT ? names[c] : NULL;
}

static const struct hw_key device_keys[] = {
	KEY("sms", HK_I64, sms, 1, 1, 1, 0, true, HK_ALWAYS),
	KEY("sm_clock_mhz", HK_F64, sm_clock_hz, 1e6, 1, 1e6, 9, true, HK_ALWAYS),
	KEY("sustained_sm_clock_mhz", HK_F64, sustained_sm_clock_hz, 1e6, 1, 1e6, 9, false, HK_NONZERO),
	KEY("power_limit_w", HK_F64, power_limit_w, 1, 1, 1, 9, false, HK_NONZERO),
	KEY("power_idle_w", HK_F64, power_idle_w, 1, 1, 1, 9, false, HK_NONZERO),
	KEY("power_flop_pj", HK_F64, power_flop_j, 1e-12, 1e12, 1, 9, false, HK_NONZERO),
	KEY("power_byte_pj", HK_F64, power_byte_j, 1e-12, 1e12, 1, 9, false, HK_NONZERO),
	KEY("power_byte_held", HK_I64, power_byte_held, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("power_tau_ms", HK_F64, power_tau_s, 1e-3, 1e3, 1, 9, false, HK_NONZERO),
	KEY("power_window_ms", HK_F64, power_window_s, 1e-3, 1e3, 1, 9, false, HK_NONZERO),
	KEY("power_delay_ms", HK_F64, power_delay_s, 1e-3, 1e3, 1, 9, false, HK_NONZERO),
	KEY("power_rise_ms", HK_F64, power_rise_s, 1e-3, 1e3, 1, 9, false, HK_NONZERO),
	KEY("power_fall_ms", HK_F64, power_fall_s, 1e-3, 1e3, 1, 9, false, HK_NONZERO),
#define POWER_CLASS_KEY(id, name)                                                                  \
	KEY("power_flop_pj_" name, HK_F64, power_flop_j_class[HW_POWER_##id], 1e-12, 1e12, 1, 9, false, HK_NONZERO),
	HW_POWER_CLASSES(POWER_CLASS_KEY)
#undef POWER_CLASS_KEY
	KEY("clock_scaled_excess", HK_I64, clock_scaled_excess, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("power_flop_clock_exp", HK_F64, power_flop_clock_exp, 1, 1, 1, 9, false, HK_NONZERO),
#define POWER_ACTIVE_KEY(id, name)                                                                 \
	KEY("power_active_w_" name, HK_F64, power_active_w_class[HW_POWER_##id], 1, 1, 1, 9, false, HK_NONZERO),
	HW_POWER_CLASSES(POWER_ACTIVE_KEY)
#undef POWER_ACTIVE_KEY
	KEY("power_active_clock_exp", HK_F64, power_active_clock_exp, 1, 1, 1, 9, false, HK_NONZERO),
	KEY("power_flop_fp8_scale", HK_F64, power_flop_fp8_scale, 1, 1, 1, 9, false, HK_NONZERO),
	KEY("power_welem_pj", HK_F64, power_welem_j, 1e-12, 1e12, 1, 9, false, HK_NONZERO),
#define CLOCK_BOUND_KEY(id, name)                                                                  \
	KEY("clock_bound_" name, HK_F64, clock_bound[HW_POWER_##id], 1, 1, 1, 9, false, HK_NONZERO),
	HW_POWER_CLASSES(CLOCK_BOUND_KEY)
#undef CLOCK_BOUND_KEY
#define CLOCK_SM_SHARE_KEY(id, name)                                                               \
	KEY("clock_sm_share_" name, HK_F64, clock_sm_share[HW_POWER_##id], 1, 1, 1, 9, false, HK_NONZERO),
	HW_POWER_CLASSES(CLOCK_SM_SHARE_KEY)
#undef CLOCK_SM_SHARE_KEY
	KEY("power_min_sm_clock_mhz", HK_F64, power_min_sm_clock_hz, 1e6, 1, 1e6, 9, false, HK_NONZERO),
	KEY("l2_mib", HK_BYTES, l2_bytes, 1048576.0, 1, 1048576.0, 9, true, HK_ALWAYS),
	KEY("smem_per_sm_kib", HK_BYTES, smem_per_sm_bytes, 1024.0, 1, 1024.0, 9, false, HK_ALWAYS),
	KEY("hbm_gb", HK_BYTES, hbm_bytes, 1e9, 1, 1e9, 9, false, HK_NEVER), /* or hbm_mib */
	KEY("hbm_mib", HK_BYTES, hbm_bytes, 1048576.0, 1, 1048576.0, 9, false, HK_ALWAYS),
	KEY("hbm_gb_per_s", HK_F64, hbm_bw_bytes_per_s, 1e9, 1, 1e9, 9, true, HK_ALWAYS),
	KEY("l2_gb_per_s", HK_F64, l2_bw_bytes_per_s, 1e9, 1, 1e9, 9, false, HK_ALWAYS),
	KEY_HAND("tensor_tflops", true),
	KEY("vector_tflops", HK_F64, vector_flops_per_s, 1e12, 1, 1e12, 9, true, HK_ALWAYS),
	KEY("launch_latency_us", HK_F64, launch_latency_s, 1e-6, 1e6, 1, 9, true, HK_ALWAYS),
	KEY("graph_launch_latency_us", HK_F64, graph_launch_latency_s, 1e-6, 1e6, 1, 9, false, HK_ALWAYS),
	{NULL, HK_HAND, 0, 0, 1, 1, 0, false, HK_NEVER},
};

static const struct hw_key interconnect_keys[] = {
	KEY("domain_gpus", HK_I64, domain_gpus, 1, 1, 1, 0, true, HK_ALWAYS),
	KEY("nvlink_gb_per_s", HK_F64, nvlink_bw_bytes_per_s, 1e9, 1, 1e9, 9, true, HK_ALWAYS),
	KEY("nvlink_latency_us", HK_F64, nvlink_latency_s, 1e-6, 1e6, 1, 9, true, HK_ALWAYS),
	KEY("nic_gb_per_s", HK_F64, nic_bw_bytes_per_s, 1e9, 1, 1e9, 9, true, HK_ALWAYS),
	KEY("nic_latency_us", HK_F64, nic_latency_s, 1e-6, 1e6, 1, 9, true, HK_ALWAYS),
	{NULL, HK_HAND, 0, 0, 1, 1, 0, false, HK_NEVER},
};

static const struct hw_key kernel_keys[] = {
	KEY("gemm_tile_m", HK_I64, gemm_tile_m, 1, 1, 1, 0, true, HK_ALWAYS),
	KEY("gemm_tile_n", HK_I64, gemm_tile_n, 1, 1, 1, 0, true, HK_ALWAYS),
	KEY("gemm_wave_smoothing", HK_F64, gemm_wave_smoothing, 1, 1, 1, 6, false, HK_ALWAYS),
	KEY("gemm_fixed_cycles", HK_F64, gemm_fixed_cycles, 1, 1, 1, 9, false, HK_ALWAYS),
	KEY("gemm_wave_cycles", HK_F64, gemm_wave_cycles, 1, 1, 1, 9, false, HK_ALWAYS),
	KEY("gemm_kstep_cycles", HK_F64, gemm_kstep_cycles, 1, 1, 1, 9, false, HK_ALWAYS),
	KEY("gemm_store_bytes_per_sm_cycle", HK_F64, gemm_store_bytes_per_sm_cycle, 1, 1, 1, 9, false, HK_NONZERO),
	KEY("kda_chunk_step_cycles", HK_F64, kda_chunk_step_cycles, 1, 1, 1, 6, true, HK_ALWAYS),
	KEY("kda_step_row_cycles", HK_F64, kda_step_row_cycles, 1, 1, 1, 6, false, HK_ALWAYS),
	KEY("kda_intra_cycles_per_token_head", HK_F64, kda_intra_cycles_per_token_head, 1, 1, 1, 6, false, HK_ALWAYS),
	KEY("kda_fixed_cycles", HK_F64, kda_fixed_cycles, 1, 1, 1, 6, false, HK_NONZERO),
	KEY("kda_verify_lin_cycles", HK_F64, kda_verify_lin_cycles, 1, 1, 1, 6, false, HK_ALWAYS),
	KEY("kda_verify_quad_cycles", HK_F64, kda_verify_quad_cycles, 1, 1, 1, 6, false, HK_ALWAYS),
	KEY("kda_max_v_split", HK_I64, kda_max_v_split, 1, 1, 1, 0, false, HK_ALWAYS),
	KEY("kda_overlap_max_seqs", HK_I64, kda_overlap_max_seqs, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("kda_overlap_min_heads", HK_I64, kda_overlap_min_heads, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("kda_overlap_min_tokens", HK_I64, kda_overlap_min_tokens, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("kda_overlap_rec_share", HK_F64, kda_overlap_rec_share, 1, 1, 1, 6, false, HK_NONZERO),
	KEY("kda_pair_max_pairs", HK_I64, kda_pair_max_pairs, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("kda_pair_chain_ratio", HK_F64, kda_pair_chain_ratio, 1, 1, 1, 6, false, HK_NONZERO),
	KEY("grouped_fp4_chunk_rows", HK_I64, grouped_fp4_chunk_rows, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("grouped_fp4_small_chunk_rows", HK_I64, grouped_fp4_small_chunk_rows, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("grouped_fp4_gemv_rows", HK_I64, grouped_fp4_gemv_rows, 1, 1, 1, 0, false, HK_NONZERO),
	KEY("grouped_fp4_welems_per_sm_cycle", HK_F64, grouped_fp4_welems_per_sm_cycle, 1, 1, 1, 6, false, HK_NONZERO),
	KEY("reserved_gib", HK_BYTES, reserved_bytes, 1073741824.0, 1, 1073741824.0, 9, true, HK_ALWAYS),
	KEY_HAND("gemm_eff", false),
	{NULL, HK_HAND, 0, 0, 1, 1, 0, false, HK_NEVER},
};

static int read_keys(const struct doc *d, const struct doc_node *map, const char *what,
		     const struct hw_key *keys, struct hw *hw, struct err *e)
{
	int rc = doc_expect(d, map, DOC_MAP, what, e);
	if (rc < 0)
		return rc;
	size_t n = 0;
	for (const struct hw_key *k = keys; k->key; k++)
		n++;
	const char **names = malloc((n + 1) * sizeof *names); /* every key of the table, NULL-ended */
	if (!names) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	n = 0;
	for (const struct hw_key *k = keys; k->key; k++)
		names[n++] = k->key;
	names[n] = NULL;
	rc = doc_check_keys(d, map, names, e);
	free(names);
	if (rc < 0)
		return rc;
	for (const struct hw_key *k = keys; k->key; k++) {
		const struct doc_node *v = doc_get(map, k->key);
		if (!v) {
			if (k->required)
				return doc_error(d, map, e, "%s: missing key '%s'", what, k->key);
			continue;
		}
		if (k->type == HK_HAND)
			continue; /* read by the caller */
		double x;
		if ((rc = doc_double(d, v, k->key, &x, e)) < 0)
			return rc;
		if (x < 0)
			return doc_error(d, v, e, "%s: must not be negative", k->key);
		char *dst = (char *)hw + k->offset;
		if (k->type == HK_F64) {
			double y = x * k->scale;
			memcpy(dst, &y, sizeof y);
		} else {
			double y = x * k->scale + (k->type == HK_I64 ? 0.5 : 0.0);
			if (!(y < 9223372036854775807.0)) /* an int64 field: no float-to-int overflow */
				return doc_error(d, v, e, "%s: %g is too large", k->key, x);
			int64_t i = (int64_t)y;
			memcpy(dst, &i, sizeof i);
		}
	}
	return 0;
}

/* The power-limit model: any of its keys (a class's FLOP energy too) needs its limit, time
 * constant and floor (the draws and the idle power may be 0: written only when not; a class's 0
 * is the global FLOP energy); the idle draw below the limit, the floor not
 * above boost, not every draw 0. */
static int check_power(const struct doc *d, const struct doc_node *dev, const struct hw *hw, struct err *e)
{
	if (hw->clock_scaled_excess != 0 && hw->clock_scaled_excess != 1)
		return doc_error(d, doc_get(dev, "clock_scaled_excess"), e, "device: clock_scaled_excess must be 0 or 1");
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		if (hw->clock_bound[c] >= 0 && hw->clock_bound[c] <= 1 && (hw->clock_bound[c] == 0 || hw->clock_bound[c] >= 0.05))
			continue;
		char key[64];
		snprintf(key, sizeof key, "clock_bound_%s", hw_power_class_name((enum hw_power_class)c));
		return doc_error(d, doc_get(dev, key), e, "device: %s must be in [0.05, 1] (0: 1)", key);
	}
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		if (hw->clock_sm_share[c] >= 0 && hw->clock_sm_share[c] <= 1)
			continue;
		char key[64];
		snprintf(key, sizeof key, "clock_sm_share_%s", hw_power_class_name((enum hw_power_class)c));
		return doc_error(d, doc_get(dev, key), e, "device: %s must be in [0, 1]", key);
	}
	static const char *const keys[] = {"power_limit_w", "power_idle_w", "power_flop_pj", "power_byte_pj",
					   "power_tau_ms", "power_window_ms", "power_byte_held", "power_min_sm_clock_mhz",
					   "power_flop_clock_exp", "power_delay_ms", "power_rise_ms", "power_fall_ms",
					   "power_active_clock_exp", "power_flop_fp8_scale", "power_welem_pj"};
	static const char *const required[] = {"power_limit_w", "power_tau_ms", "power_min_sm_clock_mhz"};
	bool any = false;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		any = any || doc_get(dev, keys[i]);
	for (int c = 0; c < HW_POWER_CLASS_COUNT && !any; c++) {
		char key[64];
		snprintf(key, sizeof key, "power_flop_pj_%s", hw_power_class_name((enum hw_power_class)c));
		any = doc_get(dev, key) != NULL;
		snprintf(key, sizeof key, "power_active_w_%s", hw_power_class_name((enum hw_power_class)c));
		any = any || doc_get(dev, key) != NULL;
	}
	if (!any)
		return 0;
	for (size_t i = 0; i < sizeof required / sizeof *required; i++)
		if (!doc_get(dev, required[i]))
			return doc_error(d, dev, e, "device: the power model needs '%s'", required[i]);
	if (!(hw->power_limit_w > hw->power_idle_w))
		return doc_error(d, doc_get(dev, "power_limit_w"), e,
				 "device: power_limit_w must exceed power_idle_w (the draw idle)");
	if (!(hw->power_flop_j > 0) && !(hw->power_byte_j > 0))
		return doc_error(d, doc_get(dev, "power_limit_w"), e,
				 "device: power_flop_pj and power_byte_pj must not both be 0");
	if (!(hw->power_tau_s > 0))
		return doc_error(d, doc_get(dev, "power_tau_ms"), e, "device: power_tau_ms must be positive");
	if (hw->power_byte_held != 0 && (hw->power_byte_held != 1 || !(hw->power_byte_j > 0)))
		return doc_error(d, doc_get(dev, "power_byte_held"), e,
				 "device: power_byte_held must be 0 or 1, and 1 needs a positive power_byte_pj");
	if (!(hw->power_flop_clock_exp >= 0 && hw->power_flop_clock_exp <= 4))
		return doc_error(d, doc_get(dev, "power_flop_clock_exp"), e,
				 "device: power_flop_clock_exp must be in (0, 4] (0: 2)");
	if (!(hw->power_flop_fp8_scale >= 0 && hw->power_flop_fp8_scale <= 2))
		return doc_error(d, doc_get(dev, "power_flop_fp8_scale"), e,
				 "device: power_flop_fp8_scale must be in (0, 2] (0: 1)");
	if (!(hw->power_welem_j >= 0 && hw->power_welem_j < 1e-9))
		return doc_error(d, doc_get(dev, "power_welem_pj"), e,
				 "device: power_welem_pj must be in [0, 1000) (pJ an expanded weight element)");
	if (!(hw->power_active_clock_exp >= 0 && hw->power_active_clock_exp <= 4))
		return doc_error(d, doc_get(dev, "power_active_clock_exp"), e,
				 "device: power_active_clock_exp must be in (0, 4] (0: 1)");
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		if (hw->power_active_w_class[c] >= 0 && hw->power_active_w_class[c] < hw->power_limit_w * 4)
			continue;
		char key[64];
		snprintf(key, sizeof key, "power_active_w_%s", hw_power_class_name((enum hw_power_class)c));
		return doc_error(d, doc_get(dev, key), e, "device: %s must be in [0, 4 x power_limit_w) W", key);
	}
	if (!(hw->power_window_s >= 0) || !isfinite(hw->power_window_s))
		return doc_error(d, doc_get(dev, "power_window_ms"), e,
				 "device: power_window_ms must be 0 (no window) or positive");
	static const struct {
		const char *key;
		size_t off;
	} lag[] = {{"power_delay_ms", offsetof(struct hw, power_delay_s)},
		   {"power_rise_ms", offsetof(struct hw, power_rise_s)},
		   {"power_fall_ms", offsetof(struct hw, power_fall_s)}};
	for (size_t i = 0; i < sizeof lag / sizeof *lag; i++) {
		double v = *(const double *)((const char *)hw + lag[i].off);
		if (!(v >= 0) || !isfinite(v))
			return doc_error(d, doc_get(dev, lag[i].key), e, "device: %s must be 0 or positive", lag[i].key);
	}
	if (hw->power_delay_s > 0 && !(hw->power_window_s > 0))
		return doc_error(d, doc_get(dev, "power_delay_ms"), e,
				 "device: power_delay_ms needs power_window_ms (the window of what ran before the delay)");
	if (!(hw->power_delay_s > 0) && (hw->power_rise_s > 0 || hw->power_fall_s > 0))
		return doc_error(d, doc_get(dev, hw->power_rise_s > 0 ? "power_rise_ms" : "power_fall_ms"), e,
				 "device: power_rise_ms and power_fall_ms belong to the delayed limiter: set power_delay_ms");
	if (!(hw->power_min_sm_clock_hz > 0) || hw->power_min_sm_clock_hz > hw->sm_clock_hz)
		return doc_error(d, doc_get(dev, "power_min_sm_clock_mhz"), e,
				 "device: power_min_sm_clock_mhz must be positive and not exceed sm_clock_mhz (the "
				 "boost clock)");
	return 0;
}

static const struct hw_key *section_keys(const char *section)
{
	if (strcmp(section, "device") == 0)
		return device_keys;
	if (strcmp(section, "interconnect") == 0)
		return interconnect_keys;
	if (strcmp(section, "kernels") == 0)
		return kernel_keys;
	return NULL;
}

int hw_write_section(FILE *f, const struct hw *hw, const char *section)
{
	const struct hw_key *keys = section_keys(section);
	if (!keys)
		return -EINVAL;
	for (const struct hw_key *k = keys; k->key; k++) {
		const char *src = (const char *)hw + k->offset;
		if (k->type == HK_HAND) {
			if (strcmp(k->key, "tensor_tflops") == 0) {
				fprintf(f, "  tensor_tflops:\n");
				for (int t = 0; t < DT_COUNT; t++)
					if (hw->tensor_flops_per_s[t] > 0)
						fprintf(f, "    %s: %.9g\n", dtype_name((enum dtype)t),
							hw->tensor_flops_per_s[t] / 1e12);
			} else if (strcmp(k->key, "gemm_eff") == 0) {
				bool any = false;
				for (int t = 0; t < DT_COUNT; t++)
					if (hw->gemm_eff[t] > 0) {
						fprintf(f, "%s%s: %.9g", any ? ", " : "  gemm_eff: {",
							dtype_name((enum dtype)t), hw->gemm_eff[t]);
						any = true;
					}
				if (any)
					fprintf(f, "}\n");
			}
			continue;
		}
		if (k->write == HK_NEVER)
			continue;
		if (k->type == HK_F64) {
			double v;
			memcpy(&v, src, sizeof v);
			if (k->write == HK_NONZERO && !(v > 0))
				continue;
			fprintf(f, "  %s: %.*g\n", k->key, k->digits, v * k->out_mul / k->out_div);
		} else {
			int64_t v;
			memcpy(&v, src, sizeof v);
			if (k->write == HK_NONZERO && v <= 0)
				continue;
			if (k->type == HK_I64)
				fprintf(f, "  %s: %lld\n", k->key, (long long)v);
			else
				fprintf(f, "  %s: %.*g\n", k->key, k->digits, (double)v * k->out_mul / k->out_div);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static int read_curve(const struct doc *d, const struct doc_node *map, const char *what,
		      double half_scale, const char *half_key, struct hw_curve *c, struct err *e)
{
	const struct field f[] = {
		{"max", 1.0, &c->max, NULL, true},
		{half_key, half_scale, &c->half, NULL, true},
		{NULL, 0, NULL, NULL, false},
	};
	int rc = read_fields(d, map, what, f, e);
	if (rc == 0 && (c->max <= 0 || c->max > 1))
		return doc_error(d, doc_get(map, "max"), e, "%s.max: must be in (0, 1]", what);
	return rc;
}

/* A YAML sequence of positive numbers into out[0..HW_TABLE_POINTS_MAX), ascending if asked. */
static int read_points(const struct doc *d, const struct doc_node *seq, const char *what, double scale,
		       bool ascending, double *out, int *n, struct err *e)
{
	int rc = doc_expect(d, seq, DOC_SEQ, what, e);
	if (rc < 0)
		return rc;
	if (seq->n < 1 || seq->n > HW_TABLE_POINTS_MAX)
		return doc_error(d, seq, e, "%s: expected 1 to %d values, got %zu", what, HW_TABLE_POINTS_MAX,
				 seq->n);
	for (size_t i = 0; i < seq->n; i++) {
		double x;
		if ((rc = doc_double(d, seq->items[i], what, &x, e)) < 0)
			return rc;
		if (!(x > 0) || !isfinite(x))
			return doc_error(d, seq->items[i], e, "%s: values must be positive", what);
		out[i] = x * scale;
		if (ascending && i > 0 && !(out[i] > out[i - 1]))
			return doc_error(d, seq->items[i], e, "%s: sizes must be in increasing order", what);
	}
	*n = (int)seq->n;
	return 0;
}

/* "KIND" or "KIND.RANKS" (a collective kind, then a rank count of at least 2; 0: any). */
static int coll_key(const struct doc *d, const struct doc_node *k, const char *what, const char *s,
		    enum hw_coll *coll, int64_t *ranks, struct err *e)
{
	char kind[48];
	snprintf(kind, sizeof kind, "%s", s);
	char *dot = strchr(kind, '.');
	if (dot)
		*dot = '\0';
	if (hw_coll_parse(kind, coll) < 0) {
		const char *hint = err_suggest(kind, coll_names);
		return doc_error(d, k, e, "%s: unknown collective '%s'%s%s%s", what, kind,
				 hint ? " (did you mean '" : "", hint ? hint : "",
				 hint ? "'?)" : " (expected allreduce, allgather, reducescatter or alltoall)");
	}
	*ranks = 0;
	if (dot && (doc_parse_i64(dot + 1, ranks) < 0 || *ranks < 2))
		return doc_error(d, k, e, "%s: '%s': the rank count after '%s.' must be an integer of at least 2",
				 what, k->str, kind);
	return 0;
}

/* efficiency.collectives: {KIND[.RANKS]: {step_latency_us, max, half_mib}} */
static int read_colls(const struct doc *d, const struct doc_node *map, struct hw *hw, struct err *e)
{
	int rc = doc_expect(d, map, DOC_MAP, "efficiency.collectives", e);
	if (rc < 0)
		return rc;
	if (map->n > HW_COLL_MODELS_MAX)
		return doc_error(d, map, e, "efficiency.collectives: at most %d entries", HW_COLL_MODELS_MAX);
	for (size_t i = 0; i < map->n; i++) {
		const struct doc_node *k = doc_key(map, i), *v = doc_value(map, i);
		struct hw_coll_model *m = &hw->coll[hw->n_coll];
		memset(m, 0, sizeof *m);
		if ((rc = coll_key(d, k, "efficiency.collectives", k->kind == DOC_SCALAR ? k->str : "", &m->coll,
				   &m->ranks, e)) < 0)
			return rc;
		for (int j = 0; j < hw->n_coll; j++)
			if (hw->coll[j].coll == m->coll && hw->coll[j].ranks == m->ranks)
				return doc_error(d, k, e, "efficiency.collectives: '%s' is given twice", k->str);
		const struct field f[] = {
			{"step_latency_us", 1e-6, &m->step_latency_s, NULL, true},
			{"max", 1.0, &m->eff.max, NULL, true},
			{"half_mib", 1048576.0, &m->eff.half, NULL, true},
			{NULL, 0, NULL, NULL, false},
		};
		if ((rc = read_fields(d, v, k->str, f, e)) < 0)
			return rc;
		if (m->eff.max <= 0 || m->eff.max > 1)
			return doc_error(d, doc_get(v, "max"), e, "%s.max: must be in (0, 1]", k->str);
		hw->n_coll++;
	}
	return 0;
}

/* efficiency.tables: {CLASS[.DTYPE]: {model_us|gflop|mib: [...], eff: [...]}}, and for
 * collectives {comm[.KIND[.RANKS]]: {mib: [...], eff: [...]}} */
static int read_tables(const struct doc *d, const struct doc_node *map, struct hw *hw, struct err *e)
{
	int rc = doc_expect(d, map, DOC_MAP, "efficiency.tables", e);
	if (rc < 0)
		return rc;
	if (map->n > HW_TABLES_MAX)
		return doc_error(d, map, e, "efficiency.tables: at most %d tables", HW_TABLES_MAX);
	for (size_t i = 0; i < map->n; i++) {
		const struct doc_node *k = doc_key(map, i), *v = doc_value(map, i);
		struct hw_table *tb = &hw->tables[hw->n_tables];
		memset(tb, 0, sizeof *tb);
		char cls[48];
		snprintf(cls, sizeof cls, "%s", k->kind == DOC_SCALAR ? k->str : "");
		char *dot = strchr(cls, '.');
		if (dot)
			*dot = '\0';
		if (hw_class_parse(cls, &tb->cls) < 0) {
			const char *hint = err_suggest(cls, class_names);
			return doc_error(d, k, e, "efficiency.tables: unknown class '%s'%s%s%s", cls,
					 hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		}
		tb->any_dtype = !dot || tb->cls == HW_CLASS_COMM;
		tb->any_coll = true;
		if (tb->cls == HW_CLASS_COMM) {
			if (dot && (rc = coll_key(d, k, "efficiency.tables", dot + 1, &tb->coll, &tb->ranks, e)) < 0)
				return rc;
			tb->any_coll = !dot;
		} else if (dot && dtype_parse(dot + 1, &tb->dtype) < 0) {
			return doc_error(d, k, e, "efficiency.tables: unknown dtype '%s' (expected one of %s)",
					 dot + 1, dtype_spellings());
		}
		for (int j = 0; j < hw->n_tables; j++) {
			const struct hw_table *o = &hw->tables[j];
			bool same = o->cls == tb->cls && o->any_dtype == tb->any_dtype &&
				    (tb->any_dtype || o->dtype == tb->dtype) && o->any_coll == tb->any_coll &&
				    (tb->any_coll || (o->coll == tb->coll && o->ranks == tb->ranks));
			if (same)
				return doc_error(d, k, e, "efficiency.tables: '%s' is given twice", k->str);
		}
		static const char *const keys[] = {"model_us", "gflop", "mib", "eff", NULL};
		static const double scale[] = {1e-6, 1e9, 1048576.0};
		if ((rc = doc_expect(d, v, DOC_MAP, k->str, e)) < 0 || (rc = doc_check_keys(d, v, keys, e)) < 0)
			return rc;
		const struct doc_node *sz = NULL, *ef = doc_get(v, "eff");
		const char *size_key = "model_us";
		for (int j = 0; j < 3; j++)
			if (doc_get(v, keys[j])) {
				if (sz)
					return doc_error(d, v, e, "%s: give one of model_us, gflop and mib", k->str);
				sz = doc_get(v, keys[j]);
				size_key = keys[j];
				tb->key = (enum hw_table_key)j;
			}
		if (!sz || !ef)
			return doc_error(d, v, e, "%s: missing key '%s'", k->str, sz ? "eff" : "model_us (or gflop, mib)");
		int ns, ne;
		if ((rc = read_points(d, sz, size_key, scale[tb->key], true, tb->x, &ns, e)) < 0 ||
		    (rc = read_points(d, ef, "eff", 1.0, false, tb->eff, &ne, e)) < 0)
			return rc;
		if (ns != ne)
			return doc_error(d, ef, e, "%s: %d sizes but %d efficiencies", k->str, ns, ne);
		tb->n = ns;
		hw->n_tables++;
	}
	return 0;
}

/* efficiency.gemm_points: [{dtype, n, k, m: [...], us: [...]}] */
static int read_gemm_points(const struct doc *d, const struct doc_node *seq, struct hw *hw, struct err *e)
{
	static const char *const keys[] = {"dtype", "n", "k", "m", "us", NULL};
	int rc = doc_expect(d, seq, DOC_SEQ, "efficiency.gemm_points", e);
	if (rc < 0)
		return rc;
	if (seq->n > HW_GEMM_SHAPES_MAX)
		return doc_error(d, seq, e, "efficiency.gemm_points: at most %d shapes", HW_GEMM_SHAPES_MAX);
	for (size_t i = 0; i < seq->n; i++) {
		const struct doc_node *v = seq->items[i];
		struct hw_gemm_points *g = &hw->gemm_points[hw->n_gemm_points];
		memset(g, 0, sizeof *g);
		if ((rc = doc_expect(d, v, DOC_MAP, "gemm shape", e)) < 0 || (rc = doc_check_keys(d, v, keys, e)) < 0)
			return rc;
		for (const char *const *key = keys; *key; key++)
			if (!doc_get(v, *key))
				return doc_error(d, v, e, "gemm shape: missing key '%s'", *key);
		const char *s;
		if ((rc = doc_str(d, doc_get(v, "dtype"), "dtype", &s, e)) < 0)
			return rc;
		if (dtype_parse(s, &g->dtype) < 0)
			return doc_error(d, doc_get(v, "dtype"), e, "dtype: unknown dtype '%s' (expected one of %s)",
					 s, dtype_spellings());
		if ((rc = doc_i64(d, doc_get(v, "n"), "n", &g->n, e)) < 0 ||
		    (rc = doc_i64(d, doc_get(v, "k"), "k", &g->k, e)) < 0)
			return rc;
		if (g->n < 1 || g->k < 1)
			return doc_error(d, v, e, "gemm shape: n and k must be positive");
		int nm, nt;
		if ((rc = read_points(d, doc_get(v, "m"), "m", 1.0, true, g->m, &nm, e)) < 0 ||
		    (rc = read_points(d, doc_get(v, "us"), "us", 1e-6, false, g->time_s, &nt, e)) < 0)
			return rc;
		if (nm != nt)
			return doc_error(d, doc_get(v, "us"), e, "gemm shape: %d m values but %d times", nm, nt);
		for (int j = 1; j < nt; j++)
			if (g->time_s[j] < g->time_s[j - 1])
				return doc_error(d, doc_get(v, "us")->items[j], e,
						 "gemm shape: times must not fall as m grows (a larger GEMM is never faster)");
		g->points = nm;
		for (int j = 0; j < hw->n_gemm_points; j++)
			if (hw->gemm_points[j].n == g->n && hw->gemm_points[j].k == g->k &&
			    hw->gemm_points[j].dtype == g->dtype)
				return doc_error(d, v, e, "gemm shape n=%lld k=%lld %s is given twice",
						 (long long)g->n, (long long)g->k, dtype_name(g->dtype));
		hw->n_gemm_points++;
	}
	return 0;
}

static int load_tree(const struct doc *d, struct hw *hw, struct err *e)
{
	static const char *const top[] = {"name", "description", "source", "calibrated", "device",
		"interconnect", "efficiency", "kernels", "calibration", NULL};
	const struct doc_node *root = d->root;
	int rc = doc_expect(d, root, DOC_MAP, "hardware preset", e);
	if (rc < 0 || (rc = doc_check_keys(d, root, top, e)) < 0)
		return rc;
	const char *s;
	const struct doc_node *n;
	if (!(n = doc_get(root, "name")))
		return doc_error(d, root, e, "missing key 'name'");
	if ((rc = doc_str(d, n, "name", &s, e)) < 0)
		return rc;
	snprintf(hw->name, sizeof hw->name, "%s", s);
	if ((n = doc_get(root, "description"))) {
		if ((rc = doc_str(d, n, "description", &s, e)) < 0)
			return rc;
		snprintf(hw->description, sizeof hw->description, "%s", s);
	}
	if ((n = doc_get(root, "source"))) {
		if ((rc = doc_str(d, n, "source", &s, e)) < 0)
			return rc;
		snprintf(hw->source, sizeof hw->source, "%s", s);
	}
	if (!(n = doc_get(root, "calibrated")))
		return doc_error(d, root, e, "missing key 'calibrated' (true or false)");
	if ((rc = doc_bool(d, n, "calibrated", &hw->calibrated, e)) < 0)
		return rc;

	if (!(n = doc_get(root, "device")))
		return doc_error(d, root, e, "missing key 'device'");
	if ((rc = read_keys(d, n, "device", device_keys, hw, e)) < 0)
		return rc;
	if (doc_get(n, "hbm_gb") && doc_get(n, "hbm_mib"))
		return doc_error(d, n, e, "device: give hbm_gb or hbm_mib, not both");
	if (!(hw->hbm_bytes > 0))
		return doc_error(d, n, e, "device: missing key 'hbm_mib' (or 'hbm_gb')");
	if (hw->sms <= 0 || hw->sm_clock_hz <= 0 || hw->hbm_bw_bytes_per_s <= 0)
		return doc_error(d, n, e, "device: sms, sm_clock_mhz and hbm_gb_per_s must be positive");
	if (hw->sustained_sm_clock_hz > hw->sm_clock_hz)
		return doc_error(d, doc_get(n, "sustained_sm_clock_mhz"), e,
				 "device: sustained_sm_clock_mhz must not exceed sm_clock_mhz (the boost clock)");
	if ((rc = check_power(d, n, hw, e)) < 0)
		return rc;
	if (hw->l2_bw_bytes_per_s <= 0)
		hw->l2_bw_bytes_per_s = 2.5 * hw->hbm_bw_bytes_per_s;
	if (hw->graph_launch_latency_s <= 0)
		hw->graph_launch_latency_s = hw->launch_latency_s / 2;

	const struct doc_node *tt = doc_get(n, "tensor_tflops");
	if ((rc = doc_expect(d, tt, DOC_MAP, "tensor_tflops", e)) < 0)
		return rc;
	for (size_t i = 0; i < tt->n; i++) {
		const struct doc_node *k = doc_key(tt, i);
		enum dtype t;
		if (k->kind != DOC_SCALAR || dtype_parse(k->str, &t) < 0)
			return doc_error(d, k, e, "tensor_tflops: unknown dtype '%s' (expected one of %s)",
					 k->kind == DOC_SCALAR ? k->str : "?", dtype_spellings());
		double x;
		if ((rc = doc_double(d, doc_value(tt, i), k->str, &x, e)) < 0)
			return rc;
		hw->tensor_flops_per_s[t] = x * 1e12;
	}
	if (hw->tensor_flops_per_s[DT_BF16] <= 0)
		return doc_error(d, tt, e, "tensor_tflops: bf16 is required");

	if (!(n = doc_get(root, "interconnect")))
		return doc_error(d, root, e, "missing key 'interconnect'");
	if ((rc = read_keys(d, n, "interconnect", interconnect_keys, hw, e)) < 0)
		return rc;
	if (hw->domain_gpus < 1)
		return doc_error(d, n, e, "interconnect: domain_gpus must be at least 1");

	static const char *const eff_keys[] = {"gemm", "memory", "comm", "collectives", "tables", "gemm_points",
		"gemm_shapes", NULL};
	if (!(n = doc_get(root, "efficiency")))
		return doc_error(d, root, e, "missing key 'efficiency'");
	if ((rc = doc_expect(d, n, DOC_MAP, "efficiency", e)) < 0 ||
	    (rc = doc_check_keys(d, n, eff_keys, e)) < 0)
		return rc;
	if ((rc = read_curve(d, doc_get(n, "gemm"), "efficiency.gemm", 1e9, "half_gflop", &hw->eff_gemm, e)) < 0 ||
	    (rc = read_curve(d, doc_get(n, "memory"), "efficiency.memory", 1048576.0, "half_mib", &hw->eff_memory, e)) < 0 ||
	    (rc = read_curve(d, doc_get(n, "comm"), "efficiency.comm", 1048576.0, "half_mib", &hw->eff_comm, e)) < 0)
		return rc;
	if (doc_get(n, "collectives") && (rc = read_colls(d, doc_get(n, "collectives"), hw, e)) < 0)
		return rc;
	if (doc_get(n, "tables") && (rc = read_tables(d, doc_get(n, "tables"), hw, e)) < 0)
		return rc;
	if (doc_get(n, "gemm_shapes"))
		return doc_error(d, doc_get(n, "gemm_shapes"), e,
				 "efficiency.gemm_shapes: tables of the model before 2026-12 are not read any more; "
				 "re-run `k3sim calibrate` (it writes gemm_points, measured times)");
	if (doc_get(n, "gemm_points") && (rc = read_gemm_points(d, doc_get(n, "gemm_points"), hw, e)) < 0)
		return rc;

	if (!(n = doc_get(root, "kernels")))
		return doc_error(d, root, e, "missing key 'kernels'");
	if ((rc = read_keys(d, n, "kernels", kernel_keys, hw, e)) < 0)
		return rc;
	const struct doc_node *ge = doc_get(n, "gemm_eff");
	if (ge) {
		if ((rc = doc_expect(d, ge, DOC_MAP, "gemm_eff", e)) < 0)
			return rc;
		for (size_t i = 0; i < ge->n; i++) {
			const struct doc_node *k = doc_key(ge, i);
			enum dtype t;
			if (k->kind != DOC_SCALAR || dtype_parse(k->str, &t) < 0)
				return doc_error(d, k, e, "gemm_eff: unknown dtype '%s' (expected one of %s)",
						 k->kind == DOC_SCALAR ? k->str : "?", dtype_spellings());
			double x;
			if ((rc = doc_double(d, doc_value(ge, i), k->str, &x, e)) < 0)
				return rc;
			if (!(x > 0 && x <= 1))
				return doc_error(d, doc_value(ge, i), e, "gemm_eff.%s: must be in (0, 1]", k->str);
			hw->gemm_eff[t] = x;
		}
	}
	if (hw->gemm_tile_m < 1 || hw->gemm_tile_n < 1)
		return doc_error(d, n, e, "kernels: gemm tiles must be at least 1");
	if (hw->kda_max_v_split < 1)
		hw->kda_max_v_split = 8;
	if (hw->gemm_wave_smoothing > 1)
		return doc_error(d, doc_get(n, "gemm_wave_smoothing"), e, "gemm_wave_smoothing: must be in [0, 1]");
	if (hw->kda_overlap_rec_share > 1)
		return doc_error(d, doc_get(n, "kda_overlap_rec_share"), e, "kda_overlap_rec_share: must be in [0, 1]");
	if (hw->kda_overlap_max_seqs > 0 && (hw->kda_overlap_min_heads < 1 || hw->kda_overlap_min_tokens < 1))
		return doc_error(d, doc_get(n, "kda_overlap_max_seqs"), e,
				 "kda_overlap_max_seqs: needs kda_overlap_min_heads and kda_overlap_min_tokens (at least 1)");
	if (hw->kda_pair_max_pairs > 0 && hw->kda_pair_chain_ratio == 0)
		hw->kda_pair_chain_ratio = 1; /* the rule without its ratio: neutral until fitted */
	if (hw->kda_pair_chain_ratio > 1) /* above 1 a batch one pair past the rule would run faster */
		return doc_error(d, doc_get(n, "kda_pair_chain_ratio"), e, "kda_pair_chain_ratio: must be in (0, 1]");
	if (hw->kda_pair_chain_ratio > 0 && hw->kda_pair_max_pairs < 1)
		return doc_error(d, doc_get(n, "kda_pair_chain_ratio"), e,
				 "kda_pair_chain_ratio: needs kda_pair_max_pairs (at least 1)");
	if (hw->grouped_fp4_small_chunk_rows > hw->grouped_fp4_chunk_rows)
		return doc_error(d, doc_get(n, "grouped_fp4_small_chunk_rows"), e,
				 "grouped_fp4_small_chunk_rows: must be at most grouped_fp4_chunk_rows (%lld)",
				 (long long)hw->grouped_fp4_chunk_rows);
	if (hw->grouped_fp4_gemv_rows > hw->grouped_fp4_small_chunk_rows && hw->grouped_fp4_chunk_rows > 0)
		return doc_error(d, doc_get(n, "grouped_fp4_gemv_rows"), e,
				 "grouped_fp4_gemv_rows: must be at most grouped_fp4_small_chunk_rows (%lld)",
				 (long long)hw->grouped_fp4_small_chunk_rows);
	if (hw->grouped_fp4_welems_per_sm_cycle > 0 && hw->grouped_fp4_chunk_rows < 1)
		return doc_error(d, doc_get(n, "grouped_fp4_welems_per_sm_cycle"), e,
				 "grouped_fp4_welems_per_sm_cycle: needs grouped_fp4_chunk_rows (at least 1)");
	return 0;
}

bool hw_kda_overlaps(const struct hw *hw, int64_t seqs, int64_t heads, int64_t tokens)
{
	return hw->kda_overlap_max_seqs > 0 && seqs >= 1 && seqs <= hw->kda_overlap_max_seqs &&
	       heads >= hw->kda_overlap_min_heads && tokens >= hw->kda_overlap_min_tokens;
}

bool hw_kda_pair(const struct hw *hw, int64_t seqs, int64_t heads, int64_t tokens)
{
	int64_t pairs;
	return hw->kda_pair_max_pairs > 0 && seqs >= 1 && heads >= 1 &&
	       !__builtin_mul_overflow(seqs, heads, &pairs) && pairs <= hw->kda_pair_max_pairs &&
	       !hw_kda_overlaps(hw, seqs, heads, tokens);
}

int hw_load_yaml(struct hw *hw, const char *name, const char *text, size_t len_bytes, struct err *e)
{
	struct doc d;
	int rc = doc_load_string(&d, name, text, len_bytes, e);
	if (rc < 0)
		return rc;
	struct hw tmp;
	memset(&tmp, 0, sizeof tmp);
	if (!d.root)
		rc = doc_error(&d, NULL, e, "empty hardware file");
	else
		rc = load_tree(&d, &tmp, e);
	if (rc == 0)
		*hw = tmp;
	doc_release(&d);
	return rc;
}

static int parse_hw(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return hw_load_yaml(obj, label, text, len_bytes, e);
}

int hw_load(struct hw *hw, const char *name_or_path, struct err *e)
{
	return embedded_load(hw_presets, "hardware", "preset", name_or_path, parse_hw, hw, e);
}
