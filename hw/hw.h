#ifndef K3_HW_HW_H
#define K3_HW_HW_H

/* A GPU and its interconnect: rates, capacities, latencies and efficiency curves, from a YAML
 * preset (datasheet values until calibrated from traces). Rates are per second, sizes in bytes,
 * times in seconds. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/dtype.h"
#include "util/err.h"

/* Achieved fraction of a peak rate as a function of size x (FLOPs or bytes):
 * eff(x) = max * x / (x + half). Small ops reach less of the peak than large ones. Written as a
 * time, x / (peak * eff(x)) = (x + half) / (peak * max): a fixed cost (half at the achieved rate)
 * plus the size at the achieved rate, which never falls as x grows. */
struct hw_curve {
	double max;
	double half; /* size at which eff = max / 2 */
};

double hw_curve_eval(const struct hw_curve *c, double x);
/* Seconds for x (FLOPs or bytes) at `peak` per second: (x + half) / (peak * max); 0 for x <= 0. */
double hw_curve_time_s(const struct hw_curve *c, double x, double peak_per_s);

/* Clock regimes of the SMs. Boost: the maximum clock, what short bursts of work (and the
 * calibration grids, which leave the GPU idle between points) run at. Sustained: the clock a GPU
 * settles at under continuous load, when the power limit holds it down (measured on the H200:
 * ~1.5 GHz during back-to-back large GEMMs at 660-685 W, not 1.98). Power: each op of a step at
 * the clock the preset's power-limit model gives it from the power drawn before it (sim/power.h;
 * an op costed on its own, outside a step, is at boost: it starts from an idle GPU). Tensor and
 * vector rates scale with the clock; HBM, NVLink and the NIC do not. */
enum hw_clock { HW_CLOCK_BOOST, HW_CLOCK_SUSTAINED, HW_CLOCK_POWER, HW_CLOCK_COUNT };

const char *hw_clock_name(enum hw_clock c);
int hw_clock_parse(const char *s, enum hw_clock *out);

struct hw;

/* The SM clock an op or a scenario is costed at: a regime's (the preset says the rate), or one
 * given in MHz (`--clock 1830`, a scenario's `options.clock: 1830MHz`, the clock a capture
 * recorded around a measurement). Zeroed: boost. hw_clock_sel_hz resolves it: the one place
 * that says which rate a selection means. */
struct hw_clock_sel {
	enum hw_clock regime; /* when given_hz is 0 */
	double given_hz;      /* > 0: this clock, the regime unused */
};

/* "boost", "sustained", "power", or a clock in MHz: "1830", "1830MHz", "1830 MHz", "1830.5mhz". A number
 * must be finite and positive (bounds against a preset: hw_clock_sel_check). 0, or -EINVAL with
 * the reason in why. */
int hw_clock_sel_parse(const char *s, struct hw_clock_sel *out, char *why, size_t n);
/* A given clock against the preset: not above its boost clock (sm_clock_hz). 0, or -ERANGE with
 * the reason in why ("1990 MHz is above the boost clock: the preset's boost clock is 1980 MHz");
 * the power regime with a preset without the power model: -EINVAL. */
int hw_clock_sel_check(const struct hw *hw, const struct hw_clock_sel *c, char *why, size_t n);
/* The SM clock of a selection, Hz: the given clock, else the regime's (hw_clock_hz). */
double hw_clock_sel_hz(const struct hw *hw, const struct hw_clock_sel *c);
/* The selection as `--clock` takes it back: "boost", "sustained" or the MHz ("1830"); buf n >= 32. */
const char *hw_clock_sel_arg(const struct hw_clock_sel *c, char *buf, size_t n);
/* What it is called in outputs: the regime's name, or "given" for a given clock. */
const char *hw_clock_sel_kind(const struct hw_clock_sel *c);

