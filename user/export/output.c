// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "export/output.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/errmsg.h"

/* zlib output buffer */
#define GZ_CHUNK ((size_t)64 << 10)
/* hex digits in a temporary file's name */
#define TMP_HEX	     16
#define TMP_NAME_LEN (sizeof(OUTPUT_TMP_PREFIX) - 1 + TMP_HEX + sizeof(OUTPUT_TMP_SUFFIX) - 1)

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

/* --- the file a path names */

/* the directory an output path ends in, open, and the name in it */
struct target {
	int dirfd; /* O_PATH; -1: none */
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
	struct stat dir_st;
	struct stat st; /* the name's, when it exists (exists) */
	bool exists;
};

static void target_close(struct target *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	t->dirfd = -1;
}

/* someone but us (or root) can add a name to the directory: plant a link */
static bool others_can_write(const struct stat *dir)
{
	return (dir->st_mode & (S_IWGRP | S_IWOTH)) ||
	       (dir->st_uid != 0 && dir->st_uid != geteuid());
}

/* @path split into its directory and last name, the directory opened */
static int target_split(struct target *t, const char *path, char *err, size_t err_len)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	int n;

	if (!slash)
		n = snprintf(t->dir, sizeof(t->dir), ".");
	else if (slash == path)
		n = snprintf(t->dir, sizeof(t->dir), "/");
	else
		n = snprintf(t->dir, sizeof(t->dir), "%.*s", (int)(slash - path), path);
	if (n < 0 || (size_t)n >= sizeof(t->dir) || strlen(name) >= sizeof(t->name)) {
		set_err(err, err_len, "the name is too long");
		return -ENAMETOOLONG;
	}
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		set_err(err, err_len, "it is a directory");
		return -EISDIR;
	}
	strcpy(t->name, name);
	t->dirfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0 || fstat(t->dirfd, &t->dir_st)) {
		n = -errno;
		set_err(err, err_len, "directory %s: %s", t->dir, strerror(errno));
		target_close(t);
		return n;
	}
	return 0;
}

/* what already has the name: only a regular file is ours to replace */
static int target_type(const struct target *t, char *err, size_t err_len)
{
	mode_t m = t->st.st_mode;

	if (S_ISREG(m)) {
		/* without CAP_FOWNER the rename would fail; with it we would
		 * replace a file another user put where we write */
		if ((t->dir_st.st_mode & S_ISVTX) && t->st.st_uid != geteuid()) {
			set_err(err, err_len,
				"it is a file of another user (uid %u) in the sticky directory %s",
				(unsigned int)t->st.st_uid, t->dir);
			return -EPERM;
		}
		return 0;
	}
	if (S_ISDIR(m)) {
		set_err(err, err_len, "it is a directory");
		return -EISDIR;
	}
	set_err(err, err_len,
		"it is a %s: profiles go to regular files (\"-\" for standard output)",
		S_ISFIFO(m)   ? "FIFO"
		: S_ISSOCK(m) ? "socket"
			      : "device");
	return -EINVAL;
}

/*
 * Open the directory @path ends in and look at its name, following the
 * symbolic links that only we or root could have made.  Return: 0 with @t
 * open (target_close()), or -errno with a reason in @err.
 */
static int target_open(struct target *t, const char *path, char *err, size_t err_len)
{
	char cur[PATH_MAX], link[PATH_MAX];
	ssize_t len;
	int hops, e, n;

	t->dirfd = -1;
	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur)) {
		set_err(err, err_len, "the name is too long");
		return -ENAMETOOLONG;
	}
	for (hops = 0;; hops++) {
		e = target_split(t, cur, err, err_len);
		if (e)
			return e;
		t->exists = !fstatat(t->dirfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW);
		if (!t->exists && errno != ENOENT) {
			e = -errno;
			set_err(err, err_len, "%s", strerror(errno));
			goto err_close;
		}
		if (!t->exists)
			return 0;
		if (!S_ISLNK(t->st.st_mode)) {
			e = target_type(t, err, err_len);
			if (e)
				goto err_close;
			return 0;
		}
		if (others_can_write(&t->dir_st)) {
			set_err(err, err_len,
				"it is a symbolic link in %s, a directory other users can write "
				"to: "
				"not followed",
				t->dir);
			e = -ELOOP;
			goto err_close;
		}
		len = hops < OUTPUT_MAX_LINKS
			      ? readlinkat(t->dirfd, t->name, link, sizeof(link) - 1)
			      : -1;
		if (len < 0) {
			set_err(err, err_len, "%s",
				hops < OUTPUT_MAX_LINKS ? strerror(errno)
							: "too many symbolic links");
			e = hops < OUTPUT_MAX_LINKS ? -errno : -ELOOP;
			goto err_close;
		}
		link[len] = '\0';
		n = link[0] == '/' ? snprintf(cur, sizeof(cur), "%s", link)
				   : snprintf(cur, sizeof(cur), "%s/%s", t->dir, link);
		target_close(t);
		if (n < 0 || (size_t)n >= sizeof(cur)) {
			set_err(err, err_len, "the name is too long");
			return -ENAMETOOLONG;
		}
	}

