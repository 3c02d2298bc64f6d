#ifndef K3_UTIL_OUTFILE_H
#define K3_UTIL_OUTFILE_H

/* Atomic, non-destructive output files. Every file k3sim writes (trace databases, sweep databases
 * and CSVs, Perfetto JSON, presets, report files) goes through this, so a failed, interrupted or
 * mistaken command never loses a file. The model is git's lockfile.c / tempfile.c:
 *
 *     struct outfile of = {0};
 *     struct outfile_opts o = {.force = force, .inputs = inputs, .n_inputs = n};
 *     if (outfile_open(&of, "out.db", &o, &e) < 0)       nothing was created or changed
 *         ...print e...
 *     write outfile_tmp_path(&of) (SQLite: opts.sqlite) or outfile_stream(&of) (stdio)
 *     rc = ok ? outfile_commit(&of, &e) : (outfile_abort(&of), rc);
 *
 * Guarantees
 * - The target is not touched before outfile_commit. The data goes to a temporary file created
 *   with O_EXCL under a fresh name in the target's directory (".NAME.k3tmp-PID-N", hidden, on the
 *   same filesystem); commit flushes and fsyncs it, renames it over the target and fsyncs the
 *   directory. A reader sees the old file or the whole new one, never a part.
 * - Refused by outfile_open, before anything is created (the error says which and why):
 *   -EINVAL  the target is one of `inputs`: the same device and inode, however it is spelt
 *            ("./x.db", "dir/../x.db", a symbolic or hard link; "-" is standard input). A target
 *            that does not exist yet cannot be an input.
 *   -EINVAL  the target exists and is not a regular file (a directory, device node such as
 *            /dev/null, FIFO or socket: renaming over it would replace it), or it is a symbolic
 *            link to nothing.
 *   -EINVAL  another live outfile of this process writes the same target (-o x --csv x).
 *   -EEXIST  the target exists and `force` is false. There is no content sniffing: a k3sim trace
 *            database may hold a capture that cannot be made again, so replacing any existing
 *            file takes --force. (Report directories, below, are the one place where k3sim's own
 *            earlier files count as "ours".)
 *   -EBUSY   another process holds a lock on the target: an flock(2), or an SQLite connection's
 *            POSIX lock (a transaction in rollback-journal mode, any open connection in WAL mode,
 *            e.g. `BEGIN EXCLUSIVE` or a live `k3sim trace capture`). The message names its pid.
 *   -EMFILE  more than OUTFILE_MAX_LIVE outfiles live in this process.
 * - An existing target stays locked from open to commit or abort: flock(LOCK_EX) and SQLite's
 *   lock bytes (a write lock where the file is writable, else a read lock), so neither another
 *   k3sim nor an SQLite writer changes it under us.
 * - A target that is a symbolic link: the file it points to is replaced; the link stays. A new file
 *   gets mode 0666 less the umask; a replaced file keeps its permission bits.
 * - outfile_commit replaces only the file outfile_open checked: if another program replaced the
 *   target meanwhile (-ESTALE), or created it where there was none (-EEXIST), commit fails, removes
 *   the temporary and leaves that file alone.
 * - On SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE, and at exit(), every live temporary (with
 *   SQLite's -journal, -wal and -shm beside it when opts.sqlite) is unlinked, then the signal takes
 *   the course it had before (it is raised again: by default the process ends with it). Signals
 *   that were ignored stay ignored. Only SIGKILL (or a power cut) leaves a temporary behind: a
 *   hidden .NAME.k3tmp-* file beside an intact target.
 *
 * "Ours": single-file outputs are replaced only with force (see -EEXIST). A report directory
 * (outfile_dir_open) is ours when this run created it, when it was empty, or when it holds the
 * mark (OUTFILE_DIR_MARK) an earlier k3sim report left there: then the files k3sim writes in it
 * are replaced without --force, each atomically; files with other names are never touched.
 *
 * Ownership and lifetime: a struct outfile is the caller's (zero-initialized before its first
 * use); outfile_tmp_path and outfile_stream belong to it until commit or abort. Paths are at most
 * OUTFILE_PATH_MAX - 32 bytes. outfile_abort on a zeroed, failed, committed or aborted outfile does
 * nothing.
 *
 * Thread-safety: one outfile is used by one thread. Opening, committing and aborting may happen
 * in any thread; the registry the signal handler reads is lock-free.
 *
 * Library code: nothing here prints or exits. Every function returns 0 or a negative errno and
 * fills e (may be NULL) with the target's path and the reason. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"

enum {
	OUTFILE_PATH_MAX = 4096, /* bytes, with the NUL */
	OUTFILE_MAX_LIVE = 32,   /* outfiles open at once in one process */
};

