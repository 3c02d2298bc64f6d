/* util/: the YAML/JSON tree, typed reads with file:line:col errors, suggestions, dtypes, atomic
 * output files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/doc.h"
#include "util/dtype.h"
#include "util/embed.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/numfmt.h"
#include "util/outfile.h"
#include "util/units.h"

static void test_doc_positions(void **state)
{
	const char *text = "a: 1\nb:\n  c: [x, y]\n";
	struct doc d;
	struct err e;
	assert_int_equal(doc_load_string(&d, "t.yaml", text, strlen(text), &e), 0);
	const struct doc_node *b = doc_get(d.root, "b");
	assert_non_null(b);
	const struct doc_node *c = doc_get(b, "c");
	assert_int_equal(c->kind, DOC_SEQ);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->items[1]->str, "y");
	assert_int_equal(c->line, 3);
	assert_int_equal(c->col, 6);
	doc_release(&d);
}

static void test_doc_json(void **state)
{
	const char *text = "{\"x\": 12, \"y\": [1.5, true], \"s\": \"q\\\"\"}";
	struct doc d;
	struct err e;
	assert_int_equal(doc_load_string(&d, "t.json", text, strlen(text), &e), 0);
	int64_t x;
	assert_int_equal(doc_i64(&d, doc_get(d.root, "x"), "x", &x, &e), 0);
	assert_int_equal(x, 12);
	bool t;
	assert_int_equal(doc_bool(&d, doc_get(d.root, "y")->items[1], "y", &t, &e), 0);
	assert_true(t);
	assert_string_equal(doc_get(d.root, "s")->str, "q\"");
	doc_release(&d);
}

static void test_doc_errors(void **state)
{
	struct doc d;
	struct err e;
	char buf[600];
	const char *bad = "a: [1, 2\nb: 3\n";
	assert_true(doc_load_string(&d, "bad.yaml", bad, strlen(bad), &e) < 0);
	assert_true(strncmp(err_format(&e, buf, sizeof buf), "bad.yaml:", 9) == 0);
	assert_non_null(strstr(buf, "malformed YAML"));
	assert_true(e.line > 0 && e.col > 0);

	const char *dup = "a: 1\na: 2\n";
	assert_true(doc_load_string(&d, "dup.yaml", dup, strlen(dup), &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    "dup.yaml:2:1: error: duplicate key 'a' (first at line 1)");

	const char *alias = "a: &x 1\nb: *x\n";
	assert_true(doc_load_string(&d, "alias.yaml", alias, strlen(alias), &e) < 0);
	assert_non_null(strstr(e.msg, "aliases"));

	/* Deep nesting is refused, not followed. */
	char deep[400];
	memset(deep, '[', 300);
	deep[300] = '\0';
	assert_true(doc_load_string(&d, "deep.yaml", deep, strlen(deep), &e) < 0);
	assert_non_null(strstr(e.msg, "nesting"));

	const char *two = "a: 1\n---\nb: 2\n";
	assert_true(doc_load_string(&d, "two.yaml", two, strlen(two), &e) < 0);
}

static void test_typed_reads(void **state)
{
	const char *text = "n: many\nbig: 99999999999999999999\nf: 1e6\ng: 1.5\nkind: {z: 1}\n";
	struct doc d;
	struct err e;
	char buf[600];
	assert_int_equal(doc_load_string(&d, "t.yaml", text, strlen(text), &e), 0);
	int64_t v = 7;
	assert_true(doc_i64(&d, doc_get(d.root, "n"), "n", &v, &e) < 0);
	assert_int_equal(v, 7); /* untouched on failure */
	assert_string_equal(err_format(&e, buf, sizeof buf), "t.yaml:1:4: error: n: expected an integer, got 'many'");
	assert_true(doc_i64(&d, doc_get(d.root, "big"), "big", &v, &e) < 0);
	assert_non_null(strstr(e.msg, "out of range"));
	assert_int_equal(doc_i64(&d, doc_get(d.root, "f"), "f", &v, &e), 0);
	assert_int_equal(v, 1000000);
	assert_true(doc_i64(&d, doc_get(d.root, "g"), "g", &v, &e) < 0);
	assert_true(doc_i64(&d, doc_get(d.root, "kind"), "kind", &v, &e) < 0);
	assert_non_null(strstr(e.msg, "expected a scalar, got a mapping"));
	static const char *const allowed[] = {"n", "big", "f", "g", "kinds", NULL};
	assert_true(doc_check_keys(&d, d.root, allowed, &e) < 0);
	assert_string_equal(err_format(&e, buf, sizeof buf), "t.yaml:5:1: error: unknown key 'kind' (did you mean 'kinds'?)");
	doc_release(&d);
}

