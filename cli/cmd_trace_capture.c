/* k3sim trace capture: run a command under the CUPTI injection library (libk3capture.so) and
 * report what was captured. The work happens in the child (trace/capture/); this side builds its
 * environment, forwards SIGINT/SIGTERM, waits, and reads the manifest the child's processes wrote. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "util/outfile.h"

#ifdef K3SIM_HAVE_CAPTURE
#include "trace/capture/env.h"
#include "util/jsonw.h"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim trace capture [-o OUT.db] [--metrics LIST] [--gpu-metrics-ms N]\n"
		"                           [--meta KEY=VALUE]... [--force] [--json] -- CMD [ARGS...]\n\n"
		"Run CMD with CUPTI tracing injected (no change to the program) and write an\n"
		"nsys-compatible SQLite database per CUDA process.\n\n"
		"options:\n"
		"  -o, --output PATH   database path (default k3capture-%%p.db); %%p pid, %%r rank,\n"
		"                      %%h host. Processes other than CMD itself (torchrun workers,\n"
		"                      ...) get \".r<rank>.p<pid>\" before the extension\n"
		"  --metrics LIST      per-kernel hardware counters in a kernel-replay pass:\n"
		"                      dram_read_bytes,dram_write_bytes,sm_throughput (or raw CUPTI\n"
		"                      metric names); replay serializes kernels, so durations in such\n"
		"                      a capture are not representative\n"
		"  --no-driver-api     record CUDA runtime calls only, not driver calls\n"
		"  --no-api            record no CUDA API calls at all (kernels, copies, NVTX\n"
		"                      only): the least overhead, but kernels are not tied to\n"
		"                      their launches\n"
		"  --buffers N         CUPTI buffers in the pool (default 32)\n"
		"  --buffer-mb N       size of each buffer in MiB (default 8)\n"
		"  --gpu-metrics-ms N  sample every GPU's SM and memory clock, power, temperature\n"
		"                      and throttle reasons (NVML) every N ms into the table\n"
		"                      K3SIM_GPU_METRICS (default 20; 0: off). Without NVML the\n"
		"                      capture goes on and K3SIM_CAPTURE.gpu_metrics says why\n"
		"  --meta KEY=VALUE    store VALUE as K3SIM_CAPTURE row 'meta.KEY' (repeatable,\n"
		"                      e.g. --meta regime=sustained)\n"
		"  -f, --force         replace an existing output file\n"
		"  --json              print the report as JSON on stdout\n"
		"  -q, --quiet         no report\n"
		"  -h, --help          this text\n\n"
		"environment: K3SIM_CAPTURE_LIB overrides where libk3capture.so is;\n"
		"K3CAPTURE_VERBOSE=1 makes the library say what it does.\n"
		"The exit status is CMD's (128+N when a signal N ended it).\n");
}

#ifndef K3SIM_HAVE_CAPTURE

int cmd_trace_capture(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	fprintf(stderr, "k3sim trace capture: capture needs a CUDA build (this k3sim was built "
			"without the CUDA Toolkit's CUPTI; reconfigure with -Dcuda=enabled)\n");
	return 1;
}

#else

extern char **environ;

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	/* A terminal's ^C already reached the child (same process group): send only what was
	 * sent to us alone (kill, timeout, a job scheduler). */
	if (info && info->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

struct db_report {
	char path[PATH_MAX];
	long long kernels, memcpys, memsets, api_calls, nvtx, dropped, metrics;
};

/* Lines "path \t kernels \t memcpys \t memsets \t api \t nvtx \t dropped \t metrics". */
static int read_manifest(const char *path, struct db_report *out, int max)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int n = 0;
	char line[PATH_MAX + 256];
	while (n < max && fgets(line, sizeof line, f)) {
		struct db_report *r = &out[n];
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		size_t len = strlen(line);
		if (len >= sizeof r->path)
			continue;
		memcpy(r->path, line, len + 1);
		if (sscanf(tab + 1, "%lld %lld %lld %lld %lld %lld %lld", &r->kernels, &r->memcpys,
			   &r->memsets, &r->api_calls, &r->nvtx, &r->dropped, &r->metrics) == 7)
			n++;
	}
	fclose(f);
	return n;
}

