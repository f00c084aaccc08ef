// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "util/read_capped.h"

int read_capped(const char *path, size_t max, size_t chunk, char **text, size_t *len)
{
	size_t n = 0, cap = 0;
	char *buf = NULL;
	int fd, err;

	*text = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		/* one byte of room past the cap tells "exactly at cap" from "over" */
		if (n == cap) {
			size_t new_cap = cap ? cap * 2 : chunk;
			char *p;

			if (new_cap > max + 1)
				new_cap = max + 1;
			if (new_cap == cap) {
				err = -EFBIG;
				goto err_free;
			}
			p = realloc(buf, new_cap);
			if (!p) {
				err = -ENOMEM;
				goto err_free;
			}
			buf = p;
			cap = new_cap;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err_free;
		}
		if (r == 0)
			break;
		n += r;
	}
	if (n > max) {
		err = -EFBIG;
		goto err_free;
	}
	close(fd);
	*text = buf;
	*len = n;
	return 0;

err_free:
	free(buf);
	close(fd);
	return err;
}

ssize_t read_small(const char *path, void *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}
