#ifndef K3_SIM_TIMELINE_H
#define K3_SIM_TIMELINE_H

/* A discrete-event engine over per-GPU streams. It knows nothing about models: a caller adds
 * streams (compute, communication, copy) on GPUs, then events in issue order, each with its work
 * (seconds alone on an idle GPU), its demand on the GPU's SMs and HBM bandwidth, and the events
 * it waits for; tl_run() computes when each event starts and ends.
 *
 * Semantics
 * - A stream runs its events in the order they were added (CUDA stream order); an event also
 *   waits for its dependencies (CUDA events), which must have been added before it, so the
 *   graph is acyclic by construction.
 * - Events of one group (a collective across GPUs) start their work together, when every member
 *   is admitted (below).
 * - Resource sharing, a fluid model: while events run concurrently on a GPU they progress at a
 *   rate <= 1 (work per second), constant between two event boundaries:
 *     communication events keep the SMs they take (their `sm` share: a DeepEP normal kernel
 *     holds ~20-24 of 132 SMs, a low-latency RDMA transfer none, NCCL one SM per channel) and
 *     compute events share the rest: f_sm = min(1, capacity / sum sm of compute), where the
 *     capacity is 1 - reserved - cluster x max(0, sum sm of communication - reserved) (see SM
 *     partition below; with neither, 1 - sum sm of communication);
 *     every event shares HBM bandwidth: f_hbm = min(1, 1 / sum hbm of all running events);
 *     a compute event runs at min(f_sm, f_hbm), a communication or copy event at f_hbm (the
 *     factors of a resource the event does not use are 1).
 *   So a compute-bound GEMM (sm = 1) beside a 24-SM DeepEP kernel runs at 108/132 of its speed, a
 *   memory-bound kernel that needs half the SMs does not slow down until HBM is oversubscribed,
 *   and two saturating compute kernels on two streams take as long as run one after the other.
 *   The link bandwidth of a collective is in its work (the op's cost); collectives on one
 *   communication stream run one after another.
 * - SM admission and partition (tl_partition). A kernel's CTAs hold their SMs until they retire,
 *   and a kernel launched while another fills the GPU gets SMs only as that one's CTAs retire
 *   (persistent GEMMs: at its end). So a communication event with SMs to take is admitted (its
 *   kernel becomes resident and keeps its SMs) only when they are free: when it fits in the SMs
 *   reserved for communication beside those already resident, or when the compute events that
 *   were running before this instant want no more than the capacity left after admitting it;
 *   otherwise it waits, and is checked again at every event boundary (at one instant waiting
 *   communication is admitted before compute that starts then: its kernel was launched first).
 *   A compute event in its tail (the last `tail` share of its work: a GEMM's last wave, its CTAs
 *   retiring) no longer counts against admission.
 *   Communication that takes no SMs (sm = 0) is admitted at once; compute and copies never wait.
 *   A GPU may reserve a share of its SMs for communication (compute kernels are launched on the
 *   rest: DeepGEMM's set_num_sms(total - DeepEP's num_sms), DeepSeek-V3's 20 of 132 SMs): its
 *   compute capacity is 1 - reserved even when nothing communicates. Compute kernels launched in
 *   thread-block clusters of `cluster` SMs lose the cluster partners of every SM a communication
 *   kernel holds outside the reservation (a cluster needs all its SMs free).
 * - A collective's members (a group) hold their SMs from their admission (`admit_s`); their work
 *   starts on every GPU when the last member is admitted (`start_s`), so a member resident early
 *   spins on its SMs while its peers' GPUs are still busy, and compute beside it runs slower.
 * - The critical path is followed back from the last event to end through, at each event, the
 *   predecessor (stream or dependency, or the compute event whose end admitted it) whose end
 *   released it last.
 * - Exposed communication on a GPU is the time in which a communication event works (not while a
 *   member spins for its peers) and no compute event does (the union of communication minus the union of compute, as
 *   trace/analyze/analyze.h defines overlap for measured traces).
 *
 * Memory: the caller provides the storage (tl_init); nothing is allocated. Bounds are the
 * capacities given; tl_add / tl_dep return -E2BIG beyond them and leave the timeline unchanged.
 * Strings (stream and event names) are borrowed: they must outlive the timeline (static strings).
 * Not thread-safe; distinct timelines are independent. */

#include <stdbool.h>
#include <stdint.h>

enum { TL_MAX_GPUS = 8, TL_MAX_STREAMS = 32 };

enum tl_stream_kind { TL_COMPUTE, TL_COMM, TL_COPY };

struct tl_stream {
	const char *name;
	int gpu;
	enum tl_stream_kind kind;
	int32_t first, last;   /* events in issue order (linked through tl_event.next); -1: none */
	int32_t n_events;
	double busy_s;         /* after tl_run: time with an event running */
};

