/* Atomic, non-destructive output files: see outfile.h for the guarantees. */
#include "util/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* SQLite's lock bytes (os_unix.c: PENDING_BYTE, RESERVED_BYTE, then SHARED_SIZE shared bytes):
 * every connection takes its POSIX locks inside [PENDING_BYTE, PENDING_BYTE + 512). */
#define SQLITE_LOCK_FIRST ((off_t)0x40000000)
#define SQLITE_LOCK_BYTES ((off_t)512)

/* ---- the registry of live temporaries, read by the signal handler ---- */

enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };

struct slot {
	atomic_int state;
	pid_t owner;    /* the process that created the temporary (a fork must not remove it) */
	bool sqlite;
	dev_t dir_dev;  /* the target's identity: its directory and name ... */
	ino_t dir_ino;
	char name[256];
	dev_t dev;      /* ... or, when it exists, its inode */
	ino_t ino;
	bool existed;
	char tmp[OUTFILE_PATH_MAX];
};

static struct slot slots[OUTFILE_MAX_LIVE];

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
enum { N_CAUGHT = sizeof caught / sizeof caught[0] };
static struct sigaction previous[N_CAUGHT];
static atomic_int installed;

static size_t cat(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = '\0';
	return at;
}

/* Async-signal-safe: unlink and getpid only. */
static void unlink_tmp(const char *tmp, bool sqlite)
{
	unlink(tmp);
	if (!sqlite)
		return;
	static const char *const side[] = {"-journal", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		char p[OUTFILE_PATH_MAX + 16];
		size_t n = cat(p, 0, sizeof p, tmp);
		cat(p, n, sizeof p, side[i]);
		unlink(p);
	}
}

static void remove_live(void)
{
	pid_t me = getpid();
	for (int i = 0; i < OUTFILE_MAX_LIVE; i++)
		if (atomic_load(&slots[i].state) == SLOT_LIVE && slots[i].owner == me)
			unlink_tmp(slots[i].tmp, slots[i].sqlite);
}

static void on_signal(int sig)
{
	int saved = errno;
	remove_live();
	/* The signal's previous course: restore that disposition and raise it again; it is blocked
	 * while this handler runs, so it is delivered (by default: the end) when we return. */
	for (int i = 0; i < N_CAUGHT; i++)
		if (caught[i] == sig)
			sigaction(sig, &previous[i], NULL);
	raise(sig);
	errno = saved;
}

static void at_exit(void)
{
	remove_live();
}

static void install(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&installed, &expected, 1))
		return;
	atexit(at_exit);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < N_CAUGHT; i++)
		sigaddset(&sa.sa_mask, caught[i]);
	sa.sa_flags = SA_RESTART;
	for (int i = 0; i < N_CAUGHT; i++) {
		if (sigaction(caught[i], NULL, &previous[i]) < 0)
			continue;
		/* nohup and friends: an ignored signal stays ignored. */
		if (!(previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_handler == SIG_IGN)
			continue;
		sigaction(caught[i], &sa, NULL);
	}
}

static void slot_free(int i)
{
	if (i >= 0 && i < OUTFILE_MAX_LIVE)
		atomic_store(&slots[i].state, SLOT_FREE);
}

/* ---- helpers ---- */

static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* dir and base of path ("x" -> ".", "x"; "/x" -> "/", "x"). -ENAMETOOLONG if they do not fit. */
static int split(const char *path, char *dir, size_t dir_cap, char *base, size_t base_cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(dir, dir_cap, ".");
		if ((size_t)snprintf(base, base_cap, "%s", path) >= base_cap)
			return -ENAMETOOLONG;
		return 0;
	}
	size_t dlen = slash == path ? 1 : (size_t)(slash - path);
	if (dlen >= dir_cap || strlen(slash + 1) >= base_cap)
		return -ENAMETOOLONG;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	snprintf(base, base_cap, "%s", slash + 1);
	return 0;
}

