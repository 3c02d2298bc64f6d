#ifndef K3_TRACE_INPUT_H
#define K3_TRACE_INPUT_H

/* Where trace bytes come from: a file, a pipe or standard input ("-"), or memory; gzip-compressed
 * or not (told by the content, not the name). The first bytes of the content can be looked at
 * (trace_input_peek) before anything is consumed, so a format can be sniffed on a pipe and the
 * reader still gets the whole stream.
 *
 * Memory: a fixed read buffer, the peek buffer and, for gzip, zlib's inflate state (about 300 KiB
 * in all), whatever the input size. Nothing is read ahead beyond TRACE_INPUT_BUF_BYTES.
 *
 * Errors: 0 or a negative errno; e says the input's name and why ("is a directory", "empty file",
 * "corrupt gzip data", a read error). Thread-safety: none; one input, one thread. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	TRACE_INPUT_BUF_BYTES = 256 * 1024,   /* raw (compressed) reads */
	TRACE_INPUT_PEEK_BYTES = 4096,        /* how much trace_input_peek shows at most */
};

enum trace_input_kind {
	TRACE_INPUT_FILE,        /* a regular file */
	TRACE_INPUT_STREAM,      /* a pipe, FIFO, terminal, socket or standard input */
	TRACE_INPUT_MEMORY,
};

struct trace_input {
	char name[256];          /* for messages: the path, "<stdin>" or the caller's name */
	char path[4096];         /* the path opened ("" for stdin and memory) */
	enum trace_input_kind kind;
	bool gzip;               /* the content is inflated on the way */
	int fd;                  /* -1 for memory */
	bool own_fd;
	const unsigned char *mem;
	size_t mem_len, mem_pos; /* memory source; also the raw bytes of a gzip memory source */
	unsigned char *raw;      /* TRACE_INPUT_BUF_BYTES raw bytes (files and pipes) */
	size_t raw_pos, raw_len;
	bool raw_eof;
	void *z;                 /* z_stream *, when gzip */
	bool z_end;              /* a gzip member ended; another may follow */
	unsigned char peek[TRACE_INPUT_PEEK_BYTES];
	size_t peek_pos, peek_len;   /* content bytes read ahead for peeking, not yet delivered */
	bool peeked;
	bool eof;
	int64_t raw_bytes;       /* bytes read from the source (compressed size for gzip) */
	int64_t bytes;           /* content bytes delivered */
};

/* Open path ("-": standard input). Refuses a directory ("is a directory") and anything that
 * cannot be read; a zstd- or xz-compressed input gets a clear error. On failure in holds nothing
 * to close. */
int trace_input_open(struct trace_input *in, const char *path, struct err *e);

/* Read from memory (not copied: data must outlive in). name is used in messages. Never fails
 * here; a bad gzip stream is reported by the first read. */
void trace_input_open_mem(struct trace_input *in, const char *name, const void *data, size_t len);

/* The first bytes of the content (decompressed), up to TRACE_INPUT_PEEK_BYTES, without consuming
 * them: *p and *n stay valid until the next read. Only before the first trace_input_read. */
int trace_input_peek(struct trace_input *in, const unsigned char **p, size_t *n, struct err *e);

/* Up to n content bytes into buf; *got = 0 only at the end of the content. */
int trace_input_read(struct trace_input *in, void *buf, size_t n, size_t *got, struct err *e);

/* For a plain (not compressed) memory input: the unread bytes, to be read in place. false
 * otherwise. */
bool trace_input_direct(const struct trace_input *in, const unsigned char **p, size_t *n);

void trace_input_close(struct trace_input *in);

#endif
