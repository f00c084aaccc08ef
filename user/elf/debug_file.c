// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/debug_file.h"
#include "elf/elf_file.h"
#include "elf/safe_open.h"

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
 * Open and check one candidate.
 * @crc: the CRC32 it must have, NULL when found by build id
 * Return: the candidate, or NULL: errno ENOMEM, or ENOENT for a candidate
 * missing or refused (counted in @res).
 */
static struct elf_file *try_candidate(int root_fd, const char *path,
				      const struct debug_file_key *key, const struct stat *self,
				      const uint32_t *crc, debug_file_usable_fn usable, void *ctx,
				      struct debug_file_result *res)
{
	const uint8_t *id;
	struct elf_file *cand;
	struct stat st;
	size_t id_len;
	uint32_t c;
	int fd, err;

	fd = safe_open_in_root(root_fd, path, ELF_FILE_MAX_SIZE, &st);
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
		if (err == -ENOMEM) {
			close(fd);
			return errno = ENOMEM, NULL;
		}
		if (err || c != *crc) {
			close(fd);
			if (err)
				res->unusable++;
			else
				res->crc_bad++;
			return errno = ENOENT, NULL;
		}
	}
	cand = elf_file__open_fd(fd);
	err = cand ? 0 : errno;
	close(fd);
	if (err == ENOMEM)
		return errno = ENOMEM, NULL;
	if (!cand) {
		res->unusable++;
		return errno = ENOENT, NULL;
	}
	id = elf_file__build_id(cand, &id_len);
	if (key->build_id &&
	    (!id || id_len != key->build_id_len || memcmp(id, key->build_id, id_len))) {
		res->build_id_bad++;
		goto out_refuse;
	}
	err = usable ? usable(cand, ctx) : 1;
	if (err == 1)
		return cand;
	if (err < 0) {
		elf_file__free(cand);
		return errno = -err, NULL;
	}
	res->unusable++;
out_refuse:
	elf_file__free(cand);
	return errno = ENOENT, NULL;
}

struct elf_file *debug_file__open(int root_fd, const char *path, const struct debug_file_key *key,
				  const struct stat *self, debug_file_usable_fn usable, void *ctx,
				  struct debug_file_result *res)
{
	char cand[PATH_MAX], hex[ELF_FILE_BUILD_ID_HEX];
	struct elf_file *dbg;
	const char *slash;
	int dir_len, i, n;

	memset(res, 0, sizeof(*res));
	if (key->build_id && key->build_id_len > 1) {
		elf_build_id__hex(key->build_id, key->build_id_len, hex);
		n = snprintf(cand, sizeof(cand), DEBUG_FILE_ROOT "/.build-id/%.2s/%s.debug", hex,
			     hex + 2);
		if (n > 0 && (size_t)n < sizeof(cand)) {
			dbg = try_candidate(root_fd, cand, key, self, NULL, usable, ctx, res);
			if (dbg || errno == ENOMEM) {
				res->by_build_id = dbg != NULL;
				return dbg;
			}
		}
	}
	slash = path ? strrchr(path, '/') : NULL;
	if (!key->debuglink || !slash || path[0] != '/')
		return errno = ENOENT, NULL;
	/* the directory without its last '/': "" for a file in "/" */
	dir_len = slash - path > INT_MAX ? INT_MAX : (int)(slash - path);
	for (i = 0; i < 3; i++) {
		static const char *const fmt[] = {"%.*s/%s", "%.*s/.debug/%s",
						  DEBUG_FILE_ROOT "%.*s/%s"};

		n = snprintf(cand, sizeof(cand), fmt[i], dir_len, path, key->debuglink);
		if (n <= 0 || (size_t)n >= sizeof(cand))
			continue;
		dbg = try_candidate(root_fd, cand, key, self, &key->crc, usable, ctx, res);
		if (dbg || errno == ENOMEM)
			return dbg;
	}
	return errno = ENOENT, NULL;
}