/* Calibrated corrections (written by `k3sim calibrate`; datasheet presets have none).
 * An efficiency here is the modeled device time of an op over its measured time (1: the model
 * was right; 0.5: the op took twice as long); launch gaps are not part of it. Class tables are
 * keyed by the modeled device time (what separates kernel floors from bandwidth- or FLOP-bound
 * ops whatever the shape: GEMMs, attention, KDA prefill) or by FLOPs or bytes (copies, KDA
 * decode, collectives, whose time follows their size); GEMM shape tables by m. Between points an
 * efficiency is interpolated linearly in (log key, log efficiency), flat beyond the ends. */
enum hw_class {
	HW_CLASS_GEMM,
	HW_CLASS_GROUPED_GEMM,
	HW_CLASS_MEMORY,       /* elementwise ops and copies */
	HW_CLASS_KDA_CHUNK,
	HW_CLASS_KDA_DECODE,
	HW_CLASS_ATTENTION,    /* MLA / DSA decode; prefill too where it has no table of its own */
	HW_CLASS_COMM,         /* collectives */
	HW_CLASS_KDA_VERIFY,   /* KDA decode of t > 1 tokens per request (speculative verify + replay) */
	HW_CLASS_ATTENTION_PREFILL, /* MLA / DSA prefill: compute-bound where decode of the same modeled
	                             * time is memory-bound, so one table cannot hold both */
	/* Ops of their own kind (model/ops.h): where a preset has no table for one, the memory
	 * class's applies (sim/cost.c). */
	HW_CLASS_ATTNRES,
	HW_CLASS_ROUTE,
	HW_CLASS_COMBINE,
	HW_CLASS_SHORT_CONV,
	HW_CLASS_QUANT,        /* activation quantizer (BF16 -> FP8 rows), keyed by its output dtype */
	HW_CLASS_COUNT
};

enum { HW_TABLE_POINTS_MAX = 32, HW_TABLES_MAX = 32, HW_GEMM_SHAPES_MAX = 256, HW_COLL_MODELS_MAX = 32 };

/* Collective kinds, as the hardware model names them (YAML: allreduce, allgather, reducescatter,
 * alltoall); sim/ maps its ops onto them. */
enum hw_coll {
	HW_COLL_ALLREDUCE,
	HW_COLL_ALLGATHER,
	HW_COLL_REDUCESCATTER,
	HW_COLL_ALLTOALL,
	HW_COLL_COUNT
};

const char *hw_coll_name(enum hw_coll c);
int hw_coll_parse(const char *s, enum hw_coll *out);

/* What a class table is keyed by. */
enum hw_table_key {
	HW_KEY_MODEL_S, /* the op's modeled device time, seconds (YAML model_us) */
	HW_KEY_FLOPS,   /* FLOPs (YAML gflop) */
	HW_KEY_BYTES,   /* bytes moved; collectives: bytes per rank (YAML mib) */
};

/* Efficiency of one class in one precision over its key. Collective tables (HW_CLASS_COMM) are
 * per collective kind and rank count instead of dtype (YAML comm, comm.KIND, comm.KIND.RANKS):
 * hw_comm_table_eff looks up (kind, ranks), then (kind, any ranks), then the table of all. */
struct hw_table {
	enum hw_class cls;
	bool any_dtype;        /* applies to every dtype without a table of its own */
	enum dtype dtype;      /* GEMMs: the math dtype; KDA: the state dtype; else the element type */
	bool any_coll;         /* comm: applies to every collective kind (then ranks is 0) */
	enum hw_coll coll;     /* comm: the collective kind */
	int64_t ranks;         /* comm: the rank count; 0: any */
	enum hw_table_key key;
	int n;
	double x[HW_TABLE_POINTS_MAX]; /* the key, in SI units; ascending */
	double eff[HW_TABLE_POINTS_MAX];
};

/* Measured device time of one dense GEMM shape (n, k) in one math dtype over the token count m,
 * at the boost clock without launch gaps (written by `k3sim calibrate`: the median over runs,
 * non-decreasing in m). A GEMM at least as large as a measured one in m, n and k takes at least
 * its time, one at most as large at most its time: hw_gemm_bounds. */
struct hw_gemm_points {
	int64_t n, k;
	enum dtype dtype;
	int points;
	double m[HW_TABLE_POINTS_MAX]; /* ascending */
	double time_s[HW_TABLE_POINTS_MAX];
};