struct tl_event {
	const char *name;      /* borrowed */
	double work_s;         /* seconds alone on an idle GPU, >= 0 */
	float sm, hbm;         /* shares of the GPU's SMs and HBM bandwidth used alone, in [0, 1] */
	float tail;            /* share of its work at the end in which its CTAs retire (a GEMM's last
				* wave of tiles): there it no longer keeps communication from SMs;
				* 0 from tl_add, the caller may set it (in [0, 1]) */
	int16_t stream;
	int16_t n_deps;
	int32_t group;         /* -1, or the collective group it starts with */
	int32_t dep_first;     /* its dependencies: deps[dep_first .. dep_first + n_deps) */
	int32_t next, prev;    /* the next and previous events of its stream, -1 at the ends */
	int32_t group_next;    /* the next member of its group, -1 at the end */
	int32_t tag;           /* the caller's (e.g. which op); not used by the engine */
	int16_t layer;         /* the caller's labels, for export: layer (-1 outside layers), */
	int8_t mb;             /* microbatch */
	int8_t kind;           /* enum tl_stream_kind: its stream's, unless the caller changes it
				* (a collective issued on a compute stream is still communication) */
	bool critical;         /* after tl_run: on the critical path */
	/* after tl_run */
	double start_s, end_s; /* its work (a collective's: once every member is admitted) */
	double admit_s;        /* when it took its SMs (<= start_s; a collective's member spins from
				* here until start_s), as a trace shows the kernel's start */
	double exposed_at_end_s; /* exposed communication of its GPU from 0 to end_s */
	int32_t released_by;   /* the predecessor whose end made it ready last, -1 at the start */
	/* run state */
	int32_t pending;
	int8_t phase;          /* run state: waiting, queued for SMs, resident, working, done */
	double remaining_s;
};

struct tl_result {
	double makespan_s;
	double critical_compute_s;     /* critical path: time in compute and copy events */
	double critical_comm_s;        /* critical path: time in communication events (by kind) */
	int32_t critical_events;
	int32_t last_event;            /* the event that ends last (the path's end) */
	double exposed_comm_s[TL_MAX_GPUS];
	double comm_busy_s[TL_MAX_GPUS];    /* union of communication events */
	double compute_busy_s[TL_MAX_GPUS]; /* union of compute and copy events */
};

struct timeline {
	struct tl_stream streams[TL_MAX_STREAMS];
	int n_streams;
	int n_gpus;
	struct tl_event *ev;
	int32_t n_events, cap_events;
	int32_t *deps;         /* dependency lists, then (during tl_run) the dependents */
	int32_t n_deps, cap_deps;
	int32_t *succ_first;   /* run scratch: cap_events + 1 entries */
	int32_t *succ;         /* run scratch: cap_deps entries */
	int32_t n_groups;
	int32_t *group_first;  /* per group: its first member (cap_events entries) */
	int32_t *group_size;   /* per group: members */
	int32_t *group_ready;  /* run scratch: per group, members admitted */
	double reserved_sm[TL_MAX_GPUS]; /* share of each GPU's SMs kept for communication */
	double cluster_sms[TL_MAX_GPUS]; /* SMs per thread-block cluster of its compute kernels (>= 1) */
	struct tl_result result;
};

/* Bytes of storage tl_init needs for these capacities. */
int64_t tl_storage_bytes(int32_t cap_events, int32_t cap_deps);
/* Carves the arrays out of `mem` (aligned for doubles, tl_storage_bytes long) and resets. */
void tl_init(struct timeline *tl, void *mem, int32_t cap_events, int32_t cap_deps);
/* Forgets every stream, event and SM partition; keeps the storage. */
void tl_reset(struct timeline *tl);

/* The SM partition of GPU gpu (until tl_reset; default: none reserved, clusters of 1 SM):
 * `reserved_sm` in [0, 0.95], the share of its SMs kept for communication kernels (compute runs
 * on the rest), and `cluster_sms` >= 1, the SMs of a thread-block cluster of its compute kernels
 * (Hopper GEMMs: 2). Returns 0 or -EINVAL. */
int tl_partition(struct timeline *tl, int gpu, double reserved_sm, double cluster_sms);

/* A stream on GPU gpu (0 .. TL_MAX_GPUS-1); returns its index or -E2BIG. */
int tl_stream(struct timeline *tl, int gpu, enum tl_stream_kind kind, const char *name);

/* A new collective group id (members added with tl_add_in_group). */
int32_t tl_group(struct timeline *tl);

/* Appends an event to stream `stream`, after its last one, waiting also for deps[0 .. n_deps)
 * (earlier events; negative ids are ignored, duplicates allowed). Returns the event id or a
 * negative errno (-E2BIG full, -EINVAL bad stream or dependency). */
int32_t tl_add(struct timeline *tl, int stream, const char *name, double work_s, double sm, double hbm,
	       const int32_t *deps, int n_deps);
int32_t tl_add_in_group(struct timeline *tl, int stream, int32_t group, const char *name, double work_s,
			double sm, double hbm, const int32_t *deps, int n_deps);

/* Simulates; fills every event's admit_s/start_s/end_s/critical, the streams' busy_s and tl->result.
 * May be called again after more events were added (it starts over). Returns 0, or -EDEADLK
 * when events never became ready (members of a group waiting on each other); their times are
 * then 0. */
int tl_run(struct timeline *tl);

#endif