/* The optional map fields parsers share (scenario, serve config): an absent key keeps the default,
 * a present one is range-checked at its position. */
static void test_doc_fields(void **state)
{
	const char *text = "a: 5\nx: 2.5\nb: true\nmode: tbo\nsec: {k: 1}\nbad: {q: 1}\n";
	struct doc d;
	struct err e;
	char buf[256];
	assert_int_equal(doc_load_string(&d, "f.yaml", text, strlen(text), &e), 0);
	struct doc_reader r = {.d = &d, .e = &e};
	int64_t a = -1, none = 42;
	double x = 0;
	bool b = false;
	int mode = 0;
	assert_int_equal(doc_field_i64(&r, d.root, "a", 1, 10, &a), 0);
	assert_int_equal(a, 5);
	assert_int_equal(doc_field_i64(&r, d.root, "absent", 1, 10, &none), 0);
	assert_int_equal(none, 42);
	assert_true(doc_field_i64(&r, d.root, "a", 6, 10, &none) < 0);
	assert_int_equal(none, 42);
	assert_string_equal(err_format(&e, buf, sizeof buf), "f.yaml:1:4: error: a: 5 is out of range [6, 10]");
	assert_int_equal(doc_field_double(&r, d.root, "x", 0, 3, &x), 0);
	assert_true(x == 2.5);
	assert_true(doc_field_double(&r, d.root, "x", 0, 1, &x) < 0);
	assert_string_equal(e.msg, "x: 2.5 is out of range [0, 1]");
	assert_int_equal(doc_field_bool(&r, d.root, "b", &b), 0);
	assert_true(b);
	static const char *const modes[] = {"auto", "none", "tbo", "sbo"};
	assert_int_equal(doc_field_enum(&r, d.root, "mode", modes, 4, &mode), 0);
	assert_int_equal(mode, 2);
	assert_true(doc_field_enum(&r, d.root, "mode", modes, 2, &mode) < 0);
	assert_string_equal(e.msg, "mode: expected auto or none, got 'tbo'");
	static const char *const keys[] = {"k", NULL};
	const struct doc_node *sec;
	assert_int_equal(doc_section(&r, d.root, "sec", keys, &sec), 0);
	assert_non_null(sec);
	assert_int_equal(doc_section(&r, d.root, "nosec", keys, &sec), 0);
	assert_null(sec);
	assert_true(doc_section(&r, d.root, "bad", keys, &sec) < 0);
	assert_non_null(strstr(e.msg, "unknown key 'q'"));
	assert_true(doc_section(&r, d.root, "a", keys, &sec) < 0);
	doc_release(&d);
}

static int count_rule(const struct doc *d, const struct doc_node *rule, size_t i, size_t n, void *obj, struct err *e)
{
	(void)d, (void)rule, (void)e;
	size_t *seen = obj;
	assert_int_equal(i, seen[0]);
	seen[0]++;
	seen[1] = n;
	return seen[2] && i + 1 == seen[2] ? -ENOMEM : 0;
}

/* A rules file read rule by rule; an out-of-memory is reported at the file. */
static void test_doc_rules_each(void **state)
{
	const char *text = "rules:\n  - {a: 1}\n  - {a: 2}\n  - {a: 3}\n";
	struct err e;
	size_t seen[3] = {0, 0, 0};
	assert_int_equal(doc_rules_each("r.yaml", text, strlen(text), 8, "rules", count_rule, seen, &e), 0);
	assert_int_equal(seen[0], 3);
	assert_int_equal(seen[1], 3);
	size_t stop[3] = {0, 0, 2};
	assert_int_equal(doc_rules_each("r.yaml", text, strlen(text), 8, "rules", count_rule, stop, &e), -ENOMEM);
	assert_int_equal(stop[0], 2);
	assert_string_equal(e.msg, "out of memory reading the rules");
	assert_true(doc_rules_each("r.yaml", text, strlen(text), 2, "rules", count_rule, seen, &e) < 0);
	assert_non_null(strstr(e.msg, "at most 2 rules"));
	size_t none[3] = {0, 0, 0};
	assert_int_equal(doc_rules_each("r.yaml", "rules: []\n", 10, 8, "rules", count_rule, none, &e), 0);
	assert_int_equal(none[0], 0);
}