/* Calibrated model of one collective kind at one rank count (ranks > 1) or at any (0): what
 * replaces the interconnect's nvlink_latency_s and eff_comm for it. sim/cost.c charges
 *   steps(kind, ranks) x step_latency_s + bytes x factor(kind, ranks) / (link rate x eff(bytes))
 * with bytes per rank as nccl-tests counts them. (In this form eff.half only adds the constant
 * factor x half / (rate x max): latency and half trade off; a fit keeps one of them.) */
struct hw_coll_model {
	enum hw_coll coll;
	int64_t ranks;         /* 0: any rank count without a model of its own */
	double step_latency_s; /* per step, as nvlink_latency_s */
	struct hw_curve eff;   /* x = bytes per rank */
};

const char *hw_class_name(enum hw_class c);
int hw_class_parse(const char *s, enum hw_class *out);

/* The power model's op classes (sim/power.h): kernels whose FLOPs cost different energies
 * (X-macro: the enum, the names and the file's keys power_flop_pj_<name>). */
#define HW_POWER_CLASSES(X)                                                                        \
	X(GEMM, "gemm")                 /* dense GEMMs and gemvs */                                \
	X(GROUPED_GEMM, "grouped_gemm") /* routed experts */                                       \
	X(GROUPED_GEMV, "grouped_gemv") /* MXFP4 routed experts as gemvs (grouped_fp4_gemv_rows) */ \
	X(MLA_DECODE, "mla_decode")     /* latent attention decode (mma.sync), DSA decode */       \
	X(MLA_PREFILL, "mla_prefill")   /* attention prefill, DSA prefill */                       \
	X(KDA, "kda")                   /* KDA chunked prefill and decode */                       \
	X(VECTOR, "vector")             /* elementwise, AttnRes, routing, combine, ShortConv */

enum hw_power_class {
#define HW_POWER_CLASS_ENUM(id, name) HW_POWER_##id,
	HW_POWER_CLASSES(HW_POWER_CLASS_ENUM)
#undef HW_POWER_CLASS_ENUM
	HW_POWER_CLASS_COUNT
};

/* The class's name ("gemm", "grouped_gemm", ...); NULL out of range. */
const char *hw_power_class_name(enum hw_power_class c);

struct hw {
	char name[64];
	char description[128];
	char source[512];
	bool calibrated;

