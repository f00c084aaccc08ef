// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include "util/xz.h"

#define XZ_FIRST_OUT (64u << 10)

static int xz_err(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return -ENOMEM;
	case LZMA_MEMLIMIT_ERROR:
		return -EFBIG;
	default:
		return -EINVAL;
	}
}

int xz_decompress(const void *in, size_t len, size_t max_out, void **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0, limit;
	uint8_t *buf = NULL;
	lzma_ret ret;
	int err;

	*out = NULL;
	*out_len = 0;
	if (!in || max_out >= SIZE_MAX)
		return -EINVAL;
	/* one byte of room past the cap tells "exactly at the cap" from "over" */
	limit = max_out + 1;
	ret = lzma_stream_decoder(&strm, XZ_MEMLIMIT, 0);
	if (ret != LZMA_OK)
		return xz_err(ret);
	strm.next_in = in;
	strm.avail_in = len;
	for (;;) {
		if (strm.avail_out == 0) {
			size_t new_cap = cap ? cap * 2 : XZ_FIRST_OUT;
			uint8_t *p;

			if (new_cap > limit || new_cap < cap)
				new_cap = limit;
			err = -EFBIG;
			if (new_cap == cap)
				goto out_free;
			err = -ENOMEM;
			p = realloc(buf, new_cap);
			if (!p)
				goto out_free;
			buf = p;
			strm.next_out = buf + cap;
			strm.avail_out = new_cap - cap;
			cap = new_cap;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			err = xz_err(ret);
			goto out_free;
		}
	}
	err = -EFBIG;
	if (strm.total_out > max_out)
		goto out_free;
	/* one stream, nothing after it */
	err = -EINVAL;
	if (strm.avail_in)
		goto out_free;
	*out = buf;
	*out_len = strm.total_out;
	lzma_end(&strm);
	return 0;

out_free:
	lzma_end(&strm);
	free(buf);
	return err;
}