static void test_suggest(void **state)
{
	static const char *const keys[] = {"tp_size", "ep_size", "batch", NULL};
	assert_string_equal(err_suggest("tp_sise", keys), "tp_size");
	assert_string_equal(err_suggest("bacth", keys), "batch");
	assert_null(err_suggest("completely_different", keys));
	static const char *const longer[] = {"hidden_size", "vocab_size", NULL};
	assert_string_equal(err_suggest("hiden", longer), "hidden_size");
}

static void test_dtypes(void **state)
{
	/* MXFP4: 0.5 + 1/32 bytes per weight (group 32, one E8M0 scale byte). */
	assert_int_equal(dtype_bytes(DT_MXFP4, 32), 17);
	assert_int_equal(dtype_bytes(DT_MXFP4, 3584 * 3072), 3584 * 3072 / 32 * 17);
	assert_int_equal(dtype_bytes(DT_MXFP8, 64), 66);
	assert_int_equal(dtype_bytes(DT_BF16, 1572864), 3145728);
	enum dtype t;
	assert_int_equal(dtype_parse("fp8", &t), 0);
	assert_int_equal(t, DT_FP8);
	assert_true(dtype_parse("fp7", &t) < 0);
	/* 1M tokens x 1024 requests x 27,648 B does not overflow. */
	assert_true(dtype_bytes(DT_BF16, INT64_C(1048576) * 1024 * 13824) > 0);
}

/* JSON numbers read back exactly and are as short as they can be (issue 12: trace summary --json
 * printed 76426648.5 as 7.64266e+07). */
static void test_double_str(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{76426648.5, "76426648.5"}, {0.1, "0.1"},   {1.0 / 3, "0.3333333333333333"},
		{1e300, "1e+300"},          {-2.5e-7, "-2.5e-07"},
		{9007199254740991.0, "9007199254740991"},   {123, "123"},
		{0.30000000000000004, "0.30000000000000004"}, {-0.0, "-0"},
		{NAN, "null"},              {INFINITY, "null"},
	};
	char buf[UTIL_DOUBLE_STR_BYTES];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_string_equal(util_double_str(buf, sizeof buf, cases[i].v), cases[i].want);
	/* round trip over awkward values */
	double v = 1.0;
	for (int i = 0; i < 2000; i++) {
		v = v * 1.7320508075688772 + 1e-9 * i;
		if (v > 1e200)
			v = 1.1e-200 * (i + 1);
		util_double_str(buf, sizeof buf, v);
		assert_true(strtod(buf, NULL) == v);
	}
}

/* ---- outfile: atomic, non-destructive outputs ---- */

static char tdir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", tdir, name);
	return buf[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

/* Temporaries left in tdir (names with ".k3tmp-"). */
static int leftovers(void)
{
	int n = 0;
	DIR *d = opendir(tdir);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".k3tmp-"))
			n++;
	closedir(d);
	return n;
}

