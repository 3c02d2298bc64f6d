#include "trace/capture/env.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_lookup(const char *const *envp, const char *key)
{
	size_t kl = strlen(key);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, key, kl) == 0 && (*envp)[kl] == '=')
			return *envp + kl + 1;
	return NULL;
}

int capture_rank_from_env(const char *const *envp)
{
	static const char *const keys[] = {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "SLURM_PROCID"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = env_lookup(envp, keys[i]);
		if (!v || !*v)
			continue;
		char *end;
		errno = 0;
		long r = strtol(v, &end, 10);
		if (errno || *end || r < 0 || r >= (1L << 20))
			return -1;
		return (int)r;
	}
	return -1;
}

/* Appends to a bounded buffer; remembers overflow instead of failing at each step. */
struct sbuf {
	char *p;
	size_t n, len;
	bool overflow;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t len)
{
	if (b->len + len + 1 > b->n) {
		b->overflow = true;
		return;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
}

static void sbuf_fmt_long(struct sbuf *b, long v)
{
	char tmp[32];
	int k = snprintf(tmp, sizeof tmp, "%ld", v);
	sbuf_add(b, tmp, (size_t)k);
}

static void sbuf_rank(struct sbuf *b, int rank)
{
	if (rank < 0)
		sbuf_add(b, "na", 2);
	else
		sbuf_fmt_long(b, rank);
}

int capture_path_expand(const char *tmpl, long pid, int rank, const char *host, bool unique,
			char *out, size_t n)
{
	if (!tmpl || !*tmpl || !out || n == 0)
		return -EINVAL;
	char tmp[4096];
	struct sbuf b = {tmp, sizeof tmp, 0, false};
	tmp[0] = '\0';
	bool has_pid = false;
	for (const char *s = tmpl; *s; s++) {
		if (*s != '%') {
			sbuf_add(&b, s, 1);
			continue;
		}
		switch (s[1]) {
		case 'p':
			sbuf_fmt_long(&b, pid);
			has_pid = true;
			break;
		case 'r':
			sbuf_rank(&b, rank);
			break;
		case 'h':
			sbuf_add(&b, host ? host : "localhost", strlen(host ? host : "localhost"));
			break;
		case '%':
			sbuf_add(&b, "%", 1);
			break;
		default:
			return -EINVAL;
		}
		s++;
	}
	if (unique && !has_pid) {
		/* Insert before the extension of the last path component, if it has one. */
		const char *slash = strrchr(tmp, '/');
		const char *base = slash ? slash + 1 : tmp;
		const char *dot = strrchr(base, '.');
		size_t cut = (dot && dot != base) ? (size_t)(dot - tmp) : b.len;
		char ext[256];
		size_t ext_len = b.len - cut;
		if (ext_len >= sizeof ext)
			return -ENAMETOOLONG;
		memcpy(ext, tmp + cut, ext_len);
		ext[ext_len] = '\0';
		b.len = cut;
		tmp[cut] = '\0';
		if (rank >= 0) {
			sbuf_add(&b, ".r", 2);
			sbuf_fmt_long(&b, rank);
		}
		sbuf_add(&b, ".p", 2);
		sbuf_fmt_long(&b, pid);
		sbuf_add(&b, ext, ext_len);
	}
	if (b.overflow || b.len + 1 > n)
		return -ENAMETOOLONG;
	memcpy(out, tmp, b.len + 1);
	return 0;
}

static int env_grow(struct capture_env *env)
{
	if (env->n + 1 < env->cap)
		return 0;
	if (env->n + 1 >= env->max_vars + 1)
		return -E2BIG;
	size_t cap = env->cap ? env->cap * 2 : 64;
	if (cap > env->max_vars + 1)
		cap = env->max_vars + 1;
	char **v = realloc(env->vars, cap * sizeof *v);
	if (!v)
		return -ENOMEM;
	env->vars = v;
	env->cap = cap;
	return 0;
}

int capture_env_init(struct capture_env *env, const char *const *envp, size_t max_vars)
{
	struct capture_env tmp = {NULL, 0, 0, max_vars};
	int rc = 0;
	for (; envp && *envp; envp++) {
		rc = env_grow(&tmp);
		if (rc < 0)
			goto out;
		char *dup = strdup(*envp);
		if (!dup) {
			rc = -ENOMEM;
			goto out;
		}
		tmp.vars[tmp.n++] = dup;
		tmp.vars[tmp.n] = NULL;
	}
	if (!tmp.vars) {
		rc = env_grow(&tmp);
		if (rc < 0)
			goto out;
		tmp.vars[0] = NULL;
	}
	*env = tmp;
	return 0;
out:
	capture_env_release(&tmp);
	return rc;
}

static ssize_t env_index(const struct capture_env *env, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->vars[i], key, kl) == 0 && env->vars[i][kl] == '=')
			return (ssize_t)i;
	return -1;
}