static void report(const struct db_report *r, int n, int status, bool json)
{
	if (json) {
		printf("{\"exit_status\": %d, \"databases\": [", status);
		for (int i = 0; i < n; i++) {
			printf("%s{\"path\": ", i ? ", " : "");
			util_json_str(stdout, r[i].path);
			printf(", \"kernels\": %lld, \"memcpys\": %lld, \"memsets\": %lld, "
			       "\"api_calls\": %lld, \"nvtx\": %lld, \"dropped_records\": %lld, "
			       "\"metrics\": %lld}",
			       r[i].kernels, r[i].memcpys, r[i].memsets, r[i].api_calls, r[i].nvtx,
			       r[i].dropped, r[i].metrics);
		}
		printf("]}\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		fprintf(stderr,
			"k3sim trace capture: %lld kernels, %lld memcpys, %lld memsets, %lld API "
			"calls, %lld NVTX ranges/marks",
			r[i].kernels, r[i].memcpys, r[i].memsets, r[i].api_calls, r[i].nvtx);
		if (r[i].metrics)
			fprintf(stderr, ", %lld kernel metrics", r[i].metrics);
		fprintf(stderr, ", %lld dropped records -> %s\n", r[i].dropped, r[i].path);
		if (r[i].dropped)
			fprintf(stderr, "k3sim trace capture: warning: CUPTI dropped %lld records; "
					"raise --buffers or --buffer-mb\n",
				r[i].dropped);
	}
}

static int parse_count(const char *opt, const char *v, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || errno || *end || x < lo || x > hi) {
		fprintf(stderr, "k3sim trace capture: %s wants a number in [%ld, %ld]\n", opt, lo,
			hi);
		return -1;
	}
	*out = x;
	return 0;
}

/* SQLite's companions of a database file, moved with it. */
static const char *const sidecars[] = {"", "-wal", "-shm", "-journal"};

/* Moves PATH (and its companions) to PATH.k3sim-old-PID in the same directory. */
static int keep_aside(const char *path, char *backup, size_t n)
{
	if ((size_t)snprintf(backup, n, "%s.k3sim-old-%ld", path, (long)getpid()) >= n - 16) {
		fprintf(stderr, "k3sim trace capture: output path too long\n");
		backup[0] = '\0';
		return -1;
	}
	for (size_t k = 0; k < sizeof sidecars / sizeof *sidecars; k++) {
		char from[PATH_MAX + 16], to[PATH_MAX + 16];
		snprintf(from, sizeof from, "%s%s", path, sidecars[k]);
		snprintf(to, sizeof to, "%s%s", backup, sidecars[k]);
		if (rename(from, to) < 0 && (k == 0 || errno != ENOENT)) {
			fprintf(stderr, "k3sim trace capture: cannot move '%s' aside: %s\n", from,
				strerror(errno));
			if (k == 0)
				backup[0] = '\0';
			return -1;
		}
	}
	return 0;
}

/* After the run: a new database at TARGET replaces the old one for good; otherwise the old
 * one goes back where it was. */
static void settle_aside(const char *target, const char *backup, bool quiet)
{
	struct stat st;
	bool replaced = lstat(target, &st) == 0 && S_ISREG(st.st_mode);
	for (size_t k = 0; k < sizeof sidecars / sizeof *sidecars; k++) {
		char old[PATH_MAX + 16], at[PATH_MAX + 16];
		snprintf(old, sizeof old, "%s%s", backup, sidecars[k]);
		snprintf(at, sizeof at, "%s%s", target, sidecars[k]);
		if (replaced) {
			unlink(old);
		} else if (rename(old, at) < 0 && errno != ENOENT) {
			fprintf(stderr, "k3sim trace capture: the old '%s' is kept as '%s' (%s)\n", at,
				old, strerror(errno));
		}
	}
	if (!replaced && !quiet)
		fprintf(stderr, "k3sim trace capture: nothing was written to '%s': the old file is "
				"left as it was\n",
			target);
}