static int outfile_setup(void **state)
{
	snprintf(tdir, sizeof tdir, "%s/k3outfile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tdir) ? 0 : -1;
}

static int outfile_teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int write_all(const char *path, const struct outfile_opts *o, const char *text, struct err *e)
{
	struct outfile of;
	int rc = outfile_open(&of, path, o, e);
	if (rc < 0)
		return rc;
	FILE *f = outfile_stream(&of, e);
	assert_non_null(f);
	fputs(text, f);
	return outfile_commit(&of, e);
}

static void test_outfile_commit_abort(void **state)
{
	struct err e;
	struct outfile of;
	const char *p = tpath("new.txt");
	assert_int_equal(outfile_open(&of, p, NULL, &e), 0);
	fputs("one", outfile_stream(&of, &e));
	/* nothing at the target before commit; the temporary is beside it */
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(leftovers(), 1);
	assert_int_equal(strncmp(outfile_tmp_path(&of), tdir, strlen(tdir)), 0);
	assert_int_equal(outfile_commit(&of, &e), 0);
	expect_text(p, "one");
	assert_int_equal(leftovers(), 0);
	outfile_abort(&of); /* after commit: nothing */
	expect_text(p, "one");

	/* abort leaves the old file as it was */
	struct outfile_opts force = {.force = true};
	assert_int_equal(outfile_open(&of, p, &force, &e), 0);
	fputs("two", outfile_stream(&of, &e));
	outfile_abort(&of);
	expect_text(p, "one");
	assert_int_equal(leftovers(), 0);

	/* a zeroed outfile can be aborted */
	struct outfile z = {0};
	outfile_abort(&z);
}

static void test_outfile_force(void **state)
{
	struct err e;
	char buf[700];
	const char *p = tpath("keep.txt");
	put(p, "mine");
	chmod(p, 0640);
	assert_int_equal(write_all(p, NULL, "theirs", &e), -EEXIST);
	assert_string_equal(err_format(&e, buf, sizeof buf),
			    strcat(strcpy((char[600]){0}, p), ": error: file exists (use --force to replace it)"));
	expect_text(p, "mine");
	assert_int_equal(leftovers(), 0);
	struct outfile_opts force = {.force = true};
	assert_int_equal(write_all(p, &force, "new", &e), 0);
	expect_text(p, "new");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* a replaced file keeps its permissions */
}

static void test_outfile_input(void **state)
{
	struct err e;
	const char *in = tpath("in.db");
	put(in, "input");
	char dotted[600], hard[600], sym[600];
	snprintf(dotted, sizeof dotted, "%s/./in.db", tdir);
	snprintf(hard, sizeof hard, "%s/hard.db", tdir);
	snprintf(sym, sizeof sym, "%s/sym.db", tdir);
	assert_int_equal(link(in, hard), 0);
	assert_int_equal(symlink("in.db", sym), 0);
	const char *inputs[] = {"nonexistent-input", in};
	struct outfile_opts o = {.force = true, .inputs = inputs, .n_inputs = 2};
	/* the same file however it is spelt: refused, even with force */
	assert_int_equal(write_all(in, &o, "x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is also an input"));
	assert_int_equal(write_all(dotted, &o, "x", &e), -EINVAL);
	assert_int_equal(write_all(hard, &o, "x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "the same file"));
	assert_int_equal(write_all(sym, &o, "x", &e), -EINVAL);
	expect_text(in, "input");
	/* the input named through a symbolic link, the output by its real name */
	const char *via_link[] = {sym};
	struct outfile_opts o2 = {.force = true, .inputs = via_link, .n_inputs = 1};
	assert_int_equal(write_all(in, &o2, "x", &e), -EINVAL);
	expect_text(in, "input");
	/* a target that does not exist is no input */
	assert_int_equal(write_all(tpath("other.db"), &o, "x", &e), 0);
	assert_int_equal(leftovers(), 0);
}

static void test_outfile_not_regular(void **state)
{
	struct err e;
	struct outfile_opts force = {.force = true};
	const char *d = tpath("adir");
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(write_all(d, &force, "x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is a directory, not a regular file"));
	const char *fifo = tpath("fifo");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(write_all(fifo, &force, "x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is a FIFO"));
	struct stat st;
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* /dev/null: as root, renaming over it replaced the device node */
	assert_int_equal(write_all("/dev/null", &force, "x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is a character device"));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a symbolic link to nothing */
	const char *dangling = tpath("dangling");
	assert_int_equal(symlink("no-such-file", dangling), 0);
	assert_int_equal(write_all(dangling, &force, "x", &e), -EINVAL);
	/* a symbolic link to a file: the file is replaced, the link stays */
	put(tpath("real.txt"), "old");
	const char *link_path = tpath("link.txt");
	assert_int_equal(symlink("real.txt", link_path), 0);
	assert_int_equal(write_all(link_path, &force, "new", &e), 0);
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	expect_text(tpath("real.txt"), "new");
	/* a missing directory */
	assert_true(write_all(tpath("no/such/dir.txt"), &force, "x", &e) < 0);
	assert_non_null(strstr(e.msg, "does not exist"));
	assert_int_equal(leftovers(), 0);
}

/* A child process holding a lock on path until it is killed; returns its pid once it holds it. */
static pid_t hold_lock(const char *path, bool sqlite_bytes)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDWR);
		int ok;
		if (sqlite_bytes) {
			/* what SQLite's BEGIN EXCLUSIVE holds: the pending, reserved and shared bytes */
			struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
					   .l_start = 0x40000000, .l_len = 512};
			ok = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0;
		} else {
			ok = fd >= 0 && flock(fd, LOCK_EX) == 0;
		}
		(void)!write(ready[1], ok ? "y" : "n", 1);
		pause();
		_exit(0);
	}
	char c = 0;
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_int_equal(c, 'y');
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_outfile_locks(void **state)
{
	struct err e;
	struct outfile_opts force = {.force = true};
	const char *p = tpath("locked.db");
	put(p, "locked");
	pid_t pid = hold_lock(p, true);
	assert_int_equal(write_all(p, &force, "x", &e), -EBUSY);
	char want[64];
	snprintf(want, sizeof want, "is in use by process %ld", (long)pid);
	assert_non_null(strstr(e.msg, want));
	stop(pid);
	expect_text(p, "locked");
	pid = hold_lock(p, false);
	assert_int_equal(write_all(p, &force, "x", &e), -EBUSY);
	assert_non_null(strstr(e.msg, "locked by another process"));
	stop(pid);
	expect_text(p, "locked");
	assert_int_equal(leftovers(), 0);
	/* our own lock keeps another writer out until commit */
	struct outfile of, two;
	assert_int_equal(outfile_open(&of, p, &force, &e), 0);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	/* and the same target twice in one process is refused */
	assert_int_equal(outfile_open(&two, p, &force, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "already an output"));
	assert_int_equal(outfile_commit(&of, &e), 0);
	close(fd);
	assert_int_equal(write_all(p, &force, "free", &e), 0);
	expect_text(p, "free");
}

