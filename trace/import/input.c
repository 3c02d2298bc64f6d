#include "trace/import/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

static void set_name(struct trace_input *in, const char *name)
{
	snprintf(in->name, sizeof in->name, "%s", name ? name : "");
}

static void reset(struct trace_input *in)
{
	memset(in, 0, offsetof(struct trace_input, peek));
	in->fd = -1;
	in->peek_pos = in->peek_len = 0;
	in->peeked = false;
	in->eof = false;
	in->raw_bytes = in->bytes = 0;
}

/* Magic numbers of compressed formats we do not read, with the command that unpacks them. */
static int refuse_compressed(const struct trace_input *in, const unsigned char *p, size_t n,
			     struct err *e)
{
	static const struct {
		unsigned char magic[6];
		size_t len;
		const char *what, *unpack;
	} kinds[] = {
		{{0x28, 0xb5, 0x2f, 0xfd}, 4, "zstd", "zstd -dc"},
		{{0xfd, '7', 'z', 'X', 'Z', 0}, 6, "xz", "xz -dc"},
		{{'B', 'Z', 'h'}, 3, "bzip2", "bzip2 -dc"},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (n >= kinds[i].len && memcmp(p, kinds[i].magic, kinds[i].len) == 0) {
			err_set(e, in ? in->name : NULL, 0, 0,
				"%s-compressed input: unpack it on the way (%s FILE | k3sim trace"
				" import - ...); gzip is read directly",
				kinds[i].what, kinds[i].unpack);
			return -EINVAL;
		}
	return 0;
}

/* Refill the raw buffer of a file or pipe; raw_eof at the end. */
static int fill_raw(struct trace_input *in, struct err *e)
{
	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	for (;;) {
		ssize_t r = read(in->fd, in->raw, TRACE_INPUT_BUF_BYTES);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;
			err_set(e, in->name, 0, 0, "read failed: %s", strerror(errno));
			return rc;
		}
		in->raw_pos = 0;
		in->raw_len = (size_t)r;
		in->raw_bytes += r;
		if (r == 0)
			in->raw_eof = true;
		return 0;
	}
}

static int start_gzip(struct trace_input *in, struct err *e)
{
	z_stream *z = calloc(1, sizeof *z);
	if (!z) {
		err_set(e, in->name, 0, 0, "out of memory");
		return -ENOMEM;
	}
	if (inflateInit2(z, 15 + 32) != Z_OK) { /* +32: gzip or zlib header */
		free(z);
		err_set(e, in->name, 0, 0, "cannot start gzip decompression");
		return -ENOMEM;
	}
	if (in->kind == TRACE_INPUT_MEMORY) {
		z->next_in = (Bytef *)(uintptr_t)in->mem;
		z->avail_in = in->mem_len > UINT32_MAX ? UINT32_MAX : (uInt)in->mem_len;
		in->mem_pos = z->avail_in;
		in->raw_bytes = (int64_t)in->mem_pos;
	}
	in->z = z;
	in->gzip = true;
	return 0;
}