	/* device */
	int64_t sms;
	double sm_clock_hz;           /* boost: the rates below are at this clock */
	double sustained_sm_clock_hz; /* under continuous load (power-limited); 0: not known, boost */
	/* The power-limit model (sim/power.h; all 0: none, `--clock power` refused): the board's
	 * limit, its draw idle at boost, the energy of a FLOP at boost (scaling with the square of
	 * the clock: the voltage follows it) and of an HBM byte (not scaling), the time constant of
	 * the filtered power the limiter holds at the limit, and the lowest clock it lowers to. */
	double power_limit_w;
	double power_idle_w;
	double power_flop_j;      /* J per FLOP at boost (the file: pJ) */
	double power_byte_j;      /* J per HBM byte (the file: pJ) */
	int64_t power_byte_held;  /* 1: power_byte_j was measured (a stream's draw): calibrate holds it */
	double power_tau_s;
	double power_window_s;    /* the window limiter's window (sim/power.h); 0: the filtered-power controller */
	/* The delayed limiter (sim/power.h; power_delay_s 0: the window limiter without delay): the
	 * clock follows, with time constants rise_s up and fall_s down (0: at once), the clock at which
	 * what ran in the window_s seconds before now - delay_s draws the limit. */
	double power_delay_s;
	double power_rise_s;
	double power_fall_s;
	double power_min_sm_clock_hz;
	/* The energy of a FLOP at boost of each power class (enum hw_power_class; the file:
	 * power_flop_pj_<class> in pJ), J; 0: the class takes power_flop_j. */
	double power_flop_j_class[HW_POWER_CLASS_COUNT];
	/* How a FLOP's energy falls with the clock: e(f) = e(boost) (f / boost)^power_flop_clock_exp;
	 * 0: 2 (the voltage following the clock). Measured 0.7 on a cuBLAS BF16 GEMM held at the
	 * limit at five clocks (bench/results/clock-probe-h200-2026-12-03/). */
	double power_flop_clock_exp;
	/* The draw above idle of an op of each power class at boost besides its FLOPs and bytes, W
	 * (the file: power_active_w_<class>; 0: none): the busy chip's clocks, issue and data paths,
	 * which a FLOP or byte count does not follow (this project's MXFP4 expert gemv ~440 W at any
	 * batch, run back to back: bench/results/op-sustained-h200-2026-12-04/). It scales with the
	 * clock as (f / boost)^power_active_clock_exp (0: 1). A class with it set is measured whole:
	 * calibrate keeps its FLOP energy and active draw. */
	double power_active_w_class[HW_POWER_CLASS_COUNT];
	double power_active_clock_exp;
	/* A FLOP's energy on FP8 tensor math (GEMMs and grouped GEMMs with FP8 / MXFP8 activations)
	 * as a share of its class's (0: 1): an FP8 MMA does twice a BF16 one's FLOPs in about its
	 * time, so less energy a FLOP. Measured on an H100 from the FP8 experts run back to back
	 * against the BF16-activation experts' class (bench/results/power-h100-2026-12-06/). */
	double power_flop_fp8_scale;
	/* The energy of one MXFP4 weight element expanded to BF16 by the tiled grouped expert kernel
	 * (the file: power_welem_pj; 0: none), J: each chunk of an expert's rows expands the expert's
	 * whole n x k matrix (sim_fp4_chunks), SM work beside the MMAs that a FLOP count does not see:
	 * at decode sizes (a few rows an expert) the kernel expands as many weights as at prefill in a
	 * fraction of the time. Scales with the clock as a FLOP's energy does. */
	double power_welem_j;
	/* The share of an op's time at boost that its SM-clocked work takes, by power class (the
	 * file: clock_bound_<class>, in (0, 1]; 0: 1): below boost an op's time is
	 * max(its boost time, share x the time the physical model scales it to), a roofline in the
	 * clock, so an op whose kernel waits on work outside the SM clock's domain (HBM, L2, the
	 * memory side of a copy) loses nothing until the clock falls below share x boost. 1 (the
	 * default): the physical model's ratio as is. Measured with an SM clock read inside the
	 * kernels (bench/results/clock-probe-h200-2026-12-03/). */
	double clock_bound[HW_POWER_CLASS_COUNT];
	/* The share of an op's boost time that runs on the SM clock whatever the physical model says,
	 * by power class (the file: clock_sm_share_<class>, in [0, 1]; 0: none): below boost an op's
	 * time is at least boost time x (1 - share + share x boost / clock). A kernel the model has
	 * memory-bound that is in fact bound by its own issue or latency chains (MLA decode's tile
	 * loop, the MXFP4 decode gemv's expansion) slows with the clock all the same. */
	double clock_sm_share[HW_POWER_CLASS_COUNT];
	/* 1: a calibrated op's time beyond the physical model's (its measured boost time less the
	 * model's) scales with 1 / SM clock below boost, the model's own part as the model scales it
	 * (a memory-bound kernel's launch, CTA and latency chains run on the SM clock); 0: the
	 * measured time scales by the model's ratio whole. Measured: k3-bench's ops at two clocks,
	 * bench/results/clock-bound-h200-2026-12-03/. */
	int64_t clock_scaled_excess;
	int64_t l2_bytes;
	int64_t smem_per_sm_bytes;
	int64_t hbm_bytes;
	double hbm_bw_bytes_per_s;
	double l2_bw_bytes_per_s;
	double tensor_flops_per_s[DT_COUNT]; /* dense; 0 = no native tensor path for that type */
	double vector_flops_per_s;           /* FP32 CUDA cores */
	double launch_latency_s;             /* eager launch: gap between dependent kernels */
	double graph_launch_latency_s;       /* the same inside a CUDA graph */

