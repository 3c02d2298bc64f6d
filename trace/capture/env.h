#ifndef K3_TRACE_CAPTURE_ENV_H
#define K3_TRACE_CAPTURE_ENV_H

/* What the k3sim CLI (parent) and libk3capture.so (inside the profiled child) agree on: the
 * environment variables that carry the capture settings, how a database path is made unique per
 * process, and where the injection library is found. CPU-only code, no CUDA: unit-tested. */

#include <stdbool.h>
#include <stddef.h>

/* Set by the parent for the child (and read by InitializeInjection). */
#define CAPTURE_ENV_INJECTION "CUDA_INJECTION64_PATH" /* libk3capture.so: CUDA loads it at cuInit */
#define CAPTURE_ENV_NVTX "NVTX_INJECTION64_PATH"      /* the same library: NVTX calls reach CUPTI */
#define CAPTURE_ENV_OUTPUT "K3CAPTURE_OUTPUT"         /* database path template (see below) */
#define CAPTURE_ENV_ROOT_PID "K3CAPTURE_ROOT_PID"     /* pid of the command k3sim started */
#define CAPTURE_ENV_MANIFEST "K3CAPTURE_MANIFEST"     /* file each process appends a line to */
#define CAPTURE_ENV_METRICS "K3CAPTURE_METRICS"       /* comma list of metric names; empty: none */
#define CAPTURE_ENV_DRIVER "K3CAPTURE_DRIVER_API"     /* "0": no driver-API rows */
#define CAPTURE_ENV_API "K3CAPTURE_API"               /* "0": no runtime- or driver-API rows */
#define CAPTURE_ENV_BUFFERS "K3CAPTURE_BUFFERS"       /* CUPTI buffers in the pool */
#define CAPTURE_ENV_BUFFER_BYTES "K3CAPTURE_BUFFER_BYTES"
#define CAPTURE_ENV_VERBOSE "K3CAPTURE_VERBOSE"       /* "1": the library says what it does */
#define CAPTURE_ENV_GPU_METRICS "K3CAPTURE_GPU_METRICS_MS" /* NVML sampling period; "0": off */
#define CAPTURE_ENV_META "K3CAPTURE_META"             /* "key=value" lines -> K3SIM_CAPTURE */
/* Set by the user. */
#define CAPTURE_ENV_LIB "K3SIM_CAPTURE_LIB"           /* overrides where libk3capture.so is */

#define CAPTURE_LIB_NAME "libk3capture.so"

/* The rank of this process from the launcher's environment: RANK, then LOCAL_RANK,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID. envp is NULL-terminated ("KEY=VALUE"); -1 when
 * none is set or the value is not a number in [0, 2^20). */
int capture_rank_from_env(const char *const *envp);

/* Expand a database path template into out (n bytes):
 *   %p  pid      %r  rank (or "na" when rank < 0)      %h  host name      %%  a '%'
 * With `unique` set and no %p in the template, ".r<rank>.p<pid>" (".p<pid>" without a rank) goes
 * before the extension ("out.db" -> "out.r1.p4242.db"), so that processes of one capture never
 * share a file. Returns 0, -EINVAL (unknown %-sequence, empty template) or -ENAMETOOLONG; out is
 * left untouched on error. */
int capture_path_expand(const char *tmpl, long pid, int rank, const char *host, bool unique,
			char *out, size_t n);

/* The child's environment: a copy of the parent's with some variables replaced. Bounded: at most
 * `max_vars` entries. */
struct capture_env {
	char **vars;                   /* "KEY=VALUE", NULL-terminated, owned */
	size_t n, cap, max_vars;
};

/* Copy envp (NULL-terminated; may be NULL). -ENOMEM, -E2BIG past max_vars. */
int capture_env_init(struct capture_env *env, const char *const *envp, size_t max_vars);
/* Set key to value (replacing an existing entry). -EINVAL for a key with '=' or an empty key. */
int capture_env_set(struct capture_env *env, const char *key, const char *value);
/* Remove key if present. */
void capture_env_unset(struct capture_env *env, const char *key);
/* The value of key, or NULL. Points into env: valid until the next set/unset/release. */
const char *capture_env_get(const struct capture_env *env, const char *key);
void capture_env_release(struct capture_env *env);

/* Where libk3capture.so is, for the k3sim binary at exe_path: `override` when non-empty (it must
 * be readable), else the first readable one of: the build tree (<exe dir>/../trace/capture/), the
 * install tree (<exe dir>/../<libdir>/k3sim/, then lib/ and lib64/), and <exe dir> itself.
 * Returns 0 with the path in out, -ENOENT (none found; out holds the first candidate tried) or
 * -ENAMETOOLONG. `libdir` is meson's libdir option (e.g. "lib/x86_64-linux-gnu"); may be NULL. */
int capture_locate_lib(const char *exe_path, const char *override, const char *libdir, char *out,
		       size_t n);

#endif