int trace_input_open(struct trace_input *in, const char *path, struct err *e)
{
	reset(in);
	bool std_in = strcmp(path, "-") == 0;
	set_name(in, std_in ? "<stdin>" : path);
	int fd = std_in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int rc = -errno;
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		return rc;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int rc = -errno;
		err_set(e, in->name, 0, 0, "cannot open: %s", strerror(errno));
		if (!std_in)
			close(fd);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		err_set(e, in->name, 0, 0, "is a directory, not a trace file");
		if (!std_in)
			close(fd);
		return -EISDIR;
	}
	in->fd = fd;
	in->own_fd = !std_in;
	in->kind = S_ISREG(st.st_mode) && !std_in ? TRACE_INPUT_FILE : TRACE_INPUT_STREAM;
	if (!std_in)
		snprintf(in->path, sizeof in->path, "%s", path);
	in->raw = malloc(TRACE_INPUT_BUF_BYTES);
	if (!in->raw) {
		trace_input_close(in);
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	/* the first raw bytes tell gzip (and the formats we refuse) from plain content */
	int rc = fill_raw(in, e);
	if (!rc && in->raw_len < 6 && !in->raw_eof) {
		/* a pipe may deliver a few bytes at a time: gather enough to see a magic number */
		while (!rc && in->raw_len < 6 && !in->raw_eof) {
			ssize_t r = read(in->fd, in->raw + in->raw_len, TRACE_INPUT_BUF_BYTES - in->raw_len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = -errno;
				err_set(e, in->name, 0, 0, "read failed: %s", strerror(errno));
			} else if (r == 0) {
				in->raw_eof = true;
			} else {
				in->raw_len += (size_t)r;
				in->raw_bytes += r;
			}
		}
	}
	if (!rc)
		rc = refuse_compressed(in, in->raw, in->raw_len, e);
	if (!rc && in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b)
		rc = start_gzip(in, e);
	if (rc)
		trace_input_close(in);
	return rc;
}

void trace_input_open_mem(struct trace_input *in, const char *name, const void *data, size_t len)
{
	reset(in);
	set_name(in, name);
	in->kind = TRACE_INPUT_MEMORY;
	in->mem = data;
	in->mem_len = len;
}

/* Memory inputs decide on gzip at the first look (open_mem cannot fail). */
static int start_mem(struct trace_input *in, struct err *e)
{
	if (in->kind != TRACE_INPUT_MEMORY || in->peeked || in->gzip || in->mem_pos)
		return 0;
	int rc = refuse_compressed(in, in->mem, in->mem_len, e);
	if (!rc && in->mem_len >= 2 && in->mem[0] == 0x1f && in->mem[1] == 0x8b)
		rc = start_gzip(in, e);
	return rc;
}

static int inflate_some(struct trace_input *in, unsigned char *buf, size_t n, size_t *got,
			struct err *e)
{
	z_stream *z = in->z;
	*got = 0;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	z->next_out = buf;
	z->avail_out = (uInt)n;
	while (z->avail_out == n) {
		if (z->avail_in == 0 && in->kind != TRACE_INPUT_MEMORY) {
			int rc = fill_raw(in, e);
			if (rc)
				return rc;
			z->next_in = in->raw + in->raw_pos;
			z->avail_in = (uInt)(in->raw_len - in->raw_pos);
			in->raw_pos = in->raw_len;
		} else if (z->avail_in == 0 && in->mem_pos < in->mem_len) {
			size_t left = in->mem_len - in->mem_pos;
			z->next_in = (Bytef *)(uintptr_t)(in->mem + in->mem_pos);
			z->avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
			in->mem_pos += z->avail_in;
			in->raw_bytes += z->avail_in;
		}
		if (z->avail_in == 0) {
			if (in->z_end) {
				in->eof = true;
				break;
			}
			err_set(e, in->name, 0, 0, "truncated gzip data (%lld bytes in, %lld out)",
				(long long)in->raw_bytes, (long long)(in->bytes + (int64_t)(n - z->avail_out)));
			return -EINVAL;
		}
		if (in->z_end) {
			/* another gzip member follows (concatenated .gz files are one stream) */
			inflateReset(z);
			in->z_end = false;
		}
		int r = inflate(z, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			in->z_end = true;
		} else if (r != Z_OK && r != Z_BUF_ERROR) {
			err_set(e, in->name, 0, 0, "corrupt gzip data after %lld compressed bytes: %s",
				(long long)in->raw_bytes, z->msg ? z->msg : "inflate failed");
			return -EINVAL;
		}
	}
	*got = n - z->avail_out;
	return 0;
}