int capture_env_set(struct capture_env *env, const char *key, const char *value)
{
	if (!key || !*key || strchr(key, '=') || !value)
		return -EINVAL;
	size_t kl = strlen(key), vl = strlen(value);
	char *kv = malloc(kl + vl + 2);
	if (!kv)
		return -ENOMEM;
	memcpy(kv, key, kl);
	kv[kl] = '=';
	memcpy(kv + kl + 1, value, vl + 1);
	ssize_t i = env_index(env, key);
	if (i >= 0) {
		free(env->vars[i]);
		env->vars[i] = kv;
		return 0;
	}
	int rc = env_grow(env);
	if (rc < 0) {
		free(kv);
		return rc;
	}
	env->vars[env->n++] = kv;
	env->vars[env->n] = NULL;
	return 0;
}

void capture_env_unset(struct capture_env *env, const char *key)
{
	ssize_t i = env_index(env, key);
	if (i < 0)
		return;
	free(env->vars[i]);
	memmove(env->vars + i, env->vars + i + 1, (env->n - (size_t)i) * sizeof *env->vars);
	env->n--;
}

const char *capture_env_get(const struct capture_env *env, const char *key)
{
	ssize_t i = env_index(env, key);
	return i < 0 ? NULL : env->vars[i] + strlen(key) + 1;
}

void capture_env_release(struct capture_env *env)
{
	if (!env)
		return;
	for (size_t i = 0; i < env->n; i++)
		free(env->vars[i]);
	free(env->vars);
	env->vars = NULL;
	env->n = env->cap = 0;
}

int capture_locate_lib(const char *exe_path, const char *override, const char *libdir, char *out,
		       size_t n)
{
	char cand[8][4096];
	size_t nc = 0;
	if (override && *override) {
		if (strlen(override) + 1 > n)
			return -ENAMETOOLONG;
		memcpy(out, override, strlen(override) + 1);
		return access(override, R_OK) == 0 ? 0 : -ENOENT;
	}
	if (!exe_path || !*exe_path)
		return -EINVAL;
	char dir[4096];
	if (strlen(exe_path) >= sizeof dir)
		return -ENAMETOOLONG;
	strcpy(dir, exe_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");

	int k = 0;
#define CAND(...)                                                                              \
	do {                                                                                   \
		k = snprintf(cand[nc], sizeof cand[nc], __VA_ARGS__);                          \
		if (k > 0 && (size_t)k < sizeof cand[nc])                                      \
			nc++;                                                                  \
	} while (0)
	CAND("%s/../trace/capture/%s", dir, CAPTURE_LIB_NAME);
	if (libdir && *libdir == '/')
		CAND("%s/k3sim/%s", libdir, CAPTURE_LIB_NAME);
	else if (libdir && *libdir)
		CAND("%s/../%s/k3sim/%s", dir, libdir, CAPTURE_LIB_NAME);
	CAND("%s/../lib/k3sim/%s", dir, CAPTURE_LIB_NAME);
	CAND("%s/../lib64/k3sim/%s", dir, CAPTURE_LIB_NAME);
	CAND("%s/%s", dir, CAPTURE_LIB_NAME);
#undef CAND
	if (nc == 0)
		return -ENAMETOOLONG;
	size_t pick = 0;
	int rc = -ENOENT;
	for (size_t i = 0; i < nc; i++) {
		if (access(cand[i], R_OK) == 0) {
			pick = i;
			rc = 0;
			break;
		}
	}
	/* Resolve "..": LD_PRELOAD-style variables are read by other programs' loaders. */
	char real[4096];
	const char *res = cand[pick];
	if (rc == 0 && realpath(cand[pick], real))
		res = real;
	if (strlen(res) + 1 > n)
		return -ENAMETOOLONG;
	memcpy(out, res, strlen(res) + 1);
	return rc;
}