/* The file a report directory holds when k3sim wrote it (outfile_dir_mark). */
#define OUTFILE_DIR_MARK ".k3sim-report"

struct outfile_opts {
	bool force;                /* replace an existing regular file */
	bool sqlite;               /* the temporary is an SQLite database: remove its side files too */
	const char *const *inputs; /* files this command reads; the output must be none of them */
	size_t n_inputs;
};

struct outfile {
	char path[OUTFILE_PATH_MAX];   /* the target as the caller spelt it (for messages) */
	char target[OUTFILE_PATH_MAX]; /* the file commit replaces: path, symbolic links resolved */
	char tmp[OUTFILE_PATH_MAX];    /* the temporary file */
	FILE *stream;                  /* outfile_stream's, or NULL */
	int fd;                        /* the temporary, open for writing (-1 once stream owns it) */
	int lock_fd;                   /* the existing target, locked; -1 when there was none */
	dev_t dev;                     /* the existing target's identity, checked again at commit */
	ino_t ino;
	bool existed;
	bool sqlite;
	bool open;
	int slot; /* in the signal handler's registry */
};

/* Check the target, lock it when it exists, and create the temporary. opts may be NULL (no force,
 * no inputs). On failure nothing exists that did not before, and *of is not open. */
int outfile_open(struct outfile *of, const char *path, const struct outfile_opts *opts,
		 struct err *e);

/* The checks of outfile_open alone (inputs, not a regular file, exists without force), creating
 * and locking nothing: for a file another program writes in place (gnuplot's images). */
int outfile_check(const char *path, const struct outfile_opts *opts, struct err *e);

/* The temporary file's path: hand it to SQLite (after outfile_open, the file exists and is
 * empty, which SQLite takes as a new database). Close every SQLite handle on it before commit. */
const char *outfile_tmp_path(const struct outfile *of);

/* A stdio stream on the temporary (made on the first call, the same one after). NULL on failure
 * (-ENOMEM in e). Do not fclose it: commit and abort do. */
FILE *outfile_stream(struct outfile *of, struct err *e);

/* Flush and fsync the temporary, rename it over the target, fsync the directory, unlock. On
 * failure the temporary is removed and the target is as it was. Either way *of is closed. */
int outfile_commit(struct outfile *of, struct err *e);

/* Remove the temporary (and its SQLite side files) and unlock; the target is as it was. */
void outfile_abort(struct outfile *of);

/* Where e names the temporary (an error from the code that wrote it), name the target instead:
 * users never see the temporary's name. */
void outfile_err_path(const struct outfile *of, struct err *e);

/* A report directory at path: created (mode 0777 less the umask) when missing; -EINVAL when path
 * exists and is not a directory. *ours (may be NULL): whether the files k3sim writes there may be
 * replaced without force (created now, empty, or holding OUTFILE_DIR_MARK). */
int outfile_dir_open(const char *path, bool *ours, struct err *e);

/* Write OUTFILE_DIR_MARK in dir (atomically) naming `what` wrote the directory, so that the next
 * run counts its files as ours. */
int outfile_dir_mark(const char *dir, const char *what, struct err *e);

#endif