	/* interconnect */
	int64_t domain_gpus;                 /* GPUs sharing one NVLink domain */
	double nvlink_bw_bytes_per_s;        /* per GPU, per direction */
	double nvlink_latency_s;             /* per collective step */
	double nic_bw_bytes_per_s;           /* scale-out, per GPU, per direction */
	double nic_latency_s;

	/* efficiency */
	struct hw_curve eff_gemm;   /* x = FLOPs */
	struct hw_curve eff_memory; /* x = bytes */
	struct hw_curve eff_comm;   /* x = bytes per rank; collectives without a model of their own */
	int n_coll;
	struct hw_coll_model coll[HW_COLL_MODELS_MAX]; /* YAML efficiency.collectives (optional) */

	/* kernel shapes */
	int64_t gemm_tile_m, gemm_tile_n;
	double kda_chunk_step_cycles; /* one dependent 16-token chunk step of the KDA recurrence */
	/* Optional (0 = not modeled), fitted from measured KDA kernels:
	 * the token-parallel intra-chunk kernel's cost per (token, head) on one SM, and the
	 * recurrence's cost per value row of the state per step, which sets the step time once a
	 * CTA holds many rows (the value rows of a head split over up to kda_max_v_split CTAs when
	 * sequences x heads leave SMs idle). */
	double kda_intra_cycles_per_token_head;
	double kda_step_row_cycles;
	/* Optional (0 = none), fitted: the pair's fixed cycles beside its launches (each kernel's
	 * set-up and last chunk, the recurrent kernel's first wait), which shapes of 1K tokens show
	 * (~15 us of 75 at H = 12) and a per-token cost cannot carry without overcharging 16K. */
	double kda_fixed_cycles;
	/* KDA verify + replay (t > 1 tokens per request), fitted: each (request, head) costs
	 * t x (lin + quad x t) cycles on one SM (the drafts' closed form grows with t, the replay is
	 * sequential); the items spread over the SMs, and one item's chain is a latency floor. */
	double kda_verify_lin_cycles, kda_verify_quad_cycles;
	int64_t kda_max_v_split;
	/* KDA prefill's overlapped kernel pair (optional; kda_overlap_max_seqs 0: the two kernels
	 * run one after the other everywhere, the datasheet presets' case). A prefill of at most
	 * kda_overlap_max_seqs sequences, at least kda_overlap_min_heads heads (per GPU) and at
	 * least kda_overlap_min_tokens tokens a sequence takes the overlapped path, as the kernels'
	 * rule does (kernels/kda/kda_prefill.cu, overlap_by_default()): the recurrent kernel's CTAs
	 * are resident from the start and consume each chunk as soon as the intra kernel publishes
	 * it. kda_overlap_rec_share, fitted (0..1): the fraction of one SM's intra-chunk throughput
	 * that a resident recurrent CTA takes away (its registers, shared memory and issue slots),
	 * which slows the intra kernel while the pair shares the SMs (sim/cost.c). */
	int64_t kda_overlap_max_seqs, kda_overlap_min_heads, kda_overlap_min_tokens;
	double kda_overlap_rec_share;
	/* KDA prefill's serial recurrence two chunks a step (optional; kda_pair_max_pairs 0: the
	 * chunk kernel everywhere). A serial prefill of at most kda_pair_max_pairs (sequence, head)
	 * pairs, outside the overlapped pair's rule, runs the pair kernel, as the kernels' default
	 * does (kernels/kda/kda_prefill.cu PAIRR_MAX_PAIRS: 96, since 2026-12-05): its chain costs
	 * kda_pair_chain_ratio times the chunk kernel's (fitted; (0, 1], so that a batch one pair
	 * past the rule is never faster; 1 where the rule is given without it; an H100 grid put the
	 * recurrent kernel alone at 0.80-0.91x). */
	int64_t kda_pair_max_pairs;
	double kda_pair_chain_ratio;
	/* The MXFP4 grouped expert GEMM's chunks (optional; 0: not modeled, the datasheet presets'
	 * case). Above grouped_fp4_gemv_rows rows a touched expert on average the kernels run the
	 * tiled grouped GEMM (below, with 16-bit activations, a gemv that streams each weight once;
	 * E4M3 activations take the FP8 tiled kernel at every size, the E4M3 gemv being opt-in,
	 * sim_fp4_gemv()): an expert's rows in
	 * ceil(rows / chunk) equal chunks, each of which expands the expert's whole MXFP4 weight
	 * matrix to BF16 again (kernels/moe/k3_gemm_wg.cu: chunks of up to grouped_fp4_chunk_rows,
	 * or grouped_fp4_small_chunk_rows where the touched experts average at most that many rows;
	 * a chunk's MMAs pad it to 16 rows). grouped_fp4_welems_per_sm_cycle, fitted: the weight
	 * elements one SM expands a cycle, so the expansions cost chunks x n x k / (rate x SMs x
	 * clock) beside the MMAs, and a routing whose rows per expert spread wider (the op's
	 * expert_cv) runs more chunks on the same rows (sim/cost.c, sim_expected_chunks). */
	int64_t grouped_fp4_chunk_rows, grouped_fp4_small_chunk_rows, grouped_fp4_gemv_rows;
	double grouped_fp4_welems_per_sm_cycle;
	int64_t reserved_bytes;       /* CUDA context, NCCL and library workspaces per GPU */