/* Is (dev, ino) one of the inputs? Sets *which. */
static bool is_input(dev_t dev, ino_t ino, const struct outfile_opts *o, const char **which)
{
	for (size_t i = 0; o && i < o->n_inputs; i++) {
		const char *in = o->inputs[i];
		struct stat st;
		if (!in)
			continue;
		int rc = strcmp(in, "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(in, &st);
		if (rc == 0 && st.st_dev == dev && st.st_ino == ino) {
			*which = in;
			return true;
		}
	}
	return false;
}

/* Lock the existing target: flock, then SQLite's lock bytes. -EBUSY (with who) if held. */
static int lock_target(struct outfile *of, const struct stat *st, struct err *e)
{
	bool writable = true;
	int fd = open(of->target, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM || errno == ETXTBSY)) {
		writable = false;
		fd = open(of->target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0) {
		int err = errno;
		err_set(e, of->path, 0, 0, "cannot open it to lock it: %s", strerror(err));
		return -err;
	}
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		err_set(e, of->path, 0, 0, "changed while k3sim was opening it; try again");
		return -ESTALE;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno != ENOLCK && errno != EOPNOTSUPP &&
	    errno != EINVAL) {
		int err = errno;
		close(fd);
		if (err == EWOULDBLOCK) {
			err_set(e, of->path, 0, 0,
				"is locked by another process (flock); it is left as it is");
			return -EBUSY;
		}
		err_set(e, of->path, 0, 0, "cannot lock it: %s", strerror(err));
		return -err;
	}
	struct flock fl;
	memset(&fl, 0, sizeof fl);
	fl.l_type = writable ? F_WRLCK : F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = SQLITE_LOCK_FIRST;
	fl.l_len = SQLITE_LOCK_BYTES;
	if (fcntl(fd, F_SETLK, &fl) < 0) {
		int err = errno;
		if (err == EAGAIN || err == EACCES) {
			struct flock who = fl;
			long pid = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK
					   ? (long)who.l_pid : 0;
			close(fd);
			if (pid > 0)
				err_set(e, of->path, 0, 0,
					"is in use by process %ld (an SQLite connection holds its lock);"
					" it is left as it is", pid);
			else
				err_set(e, of->path, 0, 0,
					"is in use by another process (an SQLite connection holds its"
					" lock); it is left as it is");
			return -EBUSY;
		}
		if (err != ENOLCK && err != EOPNOTSUPP && err != EINVAL) {
			close(fd);
			err_set(e, of->path, 0, 0, "cannot lock it: %s", strerror(err));
			return -err;
		}
	}
	of->lock_fd = fd;
	return 0;
}

/* Claim a registry slot for the target (dir identity + name, or inode). */
static int claim_slot(struct outfile *of, const struct stat *dir_st, const char *base,
		      struct err *e)
{
	for (int i = 0; i < OUTFILE_MAX_LIVE; i++) {
		const struct slot *s = &slots[i];
		if (atomic_load(&s->state) != SLOT_LIVE || s->owner != getpid())
			continue;
		bool same = (s->dir_dev == dir_st->st_dev && s->dir_ino == dir_st->st_ino &&
			     strcmp(s->name, base) == 0) ||
			    (of->existed && s->existed && s->dev == of->dev && s->ino == of->ino);
		if (same) {
			err_set(e, of->path, 0, 0, "is already an output of this command");
			return -EINVAL;
		}
	}
	for (int i = 0; i < OUTFILE_MAX_LIVE; i++) {
		int expected = SLOT_FREE;
		if (!atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_BUSY))
			continue;
		struct slot *s = &slots[i];
		s->owner = getpid();
		s->sqlite = of->sqlite;
		s->dir_dev = dir_st->st_dev;
		s->dir_ino = dir_st->st_ino;
		snprintf(s->name, sizeof s->name, "%.255s", base);
		s->existed = of->existed;
		s->dev = of->dev;
		s->ino = of->ino;
		s->tmp[0] = '\0';
		of->slot = i;
		return 0;
	}
	err_set(e, of->path, 0, 0, "more than %d output files at once", OUTFILE_MAX_LIVE);
	return -EMFILE;
}