static void test_outfile_raced(void **state)
{
	struct err e;
	struct outfile of;
	struct outfile_opts force = {.force = true};
	/* created by someone else while we wrote: theirs stays */
	const char *p = tpath("raced.txt");
	assert_int_equal(outfile_open(&of, p, &force, &e), 0);
	fputs("ours", outfile_stream(&of, &e));
	put(p, "theirs");
	assert_int_equal(outfile_commit(&of, &e), -EEXIST);
	expect_text(p, "theirs");
	/* replaced by someone else while we wrote: theirs stays */
	assert_int_equal(outfile_open(&of, p, &force, &e), 0);
	fputs("ours", outfile_stream(&of, &e));
	const char *other = tpath("other.txt");
	put(other, "replacement");
	assert_int_equal(rename(other, p), 0);
	assert_int_equal(outfile_commit(&of, &e), -ESTALE);
	expect_text(p, "replacement");
	assert_int_equal(leftovers(), 0);
}

/* A child writes an outfile (with SQLite side files) and is ended by sig, or exits. */
static void child_interrupted(int sig)
{
	const char *p = tpath("sig.db");
	put(p, "old");
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outfile of;
		struct err e;
		struct outfile_opts o = {.force = true, .sqlite = true};
		if (outfile_open(&of, p, &o, &e) < 0)
			_exit(3);
		char side[4200];
		snprintf(side, sizeof side, "%s-journal", outfile_tmp_path(&of));
		put(side, "journal");
		fputs("half", outfile_stream(&of, &e));
		fflush(outfile_stream(&of, &e));
		(void)!write(ready[1], "y", 1);
		if (sig == 0)
			exit(4); /* exit without commit: atexit removes the temporary */
		pause();
		_exit(5);
	}
	close(ready[1]);
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	if (sig) {
		assert_int_equal(leftovers(), 2); /* the temporary and its journal */
		kill(pid, sig);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (sig) {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), sig); /* the signal took its course */
	} else {
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 4);
	}
	expect_text(p, "old");
	assert_int_equal(leftovers(), 0);
}