int cmd_trace_capture(int argc, char **argv)
{
	const char *output = "k3capture-%p.db", *metrics = NULL;
	bool force = false, json = false, quiet = false, no_driver = false, no_api = false;
	long buffers = 0, buffer_mb = 0, gpu_ms = -1;
	char meta[4096] = "";
	size_t meta_len = 0;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if (++i == argc)
				goto missing;
			output = argv[i];
		} else if (strcmp(a, "--metrics") == 0) {
			if (++i == argc)
				goto missing;
			metrics = argv[i];
		} else if (strcmp(a, "--buffers") == 0) {
			if (parse_count(a, ++i < argc ? argv[i] : NULL, 2, 4096, &buffers) < 0)
				return 2;
		} else if (strcmp(a, "--buffer-mb") == 0) {
			if (parse_count(a, ++i < argc ? argv[i] : NULL, 1, 1024, &buffer_mb) < 0)
				return 2;
		} else if (strcmp(a, "--gpu-metrics-ms") == 0) {
			if (parse_count(a, ++i < argc ? argv[i] : NULL, 0, 60000, &gpu_ms) < 0)
				return 2;
		} else if (strcmp(a, "--meta") == 0) {
			if (++i == argc)
				goto missing;
			const char *kv = argv[i], *eq = strchr(kv, '=');
			size_t len = strlen(kv);
			if (!eq || eq == kv || strchr(kv, '\n') || eq - kv > 64) {
				fprintf(stderr, "k3sim trace capture: --meta wants KEY=VALUE (a key of "
						"1..64 characters, one line), not '%s'\n",
					kv);
				return 2;
			}
			if (meta_len + len + 2 > sizeof meta) {
				fprintf(stderr, "k3sim trace capture: --meta values too long (%zu bytes "
						"at most in all)\n",
					sizeof meta - 1);
				return 2;
			}
			meta_len += (size_t)snprintf(meta + meta_len, sizeof meta - meta_len, "%s%s",
						     meta_len ? "\n" : "", kv);
		} else if (strcmp(a, "--no-driver-api") == 0) {
			no_driver = true;
		} else if (strcmp(a, "--no-api") == 0) {
			no_api = true;
		} else if (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = true;
		} else {
			fprintf(stderr, "k3sim trace capture: unknown option '%s'; see --help\n", a);
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "k3sim trace capture: no command to run; usage: k3sim trace capture "
				"[-o OUT.db] -- CMD [ARGS...]\n");
		return 2;
	}
	char **cmd = argv + i;

	char exe[PATH_MAX], lib[PATH_MAX];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[el > 0 ? el : 0] = '\0';
	int rc = capture_locate_lib(exe, getenv(CAPTURE_ENV_LIB), K3SIM_LIBDIR, lib, sizeof lib);
	if (rc < 0) {
		fprintf(stderr,
			"k3sim trace capture: cannot find %s (looked at '%s'); set %s to its path\n",
			CAPTURE_LIB_NAME, lib, CAPTURE_ENV_LIB);
		return 1;
	}

	/* The output template, absolute: the program may change directory before cuInit. */
	char tmpl[PATH_MAX], target[PATH_MAX] = "", backup[PATH_MAX] = "";
	if (output[0] == '/') {
		snprintf(tmpl, sizeof tmpl, "%s", output);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd)) {
			fprintf(stderr, "k3sim trace capture: cannot read the working directory\n");
			return 1;
		}
		if ((size_t)snprintf(tmpl, sizeof tmpl, "%s/%s", cwd, output) >= sizeof tmpl) {
			fprintf(stderr, "k3sim trace capture: output path too long\n");
			return 1;
		}
	}
	/* Without %p the command's own database is exactly that path: check it up front. */
	if (!strstr(tmpl, "%p")) {
		char probe[PATH_MAX];
		if (capture_path_expand(tmpl, 0, -1, "localhost", false, probe, sizeof probe) < 0) {
			fprintf(stderr, "k3sim trace capture: bad output path '%s' (use %%p, %%r, %%h, "
					"%%%%)\n",
				output);
			return 2;
		}
		struct stat st;
		if (!strstr(tmpl, "%") && lstat(probe, &st) == 0) {
			/* never a device node, FIFO or directory, even with --force (util/outfile.h) */
			struct outfile_opts oo = {.force = force};
			struct err e;
			if (outfile_check(probe, &oo, &e) < 0) {
				char buf[1024];
				fprintf(stderr, "k3sim trace capture: %s\n", err_format(&e, buf, sizeof buf));
				return 1;
			}
			/* --force: the old capture moves aside and comes back unless a new one
			 * is written (a command that never starts CUDA replaces nothing). */
			if (keep_aside(probe, backup, sizeof backup) < 0)
				return 1;
			snprintf(target, sizeof target, "%s", probe);
		}
	}

	char manifest[] = "/tmp/k3capture-manifest-XXXXXX";
	int mfd = mkstemp(manifest);
	if (mfd < 0) {
		fprintf(stderr, "k3sim trace capture: cannot create a temporary file: %s\n",
			strerror(errno));
		if (backup[0])
			settle_aside(target, backup, quiet);
		return 1;
	}
	close(mfd);

	struct capture_env env;
	int status = 1;
	if (capture_env_init(&env, (const char *const *)environ, 1 << 16) < 0) {
		fprintf(stderr, "k3sim trace capture: environment too large\n");
		goto out_manifest;
	}
	const char *prev = capture_env_get(&env, CAPTURE_ENV_INJECTION);
	if (prev && strcmp(prev, lib) != 0 && !quiet)
		fprintf(stderr, "k3sim trace capture: note: replacing %s=%s\n",
			CAPTURE_ENV_INJECTION, prev);
	char num[32];
	rc = capture_env_set(&env, CAPTURE_ENV_INJECTION, lib);
	rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_NVTX, lib);
	rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_OUTPUT, tmpl);
	rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_MANIFEST, manifest);
	if (metrics)
		rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_METRICS, metrics);
	else
		capture_env_unset(&env, CAPTURE_ENV_METRICS);
	rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_DRIVER, no_driver ? "0" : "1");
	rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_API, no_api ? "0" : "1");
	if (buffers) {
		snprintf(num, sizeof num, "%ld", buffers);
		rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_BUFFERS, num);
	}
	if (buffer_mb) {
		snprintf(num, sizeof num, "%ld", buffer_mb << 20);
		rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_BUFFER_BYTES, num);
	}
	if (gpu_ms >= 0) {
		snprintf(num, sizeof num, "%ld", gpu_ms);
		rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_GPU_METRICS, num);
	}
	if (meta_len)
		rc = rc ? rc : capture_env_set(&env, CAPTURE_ENV_META, meta);
	else
		capture_env_unset(&env, CAPTURE_ENV_META);
	if (rc < 0) {
		fprintf(stderr, "k3sim trace capture: cannot build the environment\n");
		goto out_env;
	}

	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "k3sim trace capture: fork: %s\n", strerror(errno));
		goto out_signals;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		snprintf(num, sizeof num, "%ld", (long)getpid());
		if (capture_env_set(&env, CAPTURE_ENV_ROOT_PID, num) == 0)
			execvpe(cmd[0], cmd, env.vars);
		fprintf(stderr, "k3sim trace capture: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "k3sim trace capture: waitpid: %s\n", strerror(errno));
			goto out_signals;
		}
	child_pid = 0;
	if (WIFEXITED(ws)) {
		status = WEXITSTATUS(ws);
	} else if (WIFSIGNALED(ws)) {
		status = 128 + WTERMSIG(ws);
		if (!quiet)
			fprintf(stderr, "k3sim trace capture: '%s' ended by signal %d\n", cmd[0],
				WTERMSIG(ws));
	}

	struct db_report reps[256];
	int n = read_manifest(manifest, reps, 256);
	if (json)
		report(reps, n, status, true);
	else if (!quiet)
		report(reps, n, status, false);
	if (n == 0 && !quiet && status != 127)
		fprintf(stderr,
			"k3sim trace capture: nothing was captured: '%s' never initialized CUDA, or "
			"the capture could not start (run again with K3CAPTURE_VERBOSE=1)\n",
			cmd[0]);
out_signals:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out_env:
	capture_env_release(&env);
out_manifest:
	unlink(manifest);
	if (backup[0])
		settle_aside(target, backup, quiet);
	return status;
missing:
	fprintf(stderr, "k3sim trace capture: '%s' needs a value\n", argv[i - 1]);
	return 2;
}

#endif