/* Create the temporary beside the target and make it live in the registry. */
static int create_tmp(struct outfile *of, const char *dir, const char *base, const struct stat *st,
		      struct err *e)
{
	static atomic_uint counter;
	struct slot *s = &slots[of->slot];
	for (int attempt = 0; attempt < 1000; attempt++) {
		unsigned n = atomic_fetch_add(&counter, 1);
		int len = snprintf(of->tmp, sizeof of->tmp, "%s/.%.200s.k3tmp-%ld-%u", dir, base,
				   (long)getpid(), n);
		if (len < 0 || (size_t)len >= sizeof of->tmp) {
			err_set(e, of->path, 0, 0, "the path is too long");
			return -ENAMETOOLONG;
		}
		/* With the caught signals blocked in this thread, the file is registered before a
		 * handler here could miss it. */
		sigset_t block, old;
		sigemptyset(&block);
		for (int i = 0; i < N_CAUGHT; i++)
			sigaddset(&block, caught[i]);
		sigprocmask(SIG_BLOCK, &block, &old);
		int fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		int err = errno;
		if (fd >= 0) {
			memcpy(s->tmp, of->tmp, (size_t)len + 1);
			atomic_store(&s->state, SLOT_LIVE);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (fd >= 0) {
			if (of->existed)
				(void)fchmod(fd, st->st_mode & 07777);
			of->fd = fd;
			return 0;
		}
		if (err == EEXIST)
			continue;
		if (err == ENOENT)
			err_set(e, of->path, 0, 0, "cannot write: the directory '%s' does not exist",
				dir);
		else
			err_set(e, of->path, 0, 0, "cannot write in '%s': %s", dir, strerror(err));
		return -err;
	}
	err_set(e, of->path, 0, 0, "cannot find a free temporary name in '%s'", dir);
	return -EEXIST;
}

static void close_files(struct outfile *of)
{
	if (of->stream)
		fclose(of->stream);
	else if (of->fd >= 0)
		close(of->fd);
	of->stream = NULL;
	of->fd = -1;
}

static void unlock(struct outfile *of)
{
	if (of->lock_fd >= 0)
		close(of->lock_fd); /* releases the flock and the POSIX locks */
	of->lock_fd = -1;
}

/* The checks of outfile_open: of->path set; fills of->target, existed, dev, ino and *st. */
static int check(struct outfile *of, const struct outfile_opts *o, struct stat *stp, struct err *e)
{
	const char *path = of->path;
	struct stat st;
	memset(&st, 0, sizeof st);
	if (lstat(path, &st) == 0) {
		of->existed = true;
		if (S_ISLNK(st.st_mode)) {
			char *real = realpath(path, NULL);
			if (!real || stat(real, &st) < 0) {
				free(real);
				err_set(e, path, 0, 0,
					"is a symbolic link to a file that does not exist (or cannot be"
					" reached); give the real path");
				return -EINVAL;
			}
			if (strlen(real) + 32 >= OUTFILE_PATH_MAX) {
				free(real);
				err_set(e, path, 0, 0, "output path is too long");
				return -ENAMETOOLONG;
			}
			snprintf(of->target, sizeof of->target, "%s", real);
			free(real);
		}
	} else if (errno != ENOENT) {
		int err = errno;
		err_set(e, path, 0, 0, "cannot write: %s", strerror(err));
		return -err;
	}
	if (of->existed) {
		if (!S_ISREG(st.st_mode)) {
			err_set(e, path, 0, 0,
				"is %s, not a regular file: k3sim writes only regular files (refused,"
				" even with --force)", kind_of(st.st_mode));
			return -EINVAL;
		}
		const char *which = NULL;
		if (is_input(st.st_dev, st.st_ino, o, &which)) {
			if (strcmp(which, path) == 0)
				err_set(e, path, 0, 0, "is also an input: give another output");
			else
				err_set(e, path, 0, 0,
					"is also an input ('%s' is the same file): give another output",
					which);
			return -EINVAL;
		}
		if (!o->force) {
			err_set(e, path, 0, 0, "file exists (use --force to replace it)");
			return -EEXIST;
		}
		of->dev = st.st_dev;
		of->ino = st.st_ino;
	}

	*stp = st;
	return 0;
}

/* ---- the API ---- */

int outfile_open(struct outfile *of, const char *path, const struct outfile_opts *opts,
		 struct err *e)
{
	static const struct outfile_opts none;
	const struct outfile_opts *o = opts ? opts : &none;
	int rc = 0;
	memset(of, 0, sizeof *of);
	of->fd = -1;
	of->lock_fd = -1;
	of->slot = -1;
	of->sqlite = o->sqlite;
	if (!path || !path[0]) {
		err_set(e, NULL, 0, 0, "no output path");
		return -EINVAL;
	}
	if (strlen(path) + 32 >= OUTFILE_PATH_MAX) {
		err_set(e, NULL, 0, 0, "output path is too long");
		return -ENAMETOOLONG;
	}
	snprintf(of->path, sizeof of->path, "%s", path);
	snprintf(of->target, sizeof of->target, "%s", path);
	install();