static void test_outfile_signals(void **state)
{
	child_interrupted(SIGINT);
	child_interrupted(SIGTERM);
	child_interrupted(0);
}

static void test_outfile_dir(void **state)
{
	struct err e;
	bool ours = false;
	const char *d = tpath("report");
	assert_int_equal(outfile_dir_open(d, &ours, &e), 0);
	assert_true(ours); /* created now */
	assert_int_equal(outfile_dir_open(d, &ours, &e), 0);
	assert_true(ours); /* empty */
	put(tpath("report/notes.md"), "user's");
	assert_int_equal(outfile_dir_open(d, &ours, &e), 0);
	assert_false(ours); /* someone's files, no mark */
	assert_int_equal(outfile_dir_mark(d, "k3sim test", &e), 0);
	assert_int_equal(outfile_dir_open(d, &ours, &e), 0);
	assert_true(ours);
	put(tpath("afile"), "x");
	assert_int_equal(outfile_dir_open(tpath("afile"), &ours, &e), -EINVAL);
	assert_int_equal(leftovers(), 0);
}

/* What util_json_str writes for s, into buf. */
static const char *json_of(const char *s, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	assert_non_null(f);
	util_json_str(f, s);
	fclose(f);
	return buf;
}

/* One escaper for every JSON string (issue 15). Before it, the CLI's and the reports' escapers
 * passed any byte through and tj_str took overlong forms, surrogates, code points above
 * U+10FFFF and lead bytes 0xf5-0xff as UTF-8: each now comes out as U+FFFD per byte. */
static void test_json_str(void **state)
{
	(void)state;
	char b[128];
	assert_string_equal(json_of("a\"b\\c", b, sizeof b), "\"a\\\"b\\\\c\"");
	assert_string_equal(json_of("t\tn\n\x01", b, sizeof b), "\"t\\u0009n\\u000a\\u0001\"");
	assert_string_equal(json_of(NULL, b, sizeof b), "\"\"");
	/* valid UTF-8 through: é, €, U+10FFFF */
	assert_string_equal(json_of("\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf", b, sizeof b),
	                    "\"\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\"");
#define FFFD "\xef\xbf\xbd"
	assert_string_equal(json_of("\xe0\x80\xaf", b, sizeof b), "\"" FFFD FFFD FFFD "\"");     /* overlong */
	assert_string_equal(json_of("\xed\xa0\x80", b, sizeof b), "\"" FFFD FFFD FFFD "\"");     /* surrogate */
	assert_string_equal(json_of("\xf4\x90\x80\x80", b, sizeof b), "\"" FFFD FFFD FFFD FFFD "\""); /* > U+10FFFF */
	assert_string_equal(json_of("\xf8\x80\x80x", b, sizeof b), "\"" FFFD FFFD FFFD "x\"");   /* no such lead */
	assert_string_equal(json_of("\xc3", b, sizeof b), "\"" FFFD "\"");                        /* cut short */
#undef FFFD
}

static const char *jw_sample(const struct jw_style *st, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	assert_non_null(f);
	struct jw w;
	jw_init_style(&w, f, st);
	jw_begin_object(&w, NULL);
	jw_str(&w, "k", "v");
	jw_begin_array(&w, "a");
	jw_i64(&w, NULL, 1);
	jw_begin_object(&w, NULL);
	jw_f64(&w, "x", 0.1);
	jw_null(&w, "y");
	jw_end_object(&w);
	jw_end_array(&w);
	jw_bool(&w, "b", true);
	jw_end_object(&w);
	fclose(f);
	return buf;
}

