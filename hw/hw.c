#include "hw/hw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *const *hw_preset_names(void)
{
	static const char *names[32];
	if (!names[0]) {
		int n = 0;
		for (const struct embedded_file *f = hw_presets; f->name && n < 31; f++)
			names[n++] = f->name;
		names[n] = NULL;
	}
	return names;
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
		if (f->dst_d)
			*f->dst_d = x * f->scale;
		else
			*f->dst_i = (int64_t)(x * f->scale + 0.5);
	}
	return 0;
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

	double hbm_gb = 0, hbm_mib = 0, l2_mib = 0, smem_kib = 0;
	const struct field dev[] = {
		{"sms", 1, NULL, &hw->sms, true},
		{"sm_clock_mhz", 1e6, &hw->sm_clock_hz, NULL, true},
		{"l2_mib", 1, &l2_mib, NULL, true},
		{"smem_per_sm_kib", 1, &smem_kib, NULL, false},
		{"hbm_gb", 1, &hbm_gb, NULL, false},
		{"hbm_mib", 1, &hbm_mib, NULL, false},
		{"hbm_gb_per_s", 1e9, &hw->hbm_bw_bytes_per_s, NULL, true},
		{"l2_gb_per_s", 1e9, &hw->l2_bw_bytes_per_s, NULL, false},
		{"vector_tflops", 1e12, &hw->vector_flops_per_s, NULL, true},
		{"launch_latency_us", 1e-6, &hw->launch_latency_s, NULL, true},
		{"graph_launch_latency_us", 1e-6, &hw->graph_launch_latency_s, NULL, false},
		{"tensor_tflops", 0, NULL, NULL, true}, /* read below */
		{NULL, 0, NULL, NULL, false},
	};
	if (!(n = doc_get(root, "device")))
		return doc_error(d, root, e, "missing key 'device'");
	if ((rc = read_fields(d, n, "device", dev, e)) < 0)
		return rc;
	if (hbm_gb > 0 && hbm_mib > 0)
		return doc_error(d, n, e, "device: give hbm_gb or hbm_mib, not both");
	if (hbm_gb <= 0 && hbm_mib <= 0)
		return doc_error(d, n, e, "device: missing key 'hbm_mib' (or 'hbm_gb')");
	hw->hbm_bytes = hbm_mib > 0 ? (int64_t)(hbm_mib * 1048576.0) : (int64_t)(hbm_gb * 1e9);
	hw->l2_bytes = (int64_t)(l2_mib * 1048576.0);
	hw->smem_per_sm_bytes = (int64_t)(smem_kib * 1024.0);
	if (hw->sms <= 0 || hw->sm_clock_hz <= 0 || hw->hbm_bw_bytes_per_s <= 0)
		return doc_error(d, n, e, "device: sms, sm_clock_mhz and hbm_gb_per_s must be positive");
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

	const struct field ic[] = {
		{"domain_gpus", 1, NULL, &hw->domain_gpus, true},
		{"nvlink_gb_per_s", 1e9, &hw->nvlink_bw_bytes_per_s, NULL, true},
		{"nvlink_latency_us", 1e-6, &hw->nvlink_latency_s, NULL, true},
		{"nic_gb_per_s", 1e9, &hw->nic_bw_bytes_per_s, NULL, true},
		{"nic_latency_us", 1e-6, &hw->nic_latency_s, NULL, true},
		{NULL, 0, NULL, NULL, false},
	};
	if (!(n = doc_get(root, "interconnect")))
		return doc_error(d, root, e, "missing key 'interconnect'");
	if ((rc = read_fields(d, n, "interconnect", ic, e)) < 0)
		return rc;
	if (hw->domain_gpus < 1)
		return doc_error(d, n, e, "interconnect: domain_gpus must be at least 1");

	static const char *const eff_keys[] = {"gemm", "memory", "comm", NULL};
	if (!(n = doc_get(root, "efficiency")))
		return doc_error(d, root, e, "missing key 'efficiency'");
	if ((rc = doc_expect(d, n, DOC_MAP, "efficiency", e)) < 0 ||
	    (rc = doc_check_keys(d, n, eff_keys, e)) < 0)
		return rc;
	if ((rc = read_curve(d, doc_get(n, "gemm"), "efficiency.gemm", 1e9, "half_gflop", &hw->eff_gemm, e)) < 0 ||
	    (rc = read_curve(d, doc_get(n, "memory"), "efficiency.memory", 1048576.0, "half_mib", &hw->eff_memory, e)) < 0 ||
	    (rc = read_curve(d, doc_get(n, "comm"), "efficiency.comm", 1048576.0, "half_mib", &hw->eff_comm, e)) < 0)
		return rc;

	double reserved_gib = 0;
	const struct field kern[] = {
		{"gemm_tile_m", 1, NULL, &hw->gemm_tile_m, true},
		{"gemm_tile_n", 1, NULL, &hw->gemm_tile_n, true},
		{"kda_chunk_step_cycles", 1, &hw->kda_chunk_step_cycles, NULL, true},
		{"reserved_gib", 1, &reserved_gib, NULL, true},
		{NULL, 0, NULL, NULL, false},
	};
	if (!(n = doc_get(root, "kernels")))
		return doc_error(d, root, e, "missing key 'kernels'");
	if ((rc = read_fields(d, n, "kernels", kern, e)) < 0)
		return rc;
	hw->reserved_bytes = (int64_t)(reserved_gib * 1073741824.0);
	if (hw->gemm_tile_m < 1 || hw->gemm_tile_n < 1)
		return doc_error(d, n, e, "kernels: gemm tiles must be at least 1");
	return 0;
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

static bool is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
	       (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

int hw_load(struct hw *hw, const char *name_or_path, struct err *e)
{
	if (!is_path(name_or_path)) {
		const struct embedded_file *f = embedded_find(hw_presets, name_or_path);
		if (!f) {
			const char *hint = err_suggest(name_or_path, hw_preset_names());
			char list[256] = "";
			for (const char *const *p = hw_preset_names(); *p; p++) {
				strncat(list, *p, sizeof list - strlen(list) - 3);
				if (p[1])
					strncat(list, ", ", sizeof list - strlen(list) - 1);
			}
			if (hint)
				err_set(e, NULL, 0, 0, "unknown hardware '%s' (did you mean '%s'?)", name_or_path, hint);
			else
				err_set(e, NULL, 0, 0, "unknown hardware '%s' (presets: %s; or give a path)",
					name_or_path, list);
			return -ENOENT;
		}
		char label[96];
		snprintf(label, sizeof label, "<preset %s>", f->name);
		return hw_load_yaml(hw, label, f->data, f->size_bytes, e);
	}
	char *buf;
	size_t len;
	int rc = doc_read_file(name_or_path, &buf, &len, e);
	if (rc < 0)
		return rc;
	rc = hw_load_yaml(hw, name_or_path, buf, len, e);
	free(buf);
	return rc;
}
