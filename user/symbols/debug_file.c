// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symbols/debug_file.h"
#include "symbols/elf_syms.h"
#include "symbols/safe_open.h"

#define CRC_CHUNK (256u << 10)

/* the CRC32 gdb's gnu_debuglink_crc32() computes: zlib's, over the whole file */
static int file_crc32(int fd, uint64_t size, uint32_t *crc)
{
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	uint8_t *buf;
	ssize_t n;
	int err = 0;

	buf = malloc(CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (off < size) {
		n = pread(fd, buf, size - off < CRC_CHUNK ? size - off : CRC_CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* a read error, or the file shrank under us */
			err = n < 0 ? -errno : -EINVAL;
			break;
		}
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*crc = (uint32_t)c;
	return err;
}

/*
 * Open, check and parse one candidate.
 * @crc: the CRC32 it must have, NULL when found by build id
 * @fd_out: NULL to want its symbols (then it must name functions); else
 *	receives the open file, and its symbols are only checked for the build id
 * Return: its symbols, or NULL: errno ENOMEM, or ENOENT for a candidate
 * missing or refused (counted in @res).
 */
static struct elf_syms *try_candidate(int root_fd, const char *path, const struct elf_syms *es,
				      const struct stat *self, const uint32_t *crc,
				      struct debug_file_result *res, int *fd_out)
{
	const char *id = elf_syms__build_id(es), *dbg_id;
	struct elf_syms *dbg;
	struct stat st;
	uint32_t c;
	int fd, err;

	fd = safe_open_in_root(root_fd, path, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd < 0)
		return errno = ENOENT, NULL;
	res->tried++;
	if (st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
		close(fd);
		res->unusable++;
		return errno = ENOENT, NULL;
	}
	if (crc) {
		err = file_crc32(fd, st.st_size, &c);
		if (err) {
			close(fd);
			if (err == -ENOMEM)
				return errno = ENOMEM, NULL;
			res->unusable++;
			return errno = ENOENT, NULL;
		}
		if (c != *crc) {
			close(fd);
			res->crc_bad++;
			return errno = ENOENT, NULL;
		}
	}
	dbg = elf_syms__open_fd(fd);
	err = dbg ? 0 : errno;
	if (err == ENOMEM) {
		close(fd);
		return errno = ENOMEM, NULL;
	}
	if (!dbg) {
		close(fd);
		res->unusable++;
		return errno = ENOENT, NULL;
	}
	dbg_id = elf_syms__build_id(dbg);
	if (id && (!dbg_id || strcmp(id, dbg_id))) {
		res->build_id_bad++;
		goto out_refuse;
	}
	if (fd_out) {
		*fd_out = fd;
		return dbg;
	}
	close(fd);
	if (!elf_syms__has_symtab(dbg) || !elf_syms__nr_symbols(dbg)) {
		res->unusable++;
		goto out_refuse_closed;
	}
	return dbg;

out_refuse:
	close(fd);
out_refuse_closed:
	elf_syms__free(dbg);
	return errno = ENOENT, NULL;
}

/* the search both entry points share; see try_candidate() for @fd_out */
static struct elf_syms *find(int root_fd, const char *path, const struct elf_syms *es,
			     const struct stat *self, struct debug_file_result *res, int *fd_out)
{
	const char *id = elf_syms__build_id(es), *link, *slash;
	char cand[PATH_MAX];
	struct elf_syms *dbg;
	uint32_t crc;
	int dir_len, i, n;

	memset(res, 0, sizeof(*res));
	if (id && strlen(id) > 2) {
		n = snprintf(cand, sizeof(cand), DEBUG_FILE_ROOT "/.build-id/%.2s/%s.debug", id,
			     id + 2);
		if (n > 0 && (size_t)n < sizeof(cand)) {
			dbg = try_candidate(root_fd, cand, es, self, NULL, res, fd_out);
			if (dbg || errno == ENOMEM) {
				res->by_build_id = dbg != NULL;
				return dbg;
			}
		}
	}
	link = elf_syms__debuglink(es, &crc);
	slash = path ? strrchr(path, '/') : NULL;
	if (!link || !slash || path[0] != '/')
		return errno = ENOENT, NULL;
	/* the directory without its last '/': "" for a file in "/" */
	dir_len = slash - path > INT_MAX ? INT_MAX : (int)(slash - path);
	for (i = 0; i < 3; i++) {
		static const char *const fmt[] = {"%.*s/%s", "%.*s/.debug/%s",
						  DEBUG_FILE_ROOT "%.*s/%s"};

		n = snprintf(cand, sizeof(cand), fmt[i], dir_len, path, link);
		if (n <= 0 || (size_t)n >= sizeof(cand))
			continue;
		dbg = try_candidate(root_fd, cand, es, self, &crc, res, fd_out);
		if (dbg || errno == ENOMEM)
			return dbg;
	}
	return errno = ENOENT, NULL;
}

struct elf_syms *debug_file__open(int root_fd, const char *path, const struct elf_syms *es,
				  const struct stat *self, struct debug_file_result *res)
{
	return find(root_fd, path, es, self, res, NULL);
}

int debug_file__open_fd(int root_fd, const char *path, const struct elf_syms *es,
			const struct stat *self, struct debug_file_result *res)
{
	struct elf_syms *dbg;
	int fd = -1;

	dbg = find(root_fd, path, es, self, res, &fd);
	if (!dbg)
		return -errno;
	elf_syms__free(dbg);
	return fd;
}
