// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: mmap_events_parse() on one hostile record, and
 * mmap_events_ring__read() on a hostile ring (the input's first 16 bytes its
 * tail and how far the head is ahead, the rest its data, cut to a power of
 * two).  Beyond "no crash", it checks what the callback may rely on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "processes/mmap_events.h"

/* the bytes the event's path may lie in, during the current call */
static const uint8_t *lo, *hi;

static void check_event(const struct mmap_event *ev)
{
	const uint8_t *path = (const uint8_t *)ev->path;

	if (!ev->len || ev->start + ev->len <= ev->start)
		abort();
	if (ev->build_id_len > MMAP_EVENTS_BUILD_ID_MAX)
		abort();
	if (ev->build_id_len && (ev->inode || ev->dev_major || ev->dev_minor))
		abort();
	/* the path and its NUL inside the record */
	if (path < lo || path + ev->path_len >= hi || ev->path[ev->path_len] ||
	    strlen(ev->path) != ev->path_len)
		abort();
}

static void on_event(void *ctx, const struct mmap_event *ev)
{
	const struct mmap_events_ring *r = ctx;
	size_t copy_len = r->size < 65536 ? r->size : 65536;

	/* in place in the ring, or put together in the copy buffer */
	if ((const uint8_t *)ev->path >= r->copy &&
	    (const uint8_t *)ev->path < r->copy + copy_len) {
		lo = r->copy;
		hi = r->copy + copy_len;
	} else {
		lo = r->data;
		hi = r->data + r->size;
	}
	check_event(ev);
}

static void fuzz_ring(const uint8_t *data, size_t size)
{
	struct perf_event_mmap_page *page = calloc(1, sizeof(*page));
	struct mmap_events_stats st = {0};
	struct mmap_events_ring r = {0};
	uint64_t tail, ahead;
	uint8_t *ring;
	size_t ring_size = 8;

	memcpy(&tail, data, 8);
	memcpy(&ahead, data + 8, 8);
	data += 16;
	size -= 16;
	while (ring_size * 2 <= size)
		ring_size *= 2;
	/* exactly the ring's bytes: ASan sees a read past them */
	ring = malloc(ring_size);
	r.copy = malloc(ring_size < 65536 ? ring_size : 65536);
	if (!page || !ring || !r.copy)
		abort();
	memcpy(ring, data, ring_size);
	/* mostly a head within the ring, sometimes beyond or behind it */
	page->data_tail = tail;
	page->data_head = tail + (ahead & 0x8000 ? ahead : ahead % (ring_size + 1));
	r.page = page;
	r.data = ring;
	r.size = ring_size;
	mmap_events_ring__read(&r, 0, on_event, &r, &st);
	if (page->data_tail != page->data_head)
		abort();
	if (st.records != st.mmap2 + st.lost_records + st.other + st.malformed &&
	    st.records + 1 != st.mmap2 + st.lost_records + st.other + st.malformed)
		abort();
	free(r.copy);
	free(ring);
	free(page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmap_event ev;
	uint64_t lost;
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	/* exactly the record's bytes */
	memcpy(copy, data, size);
	if (mmap_events_parse(copy, size, &ev, &lost) == MMAP_EVENTS_MMAP2) {
		lo = copy;
		hi = copy + size;
		check_event(&ev);
	}
	free(copy);
	if (size >= 16 + 8)
		fuzz_ring(data, size);
	return 0;
}