	struct stat st;
	if ((rc = check(of, o, &st, e)) < 0)
		return rc;

	char dir[OUTFILE_PATH_MAX], base[OUTFILE_PATH_MAX];
	if (split(of->target, dir, sizeof dir, base, sizeof base) < 0 || !base[0]) {
		err_set(e, path, 0, 0, "not a file name");
		return -EINVAL;
	}
	struct stat dir_st;
	if (stat(dir, &dir_st) < 0) {
		int err = errno;
		err_set(e, path, 0, 0, "cannot write: the directory '%s' %s", dir,
			err == ENOENT ? "does not exist" : strerror(err));
		return -err;
	}
	if ((rc = claim_slot(of, &dir_st, base, e)) < 0)
		return rc;
	if (of->existed && (rc = lock_target(of, &st, e)) < 0)
		goto fail;
	if ((rc = create_tmp(of, dir, base, &st, e)) < 0)
		goto fail;
	of->open = true;
	return 0;
fail:
	unlock(of);
	slot_free(of->slot);
	of->slot = -1;
	return rc;
}

int outfile_check(const char *path, const struct outfile_opts *opts, struct err *e)
{
	static const struct outfile_opts none;
	struct outfile *of = calloc(1, sizeof *of);
	if (!of) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = 0;
	if (!path || !path[0]) {
		err_set(e, NULL, 0, 0, "no output path");
		rc = -EINVAL;
	} else if (strlen(path) + 32 >= OUTFILE_PATH_MAX) {
		err_set(e, NULL, 0, 0, "output path is too long");
		rc = -ENAMETOOLONG;
	} else {
		snprintf(of->path, sizeof of->path, "%s", path);
		snprintf(of->target, sizeof of->target, "%s", path);
		struct stat st;
		rc = check(of, opts ? opts : &none, &st, e);
	}
	free(of);
	return rc;
}

const char *outfile_tmp_path(const struct outfile *of)
{
	return of->tmp;
}

FILE *outfile_stream(struct outfile *of, struct err *e)
{
	if (!of->open) {
		err_set(e, of->path, 0, 0, "not open for writing");
		return NULL;
	}
	if (!of->stream) {
		of->stream = fdopen(of->fd, "w");
		if (!of->stream) {
			err_set(e, of->path, 0, 0, "cannot write: %s", strerror(errno));
			return NULL;
		}
		of->fd = -1;
	}
	return of->stream;
}

void outfile_abort(struct outfile *of)
{
	if (!of->open)
		return;
	close_files(of);
	unlink_tmp(of->tmp, of->sqlite);
	slot_free(of->slot);
	of->slot = -1;
	unlock(of);
	of->open = false;
}

/* Rename without replacing: the target did not exist when we checked. */
static int rename_new(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -errno;
	/* A filesystem without RENAME_NOREPLACE: link() refuses an existing name too. */
	if (link(from, to) == 0) {
		unlink(from);
		return 0;
	}
	if (errno == EEXIST)
		return -EEXIST;
	struct stat st;
	if (lstat(to, &st) == 0)
		return -EEXIST;
	return rename(from, to) == 0 ? 0 : -errno;
}

static int fsync_dir(const char *target)
{
	char dir[OUTFILE_PATH_MAX], base[OUTFILE_PATH_MAX];
	if (split(target, dir, sizeof dir, base, sizeof base) < 0)
		return -ENAMETOOLONG;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 || errno == EINVAL || errno == EROFS ? 0 : -errno;
	close(fd);
	return rc;
}

int outfile_commit(struct outfile *of, struct err *e)
{
	if (!of->open) {
		err_set(e, of->path, 0, 0, "not open for writing");
		return -EINVAL;
	}
	int rc = 0;
	int fd = of->stream ? fileno(of->stream) : of->fd;
	if (of->stream && (fflush(of->stream) != 0 || ferror(of->stream))) {
		rc = -(errno ? errno : EIO);
		err_set(e, of->path, 0, 0, "write failed: %s", strerror(-rc));
		goto fail;
	}
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
		rc = -errno;
		err_set(e, of->path, 0, 0, "write failed (fsync): %s", strerror(-rc));
		goto fail;
	}
	int closed = of->stream ? fclose(of->stream) : close(of->fd);
	of->stream = NULL;
	of->fd = -1;
	if (closed != 0) {
		rc = -(errno ? errno : EIO);
		err_set(e, of->path, 0, 0, "write failed: %s", strerror(-rc));
		goto fail;
	}
	if (of->existed) {
		struct stat st;
		if (lstat(of->target, &st) < 0 || st.st_dev != of->dev || st.st_ino != of->ino) {
			err_set(e, of->path, 0, 0,
				"was replaced or removed by another program while k3sim wrote it;"
				" that file is left as it is and nothing was written");
			rc = -ESTALE;
			goto fail;
		}
		if (rename(of->tmp, of->target) < 0) {
			rc = -errno;
			err_set(e, of->path, 0, 0, "cannot replace it: %s", strerror(-rc));
			goto fail;
		}
	} else {
		rc = rename_new(of->tmp, of->target);
		if (rc == -EEXIST) {
			err_set(e, of->path, 0, 0,
				"was created by another program while k3sim wrote it; that file is"
				" left as it is and nothing was written");
			goto fail;
		}
		if (rc < 0) {
			err_set(e, of->path, 0, 0, "cannot write: %s", strerror(-rc));
			goto fail;
		}
	}
	slot_free(of->slot);
	of->slot = -1;
	unlock(of);
	of->open = false;
	rc = fsync_dir(of->target);
	if (rc < 0) {
		err_set(e, of->path, 0, 0, "written, but the directory could not be synced: %s",
			strerror(-rc));
		return rc;
	}
	return 0;
fail:
	outfile_abort(of);
	return rc;
}