	/* calibration (optional; zero in datasheet presets, which keeps the plain model) */
	/* Dense and grouped GEMM kernel costs, fitted (0 = not modeled: the efficiency curve's form):
	 * a fixed cost per kernel, a cost per wave of output tiles (the epilogue), and the latency of
	 * one step of a tile's k loop (128 bytes of k: 64 BF16 or 128 FP8 elements), which no
	 * parallelism hides. With any of them set a
	 * GEMM costs fixed + max(padded FLOPs at eff_gemm.max + waves x wave, bytes at
	 * eff_memory.max [+ output at the epilogue's store rate, below]) + k steps x k step, in
	 * cycles at the regime's clock. */
	double gemm_fixed_cycles, gemm_wave_cycles, gemm_kstep_cycles;
	/* Optional (0 = not modeled: outputs as any other bytes), fitted with the costs above: the
	 * bytes of output a GEMM's epilogue stores per SM per SM cycle (converting the accumulators,
	 * staging through shared memory, issuing the stores: SM-side work, so it slows with the
	 * clock), never faster than HBM at eff_memory.max. The output is stored at this rate even
	 * when it would fit in L2 (a write-back L2 evicts it during the kernels that follow, which a
	 * stream of kernels pays; the calibration grid measured no L2 benefit for outputs of
	 * 12-25 MB), beside the reads at eff_memory.max. */
	double gemm_store_bytes_per_sm_cycle;
	double gemm_eff[DT_COUNT]; /* FLOP efficiency per math dtype (YAML kernels.gemm_eff); 0: eff_gemm.max */
	double gemm_wave_smoothing;   /* 0: a partial last wave of GEMM tiles costs a whole wave;
				       * 1: only its fraction (the library balances it, stream-K) */
	int n_tables;
	struct hw_table tables[HW_TABLES_MAX];
	int n_gemm_points;
	struct hw_gemm_points gemm_points[HW_GEMM_SHAPES_MAX]; /* YAML efficiency.gemm_points */
};

/* Preset name ("h200") or a path to a YAML file. */
int hw_load(struct hw *hw, const char *name_or_path, struct err *e);
int hw_load_yaml(struct hw *hw, const char *name, const char *text, size_t len_bytes, struct err *e);

/* The scalar keys of a preset's section ("device", "interconnect" or "kernels") as YAML lines at
 * two spaces (the caller writes the "device:" line), by walking the key table the loader reads,
 * in file units: what is written reads back to the same hw (to the file's precision: %.9g, the
 * cycle counts %.6g). Returns 0, -EINVAL for an unknown section, or -EIO when f failed. */
int hw_write_section(FILE *f, const struct hw *hw, const char *section);
const char *const *hw_preset_names(void);

/* Dense tensor rate for math in `t`, falling back when there is no native path
 * (MXFP4 -> MXFP8 -> FP8 -> BF16; FP32 -> vector units). */