/* One writer, three layouts: the CLI's, results.json's and the serve summary's. */
static void test_jw_styles(void **state)
{
	(void)state;
	char b[256];
	assert_string_equal(jw_sample(&jw_style_pretty, b, sizeof b),
	                    "{\n  \"k\": \"v\",\n  \"a\": [\n    1,\n    {\n      \"x\": 0.1,\n"
	                    "      \"y\": null\n    }\n  ],\n  \"b\": true\n}");
	struct jw_style results = {.wrap_depth = 1, .wrap_top = true, .colon = ":", .number_digits = 17};
	assert_string_equal(jw_sample(&results, b, sizeof b),
	                    "\n{\n  \"k\":\"v\",\n  \"a\":[1,{\"x\":0.10000000000000001,\"y\":null}],\n  \"b\":true\n}");
	struct jw_style line = {.wrap_depth = -1, .colon = ":"};
	assert_string_equal(jw_sample(&line, b, sizeof b), "{\"k\":\"v\",\"a\":[1,{\"x\":0.1,\"y\":null}],\"b\":true}");
}

/* The human units, spelled in one place (util/units.c) with the two roundings. */
static void test_units(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(units_time(0.040662, 2, b, sizeof b), "40.66 ms");
	assert_string_equal(units_time(0.040662, 3, b, sizeof b), "40.662 ms");
	assert_string_equal(units_time(0.040662, UNITS_SIG3, b, sizeof b), "40.7 ms");
	assert_string_equal(units_time(1.5, UNITS_SIG3, b, sizeof b), "1.50 s");
	assert_string_equal(units_time(2.5e-5, 2, b, sizeof b), "25.00 us");
	assert_string_equal(units_bytes(217083904.0, 2, b, sizeof b), "207.03 MiB");
	assert_string_equal(units_bytes(217083904.0, UNITS_SIG3, b, sizeof b), "207 MiB");
	assert_string_equal(units_bytes(656, UNITS_SIG3, b, sizeof b), "656 B");
	assert_string_equal(units_count(1500, true, b, sizeof b), "1.5 K");
	assert_string_equal(units_count(1500, false, b, sizeof b), "1500");
	assert_string_equal(units_count(2.78e12, false, b, sizeof b), "2.780 T");
}

static int parse_copy(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	(void)e;
	snprintf(obj, 256, "%s|%.*s", label, (int)len_bytes, text);
	return 0;
}

/* One preset-or-path loader for hw, model, scenario, sweep and rules. */
static void test_embedded_load(void **state)
{
	(void)state;
	static const struct embedded_file table[] = {{"alpha", "a: 1\n", 5}, {NULL, NULL, 0}};
	char got[256];
	struct err e;
	assert_int_equal(embedded_load(table, "thing", "preset", "alpha", parse_copy, got, &e), 0);
	assert_string_equal(got, "<preset alpha>|a: 1\n");
	assert_int_equal(embedded_load(table, "thing", "preset", "alpah", parse_copy, got, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "unknown thing 'alpah' (did you mean 'alpha'?)"));
	/* a .json name is a path too (the sweep loader once read it as a preset name) */
	assert_true(embedded_load(table, "thing", "preset", "nope.json", parse_copy, got, &e) < 0);
	char path[] = "/tmp/k3-embed-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "b: 2\n", 5), 5);
	close(fd);
	assert_int_equal(embedded_load(table, "thing", "preset", path, parse_copy, got, &e), 0);
	assert_non_null(strstr(got, "|b: 2\n"));
	assert_int_equal(strncmp(got, path, strlen(path)), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_positions), cmocka_unit_test(test_doc_json),
		cmocka_unit_test(test_doc_errors),    cmocka_unit_test(test_typed_reads),
		cmocka_unit_test(test_doc_fields),    cmocka_unit_test(test_doc_rules_each),
		cmocka_unit_test(test_suggest),       cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_double_str),
		cmocka_unit_test(test_json_str), cmocka_unit_test(test_jw_styles),
		cmocka_unit_test(test_units), cmocka_unit_test(test_embedded_load),
	};
	const struct CMUnitTest outfile_tests[] = {
		cmocka_unit_test(test_outfile_commit_abort), cmocka_unit_test(test_outfile_force),
		cmocka_unit_test(test_outfile_input),        cmocka_unit_test(test_outfile_not_regular),
		cmocka_unit_test(test_outfile_locks),        cmocka_unit_test(test_outfile_raced),
		cmocka_unit_test(test_outfile_signals),      cmocka_unit_test(test_outfile_dir),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	return failed + cmocka_run_group_tests(outfile_tests, outfile_setup, outfile_teardown);
}
