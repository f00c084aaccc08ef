// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "export/output.h"
#include "util/errmsg.h"

/* zlib output buffer */
#define GZ_CHUNK ((size_t)64 << 10)

enum target {
	TARGET_FILE,   /* a regular file, replaced by rename */
	TARGET_STDOUT, /* "-" */
	TARGET_STREAM, /* a character device or a FIFO, written in place */
};

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

/* the directory part of @path ("." when none) */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* a file can be created in @dir: the one sure test is making one */
static int dir_writable(const char *dir, char *err, size_t err_len)
{
	char probe[4200];
	struct stat st;
	int fd;

	if (stat(dir, &st)) {
		set_err(err, err_len, "directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, err_len, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	snprintf(probe, sizeof(probe), "%s/.ctxprof-probe.XXXXXX", dir);
	fd = mkostemp(probe, O_CLOEXEC);
	if (fd < 0) {
		set_err(err, err_len, "cannot create files in %s: %s", dir, strerror(errno));
		return -errno;
	}
	close(fd);
	unlink(probe);
	return 0;
}

/* a regular file rename() cannot replace: immutable or append-only */
static int file_replaceable(const char *path, char *err, size_t err_len)
{
	int fd, flags = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0; /* unreadable is not unreplaceable: the rename decides */
	if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		close(fd);
		set_err(err, err_len, "it is %s (chattr)",
			flags & FS_IMMUTABLE_FL ? "immutable" : "append-only");
		return -EPERM;
	}
	close(fd);
	return 0;
}

static int classify(const char *path, enum target *t, char *err, size_t err_len)
{
	struct stat st;

	if (!path || !*path) {
		set_err(err, err_len, "no file name");
		return -EINVAL;
	}
	if (is_stdout(path)) {
		*t = TARGET_STDOUT;
		return 0;
	}
	if (!stat(path, &st)) {
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
			*t = TARGET_STREAM;
			return 0;
		}
		if (S_ISDIR(st.st_mode)) {
			set_err(err, err_len, "it is a directory");
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) {
			set_err(err, err_len,
				"it is not a regular file, a character device or a FIFO");
			return -EINVAL;
		}
	} else if (errno != ENOENT) {
		set_err(err, err_len, "%s", strerror(errno));
		return -errno;
	}
	*t = TARGET_FILE;
	return 0;
}

int output_check(const char *path, char *err, size_t err_len)
{
	enum target t;
	char dir[4096];
	int e;

	e = classify(path, &t, err, err_len);
	if (e)
		return e;
	switch (t) {
	case TARGET_STDOUT:
		if (isatty(STDOUT_FILENO)) {
			set_err(err, err_len,
				"standard output is a terminal: redirect it, or name a file");
			return -ENOTTY;
		}
		return 0;
	case TARGET_STREAM:
		return 0;
	case TARGET_FILE:
		break;
	}
	e = file_replaceable(path, err, err_len);
	if (e)
		return e;
	dir_of(path, dir, sizeof(dir));
	return dir_writable(dir, err, err_len);
}

int output_dir_check(const char *dir, char *err, size_t err_len)
{
	return dir_writable(dir, err, err_len);
}

int output_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	ssize_t n;
	int r;

	while (len) {
		n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		r = poll(&pfd, 1, OUTPUT_STALL_MS);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

/* a device or a FIFO, in place: a FIFO without a reader is an error, not a wait */
static int write_stream(const char *path, int (*fill)(void *ctx, int fd), void *ctx)
{
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENXIO ? -EPIPE : -errno;
	err = fill(ctx, fd);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* "dir/.name.XXXXXX" then rename: atomic, and hidden from profile globs */
static int write_file(const char *path, int (*fill)(void *ctx, int fd), void *ctx)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
	char *tmp;
	int fd, err;

	tmp = malloc(strlen(path) + sizeof(".") + sizeof(".XXXXXX"));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, path, dir_len);
	sprintf(tmp + dir_len, ".%s.XXXXXX", path + dir_len);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = fill(ctx, fd);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out_free:
	free(tmp);
	return err;
}

int output_write(const char *path, int (*fill)(void *ctx, int fd), void *ctx)
{
	enum target t;
	char why[160];
	int err;

	err = classify(path, &t, why, sizeof(why));
	if (err)
		return err;
	switch (t) {
	case TARGET_STDOUT:
		return fill(ctx, STDOUT_FILENO);
	case TARGET_STREAM:
		return write_stream(path, fill, ctx);
	default:
		return write_file(path, fill, ctx);
	}
}

struct output_stream {
	int fd;
	bool gz;
	z_stream zs;
	uint8_t *out;
	int err;
};

struct output_stream *output_stream__open(int fd, bool gz)
{
	struct output_stream *o = calloc(1, sizeof(*o));
	int ret;

	if (!o)
		return NULL;
	o->fd = fd;
	o->gz = gz;
	if (!gz)
		return o;
	o->out = malloc(GZ_CHUNK);
	/* windowBits 15 + 16 asks zlib for a gzip header and trailer */
	ret = o->out ? deflateInit2(&o->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
				    Z_DEFAULT_STRATEGY)
		     : Z_MEM_ERROR;
	if (ret != Z_OK) {
		free(o->out);
		free(o);
		return NULL;
	}
	return o;
}

/* run deflate over what it holds with @flush, writing its output */
static int stream_deflate(struct output_stream *o, int flush)
{
	int ret;

	do {
		o->zs.next_out = o->out;
		o->zs.avail_out = GZ_CHUNK;
		ret = deflate(&o->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return -EINVAL;
		o->err = output_write_all(o->fd, o->out, GZ_CHUNK - o->zs.avail_out);
		if (o->err)
			return o->err;
	} while (o->zs.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

int output_stream__write(struct output_stream *o, const void *buf, size_t len)
{
	const uint8_t *data = buf;
	size_t chunk;

	if (o->err || !o->gz)
		return o->err ? o->err : (o->err = output_write_all(o->fd, buf, len));
	while (len && !o->err) {
		/* avail_in is a uInt: feed large inputs in pieces */
		chunk = len < (1U << 30) ? len : (1U << 30);
		o->zs.next_in = (Bytef *)data;
		o->zs.avail_in = (uInt)chunk;
		data += chunk;
		len -= chunk;
		o->err = stream_deflate(o, Z_NO_FLUSH);
	}
	return o->err;
}

int output_stream__close(struct output_stream *o)
{
	int err = o->err;

	if (o->gz) {
		if (!err)
			err = stream_deflate(o, Z_FINISH);
		deflateEnd(&o->zs);
		free(o->out);
	}
	free(o);
	return err;
}

int output_write_gz(int fd, const void *buf, size_t len)
{
	struct output_stream *o = output_stream__open(fd, true);
	int err;

	if (!o)
		return -ENOMEM;
	err = output_stream__write(o, buf, len);
	err = output_stream__close(o) ?: err;
	return err;
}