double hw_tensor_rate(const struct hw *hw, enum dtype t);
/* The dtype whose rate hw_tensor_rate(t) actually uses. */
enum dtype hw_math_dtype(const struct hw *hw, enum dtype t);

/* Calibrated efficiency of an op of class c in dtype t with `flops`, `bytes` (moved; collectives:
 * per rank) and modeled device time model_s: the table of (c, t), else of (c, any dtype), else 1.
 * Collective tables of one kind are hw_comm_table_eff's: here only the table of all kinds counts. */
double hw_table_eff(const struct hw *hw, enum hw_class c, enum dtype t, double flops, double bytes,
		    double model_s);
/* The model of collective c over `ranks` GPUs: the one of (c, ranks), else the one of c at the
 * largest rank count below `ranks` (more GPUs are never faster per byte than fewer were
 * measured), else of (c, any ranks), else NULL (then nvlink_latency_s and eff_comm apply). */
const struct hw_coll_model *hw_coll_model(const struct hw *hw, enum hw_coll c, int64_t ranks);
/* Calibrated efficiency of collective c over `ranks` GPUs moving `bytes` per rank with modeled
 * device time model_s: the table of (c, ranks), else of (c, any ranks), else the comm table of all
 * kinds, else 1. */
double hw_comm_table_eff(const struct hw *hw, enum hw_coll c, int64_t ranks, double bytes, double model_s);
/* The table of class c in dtype t (else of c for any dtype), or NULL; collectives:
 * hw_comm_table_find. */
const struct hw_table *hw_table_find(const struct hw *hw, enum hw_class c, enum dtype t);
/* The collective table of (c, ranks), else of c at the largest rank count below `ranks`, else of
 * (c, any ranks), else of all kinds, or NULL. */
const struct hw_table *hw_comm_table_find(const struct hw *hw, enum hw_coll c, int64_t ranks);
/* A table's efficiency at an op's key. Inside the table's key range: interpolated. Outside it
 * the table is not extrapolated: a table over modeled time (what `k3sim calibrate` writes) tapers
 * from its end value to 1 (the plain model) in log space over L = max(1, 2 |log10 eff_end|)
 * decades, so that the time never falls as the modeled time grows; a table over a size holds its
 * end value (a constant factor on the model). *inside says which (may be NULL). */
double hw_table_eff_at(const struct hw_table *tb, double flops, double bytes, double model_s, bool *inside);
/* The measured shape (math dtype t, n, k), or NULL. */
const struct hw_gemm_points *hw_gemm_points_find(const struct hw *hw, enum dtype t, int64_t n, int64_t k);
/* Measured bounds on the device time of a dense GEMM (math dtype t) from the preset's measured
 * GEMMs (hw_gemm_points): *lo_s the largest time of a measured GEMM no larger in m, n and k (0
 * when none), *hi_s the smallest of one no smaller (INFINITY when none). Both never fall as m, n
 * or k grow. */
void hw_gemm_bounds(const struct hw *hw, enum dtype t, int64_t m, int64_t n, int64_t k, double *lo_s,
		    double *hi_s);
/* Whether a KDA prefill of `seqs` sequences of `tokens` tokens each at `heads` heads takes the
 * preset's overlapped kernel pair (struct hw: kda_overlap_*); false where the preset has none. */
bool hw_kda_overlaps(const struct hw *hw, int64_t seqs, int64_t heads, int64_t tokens);
/* Whether a KDA prefill of `seqs` sequences of `tokens` tokens at `heads` heads runs the
 * preset's pair kernel (struct hw: kda_pair_*): serial (not hw_kda_overlaps()) and at most
 * kda_pair_max_pairs (sequence, head) pairs; false where the preset has no such rule. */
bool hw_kda_pair(const struct hw *hw, int64_t seqs, int64_t heads, int64_t tokens);
/* SM clock of a regime, Hz (sustained falls back to boost when the preset does not know it). */
double hw_clock_hz(const struct hw *hw, enum hw_clock c);
/* Waves of `tiles` GEMM tiles over the SMs (tiles >= SMs), after gemm_wave_smoothing. */
double hw_gemm_waves(const struct hw *hw, double tiles);

#endif