void outfile_err_path(const struct outfile *of, struct err *e)
{
	if (!e || !of->tmp[0])
		return;
	size_t n = strlen(e->file); /* e->file may hold a cut copy of a long path */
	if (n && strncmp(e->file, of->tmp, n) == 0 && (!of->tmp[n] || n == sizeof e->file - 1))
		snprintf(e->file, sizeof e->file, "%.255s", of->path);
}

/* ---- report directories ---- */

static int dir_state(const char *path, bool *empty, bool *marked)
{
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	*empty = true;
	*marked = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		*empty = false;
		if (strcmp(de->d_name, OUTFILE_DIR_MARK) == 0)
			*marked = true;
	}
	closedir(d);
	return 0;
}

int outfile_dir_open(const char *path, bool *ours, struct err *e)
{
	if (!path || !path[0]) {
		err_set(e, NULL, 0, 0, "no output directory");
		return -EINVAL;
	}
	bool created = false, empty = false, marked = false;
	if (mkdir(path, 0777) == 0) {
		created = true;
	} else if (errno != EEXIST) {
		int err = errno;
		err_set(e, path, 0, 0, "cannot create the directory: %s", strerror(err));
		return -err;
	}
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err_set(e, path, 0, 0, "exists and is not a directory: the report needs one");
		return -EINVAL;
	}
	if (!created) {
		int rc = dir_state(path, &empty, &marked);
		if (rc < 0) {
			err_set(e, path, 0, 0, "cannot read the directory: %s", strerror(-rc));
			return rc;
		}
	}
	if (ours)
		*ours = created || empty || marked;
	return 0;
}

int outfile_dir_mark(const char *dir, const char *what, struct err *e)
{
	char path[OUTFILE_PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, OUTFILE_DIR_MARK) >= sizeof path) {
		err_set(e, dir, 0, 0, "output path is too long");
		return -ENAMETOOLONG;
	}
	struct outfile of;
	struct outfile_opts o = {.force = true};
	int rc = outfile_open(&of, path, &o, e);
	if (rc < 0)
		return rc;
	FILE *f = outfile_stream(&of, e);
	if (!f) {
		outfile_abort(&of);
		return -ENOMEM;
	}
	fprintf(f,
		"This directory is a report written by %s.\n"
		"k3sim replaces the files it writes here on its next run (without --force);\n"
		"other files are never touched. Remove this file to protect the report.\n",
		what && what[0] ? what : "k3sim");
	return outfile_commit(&of, e);
}
