// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry region (docs/design/app-region.md), allocated with the
 * control block: one memfd, sized once and sealed
 * against shrinking and growing so that the collector, after checking the
 * seals, can map it without fearing SIGBUS, and trust its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static __u32 pick(__u32 v, __u32 def)
{
	return v ? v : def;
}

static int check_lane(__u32 count, __u32 size, __u32 min_size)
{
	if (!count || count > CTXPROF_LANE_QUEUE_CAP)
		return -EINVAL;
	if (size < min_size || size > CTXPROF_RING_MAX_SIZE || size % 64)
		return -EINVAL;
	return 0;
}

/* geometry from the options, checked; the header is written from it */
static int compute_geometry(const struct ctxprof_options *o, struct ctxprof_shm *shm)
{
	struct ctxprof_options opts = {};
	__u64 max_tags;
	int err;

	if (o)
		memcpy(&opts, o, o->sz < sizeof(opts) ? o->sz : sizeof(opts));
	shm->max_threads = pick(opts.max_threads, CTXPROF_DEFAULT_MAX_THREADS);
	shm->ring_count[CTXPROF_LANE_INDEX] = pick(opts.index_rings, CTXPROF_DEFAULT_INDEX_RINGS);
	shm->ring_size[CTXPROF_LANE_INDEX] =
		pick(opts.index_ring_size, CTXPROF_DEFAULT_INDEX_RING_SIZE);
	shm->ring_count[CTXPROF_LANE_DETAIL] =
		pick(opts.detail_rings, CTXPROF_DEFAULT_DETAIL_RINGS);
	shm->ring_size[CTXPROF_LANE_DETAIL] =
		pick(opts.detail_ring_size, CTXPROF_DEFAULT_DETAIL_RING_SIZE);
	max_tags = pick(opts.max_tags, CTXPROF_DEFAULT_MAX_TAGS);
	shm->flush_interval_ns = opts.flush_interval_ns ?: CTXPROF_DEFAULT_FLUSH_NS;
	shm->consumer_stale_ns = opts.consumer_stale_ns ?: CTXPROF_DEFAULT_STALE_NS;

	if (shm->max_threads > CTXPROF_MAX_THREADS_LIMIT || max_tags >= UINT32_MAX)
		return -EINVAL;
	shm->max_tags = max_tags;
	err = check_lane(shm->ring_count[CTXPROF_LANE_INDEX], shm->ring_size[CTXPROF_LANE_INDEX],
			 CTXPROF_INDEX_RING_MIN_SIZE);
	if (err)
		return err;
	err = check_lane(shm->ring_count[CTXPROF_LANE_DETAIL], shm->ring_size[CTXPROF_LANE_DETAIL],
			 CTXPROF_DETAIL_RING_MIN_SIZE);
	if (err)
		return err;

	shm->lane_rings_offset[CTXPROF_LANE_INDEX] = 0;
	shm->lane_rings_offset[CTXPROF_LANE_DETAIL] =
		(__u64)shm->ring_count[CTXPROF_LANE_INDEX] * shm->ring_size[CTXPROF_LANE_INDEX];
	shm->ring_set_size = ctxprof_ring_set_size(
		shm->ring_count[CTXPROF_LANE_INDEX], shm->ring_size[CTXPROF_LANE_INDEX],
		shm->ring_count[CTXPROF_LANE_DETAIL], shm->ring_size[CTXPROF_LANE_DETAIL]);
	shm->rings_offset = ctxprof_rings_offset(shm->max_threads);
	shm->size = ctxprof_region_size(shm->max_threads, shm->ring_set_size);
	if (shm->size > CTXPROF_MAX_REGION_SIZE)
		return -E2BIG;
	return 0;
}

static void write_header(struct ctxprof_shm *shm)
{
	struct ctxprof_region_header *h = shm->hdr;
	int l;

	h->abi_version = CTXPROF_ABI_VERSION;
	h->header_size = sizeof(*h);
	h->region_size = shm->size;
	h->max_threads = shm->max_threads;
	h->slot_size = sizeof(struct ctxprof_slot);
	h->slots_offset = CTXPROF_SLOTS_OFFSET;
	h->rings_offset = shm->rings_offset;
	h->ring_set_size = shm->ring_set_size;
	for (l = 0; l < CTXPROF_NR_LANES; l++) {
		h->lane_offset[l] = CTXPROF_LANE_OFFSET(l);
		h->lanes[l].ring_count = shm->ring_count[l];
		h->lanes[l].ring_size = shm->ring_size[l];
		h->lanes[l].offset = shm->lane_rings_offset[l];
	}
	h->context_offset = 0;
	h->lane_size = sizeof(struct ctxprof_lane);
	h->owner_pid = getpid();
	h->created_ns = ctxprof_now_ns();
	h->registration_flags = CTXPROF_REG_ACCEPTING;
	/* last: a reader that sees the magic sees the geometry before it */
	st64(&h->magic, CTXPROF_REGION_MAGIC, release);
}

int ctxprof_shm__create(const struct ctxprof_options *opts, struct ctxprof_shm *shm)
{
	void *base;
	int fd, err;

	memset(shm, 0, sizeof(*shm));
	err = compute_geometry(opts, shm);
	if (err)
		return err;

	/* the name is how the collector finds us in /proc/PID/maps */
	fd = memfd_create(CTXPROF_REGION_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, shm->size)) {
		err = -errno;
		goto out_close;
	}
	/* F_SEAL_SEAL: nobody can lift the guarantee afterwards */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		goto out_close;
	}
	base = mmap(NULL, shm->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	shm->base = base;
	shm->hdr = base;
	write_header(shm);
	err = 0;
	/* the mapping keeps the memfd alive; the collector opens it through map_files */
out_close:
	close(fd);
	return err;
}

void ctxprof_shm__destroy(struct ctxprof_shm *shm)
{
	if (shm->base)
		munmap(shm->base, shm->size);
	memset(shm, 0, sizeof(*shm));
}

struct ctxprof_slot *ctxprof_shm__slot(const struct ctxprof_shm *shm, __u32 index)
{
	return (struct ctxprof_slot *)(shm->base + CTXPROF_SLOTS_OFFSET +
				       (size_t)index * sizeof(struct ctxprof_slot));
}

unsigned char *ctxprof_shm__rings(const struct ctxprof_shm *shm, __u32 index,
				  enum ctxprof_lane_id lane)
{
	return shm->base + shm->rings_offset + (size_t)index * shm->ring_set_size +
	       shm->lane_rings_offset[lane];
}