/* Content bytes, bypassing the peek buffer. */
static int read_content(struct trace_input *in, unsigned char *buf, size_t n, size_t *got,
			struct err *e)
{
	*got = 0;
	if (in->eof || n == 0)
		return 0;
	if (in->gzip)
		return inflate_some(in, buf, n, got, e);
	if (in->kind == TRACE_INPUT_MEMORY) {
		size_t left = in->mem_len - in->mem_pos;
		size_t k = left < n ? left : n;
		memcpy(buf, in->mem + in->mem_pos, k);
		in->mem_pos += k;
		in->raw_bytes += (int64_t)k;
		*got = k;
		if (!k)
			in->eof = true;
		return 0;
	}
	if (in->raw_pos == in->raw_len && !in->raw_eof && n >= TRACE_INPUT_BUF_BYTES / 2) {
		/* a large read goes straight into the caller's buffer */
		for (;;) {
			ssize_t r = read(in->fd, buf, n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				int rc = -errno;
				err_set(e, in->name, 0, 0, "read failed: %s", strerror(errno));
				return rc;
			}
			in->raw_bytes += r;
			if (r == 0)
				in->raw_eof = in->eof = true;
			*got = (size_t)r;
			return 0;
		}
	}
	int rc = fill_raw(in, e);
	if (rc)
		return rc;
	size_t left = in->raw_len - in->raw_pos;
	if (!left) {
		in->eof = true;
		return 0;
	}
	size_t k = left < n ? left : n;
	memcpy(buf, in->raw + in->raw_pos, k);
	in->raw_pos += k;
	*got = k;
	return 0;
}

int trace_input_peek(struct trace_input *in, const unsigned char **p, size_t *n, struct err *e)
{
	int rc = start_mem(in, e);
	if (rc)
		return rc;
	if (in->kind == TRACE_INPUT_MEMORY && !in->gzip) {
		size_t left = in->mem_len - in->mem_pos;
		*p = in->mem + in->mem_pos;
		*n = left < TRACE_INPUT_PEEK_BYTES ? left : TRACE_INPUT_PEEK_BYTES;
		return 0;
	}
	if (!in->peeked) {
		in->peeked = true;
		while (in->peek_len < sizeof in->peek) {
			size_t got;
			rc = read_content(in, in->peek + in->peek_len, sizeof in->peek - in->peek_len,
					  &got, e);
			if (rc)
				return rc;
			if (!got)
				break;
			in->peek_len += got;
		}
	}
	*p = in->peek + in->peek_pos;
	*n = in->peek_len - in->peek_pos;
	return 0;
}

int trace_input_read(struct trace_input *in, void *buf, size_t n, size_t *got, struct err *e)
{
	int rc = start_mem(in, e);
	if (rc)
		return rc;
	if (in->peek_pos < in->peek_len) {
		size_t left = in->peek_len - in->peek_pos;
		size_t k = left < n ? left : n;
		memcpy(buf, in->peek + in->peek_pos, k);
		in->peek_pos += k;
		in->bytes += (int64_t)k;
		*got = k;
		return 0;
	}
	rc = read_content(in, buf, n, got, e);
	if (!rc)
		in->bytes += (int64_t)*got;
	return rc;
}

bool trace_input_direct(const struct trace_input *in, const unsigned char **p, size_t *n)
{
	if (in->kind != TRACE_INPUT_MEMORY || in->gzip || in->peek_len)
		return false;
	if (in->mem_pos == 0 && in->mem_len >= 2 &&
	    ((in->mem[0] == 0x1f && in->mem[1] == 0x8b) || refuse_compressed(NULL, in->mem, in->mem_len, NULL)))
		return false; /* compressed: through trace_input_read, which inflates or says why */
	*p = in->mem + in->mem_pos;
	*n = in->mem_len - in->mem_pos;
	return true;
}

void trace_input_close(struct trace_input *in)
{
	if (in->z) {
		inflateEnd(in->z);
		free(in->z);
		in->z = NULL;
	}
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->own_fd = false;
	free(in->raw);
	in->raw = NULL;
}