err_close:
	target_close(t);
	return e;
}

/* --- temporary files */

static bool is_temp_name(const char *name)
{
	size_t pre = sizeof(OUTPUT_TMP_PREFIX) - 1;

	if (strlen(name) != TMP_NAME_LEN || strncmp(name, OUTPUT_TMP_PREFIX, pre) ||
	    strcmp(name + pre + TMP_HEX, OUTPUT_TMP_SUFFIX))
		return false;
	for (size_t i = pre; i < pre + TMP_HEX; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

/*
 * A new temporary file in @dirfd, named into @name[TMP_NAME_LEN + 1] and
 * locked: output_clean_temps() leaves a file a live writer holds.
 * Return: the descriptor, or -errno.
 */
static int temp_create(int dirfd, char *name)
{
	uint64_t r;
	int fd, i;

	for (i = 0; i < 100; i++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = mono_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ i;
		snprintf(name, TMP_NAME_LEN + 1, "%s%016llx%s", OUTPUT_TMP_PREFIX,
			 (unsigned long long)r, OUTPUT_TMP_SUFFIX);
		/* read and write: a failed write reads back what it wrote (output_keep) */
		fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			flock(fd, LOCK_EX | LOCK_NB);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* @name in @dirfd, if it is a stale temporary file of ours: removed */
static bool clean_temp(int dirfd, const char *name)
{
	struct stat st, again;
	bool removed = false;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid())
		return false;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* the same file, and no writer holds it; still the one by that name */
	if (!fstat(fd, &again) && again.st_ino == st.st_ino && again.st_dev == st.st_dev &&
	    !flock(fd, LOCK_EX | LOCK_NB) && !fstatat(dirfd, name, &again, AT_SYMLINK_NOFOLLOW) &&
	    again.st_ino == st.st_ino && again.st_dev == st.st_dev)
		removed = !unlinkat(dirfd, name, 0);
	close(fd);
	return removed;
}

int output_clean_temps(const char *path, bool is_dir, unsigned int *removed)
{
	struct target t = {.dirfd = -1};
	struct dirent *de;
	DIR *d;
	int fd;

	*removed = 0;
	if (!is_dir && is_stdout(path))
		return 0;
	if (is_dir) {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		fd = target_open(&t, path, NULL, 0);
		if (fd)
			return fd;
		fd = openat(t.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		target_close(&t);
	}
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (is_temp_name(de->d_name) && clean_temp(dirfd(d), de->d_name))
			(*removed)++;
	closedir(d);
	return 0;
}

/* --- checks */

/* a file can be created in @t's directory: the one sure test is making one */
static int dir_writable(int dirfd, const char *dir, char *err, size_t err_len)
{
	char name[TMP_NAME_LEN + 1];
	int fd = temp_create(dirfd, name);

	if (fd < 0) {
		set_err(err, err_len, "cannot create files in %s: %s", dir, strerror(-fd));
		return fd;
	}
	unlinkat(dirfd, name, 0);
	close(fd);
	return 0;
}

/* a regular file rename() cannot replace: immutable or append-only */
static int file_replaceable(const struct target *t, char *err, size_t err_len)
{
	struct stat st;
	int fd, flags = 0, e = 0;

	fd = openat(t->dirfd, t->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* unreadable is not unreplaceable: the rename decides */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !ioctl(fd, FS_IOC_GETFLAGS, &flags) &&
	    (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		set_err(err, err_len, "it is %s (chattr)",
			flags & FS_IMMUTABLE_FL ? "immutable" : "append-only");
		e = -EPERM;
	}
	close(fd);
	return e;
}

int output_check(const char *path, char *err, size_t err_len)
{
	struct target t;
	int e;

	if (!path || !*path) {
		set_err(err, err_len, "no file name");
		return -EINVAL;
	}
	if (is_stdout(path)) {
		if (isatty(STDOUT_FILENO)) {
			set_err(err, err_len,
				"standard output is a terminal: redirect it, or name a file");
			return -ENOTTY;
		}
		return 0;
	}
	e = target_open(&t, path, err, err_len);
	if (e)
		return e;
	e = t.exists ? file_replaceable(&t, err, err_len) : 0;
	if (!e)
		e = dir_writable(t.dirfd, t.dir, err, err_len);
	target_close(&t);
	return e;
}

int output_dir_check(const char *dir, char *err, size_t err_len)
{
	struct stat st;
	int fd, e;

	fd = open(dir, O_PATH | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		e = -errno;
		set_err(err, err_len, "directory %s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return e;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, err_len, "%s is not a directory", dir);
		close(fd);
		return -ENOTDIR;
	}
	e = dir_writable(fd, dir, err, err_len);
	close(fd);
	return e;
}

/* --- writing */

struct output_sink {
	int fd;			  /* the file being written; -1: memory */
	uint64_t written;	  /* bytes written to it */
	struct output_keep *keep; /* NULL, or where a failed write falls back to */
	uint8_t *mem;		  /* the document, once in memory */
	size_t len, cap;
	int err; /* why it went to memory */
};

/* write @len bytes to @fd; on a non-blocking one that is full, wait at most OUTPUT_STALL_MS */
static int write_all(int fd, const void *buf, size_t len)
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

static int sink_mem_append(struct output_sink *s, const void *buf, size_t len)
{
	if (len > s->keep->max - s->len)
		return -EFBIG;
	if (array_grow((void **)&s->mem, &s->cap, s->len + len, 1, 64 << 10))
		return -ENOMEM;
	memcpy(s->mem + s->len, buf, len);
	s->len += len;
	return 0;
}

/*
 * The file's write failed (@err): what it holds so far is read back into
 * memory, where the rest will go.  Return: 0, or -errno when it cannot be
 * kept.
 */
static int sink_to_memory(struct output_sink *s, int err)
{
	ssize_t n;

	s->err = err;
	if (!s->keep || !s->keep->max || s->written > s->keep->max)
		return -EFBIG;
	if (array_grow((void **)&s->mem, &s->cap, s->written ? s->written : 1, 1, 64 << 10))
		return -ENOMEM;
	while (s->len < s->written) {
		n = pread(s->fd, s->mem + s->len, s->written - s->len, (off_t)s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		s->len += n;
	}
	s->fd = -1;
	return 0;
}

int output_sink__write(struct output_sink *s, const void *buf, size_t len)
{
	int err;

	if (s->fd >= 0) {
		err = write_all(s->fd, buf, len);
		if (!err) {
			s->written += len;
			return 0;
		}
		/* the file is lost; the document may still be kept */
		if (sink_to_memory(s, err))
			return err;
	}
	return sink_mem_append(s, buf, len) ? s->err : 0;
}

/* the document into memory, when the file could not even be made (@err) */
static int fill_memory(struct output_sink *s, int err, int (*fill)(void *, struct output_sink *),
		       void *ctx)
{
	s->fd = -1;
	s->err = err;
	if (s->keep && s->keep->max && !fill(ctx, s))
		return err;
	free(s->mem);
	s->mem = NULL;
	return err;
}

int output_write(const char *path, int (*fill)(void *ctx, struct output_sink *s), void *ctx,
		 struct output_keep *keep)
{
	struct output_sink s = {.fd = -1, .keep = keep};
	char tmp[TMP_NAME_LEN + 1];
	struct target t;
	int fd, err;

	if (keep) {
		keep->buf = NULL;
		keep->len = 0;
	}
	if (is_stdout(path)) {
		s.fd = STDOUT_FILENO;
		s.keep = NULL;
		return fill(ctx, &s);
	}
	err = target_open(&t, path, NULL, 0);
	if (err) {
		fill_memory(&s, err, fill, ctx);
		goto out;
	}
	fd = temp_create(t.dirfd, tmp);
	if (fd < 0) {
		err = fill_memory(&s, fd, fill, ctx);
		goto out;
	}
	s.fd = fd;
	err = fill(ctx, &s);
	if (err) {
		/* a failed fill is no document to keep */
		free(s.mem);
		s.mem = NULL;
	} else if (s.err) {
		/* the file failed, the document went on in memory */
		err = s.err;
	} else if (renameat(t.dirfd, tmp, t.dirfd, t.name)) {
		err = -errno;
		if (sink_to_memory(&s, err)) {
			free(s.mem);
			s.mem = NULL;
		}
	}
	if (err)
		unlinkat(t.dirfd, tmp, 0);
	if (close(fd) && !err)
		err = -errno;
out:
	target_close(&t);
	if (err && keep && s.mem) {
		keep->buf = s.mem;
		keep->len = s.len;
	} else {
		free(s.mem);
	}
	return err;
}

int output_to_memory(int (*fill)(void *ctx, struct output_sink *s), void *ctx, size_t max,
		     uint8_t **buf, size_t *len)
{
	struct output_keep keep = {.max = max};
	struct output_sink s = {.fd = -1, .keep = &keep};
	int err;

	*buf = NULL;
	*len = 0;
	err = fill(ctx, &s);
	if (err) {
		free(s.mem);
		return err;
	}
	*buf = s.mem;
	*len = s.len;
	return 0;
}

struct output_stream {
	struct output_sink *sink;
	bool gz;
	z_stream zs;
	uint8_t *out;
	int err;
};

struct output_stream *output_stream__open(struct output_sink *s, bool gz)
{
	struct output_stream *o = calloc(1, sizeof(*o));
	int ret;

	if (!o)
		return NULL;
	o->sink = s;
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
		o->err = output_sink__write(o->sink, o->out, GZ_CHUNK - o->zs.avail_out);
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
		return o->err ? o->err : (o->err = output_sink__write(o->sink, buf, len));
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

int output_write_gz(struct output_sink *s, const void *buf, size_t len)
{
	struct output_stream *o = output_stream__open(s, true);
	int err;

	if (!o)
		return -ENOMEM;
	err = output_stream__write(o, buf, len);
	err = output_stream__close(o) ?: err;
	return err;
}
