/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go_labels - the running goroutine's pprof labels (include/go_abi.h), read
 * by the sampler for processes in go_procs and appended to the record.
 *
 * Go 1.24's label list (GO_LABELS_SLICE) is walked label by label in a
 * bpf_loop callback, at most GO_SLICE_MAX of them, the list's own length
 * checked against its capacity.  Go 1.23's map (GO_LABELS_MAP) is walked
 * slot by slot in a bpf_loop callback (checked once by the verifier,
 * whatever the map's size), at most GO_MAP_MAX_READS buckets
 * of GO_BUCKET_SLOTS slots: the buckets, then the old buckets of a map
 * still growing (their slots not evacuated yet are in use, the others
 * below GO_MIN_TOPHASH), each followed by its overflow chain.  Every slot
 * in use is counted; the set is taken only if that count is the map's
 * own, which also catches offsets that do not fit the program.
 * Included by sampler.bpf.c, which defines scratch_record() and
 * scratch_go().
 */
#ifndef CTXPROF_GO_LABELS_BPF_H
#define CTXPROF_GO_LABELS_BPF_H

/* pid -> where its goroutines' labels are, for the Go programs the collector recognised */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct go_labels_ref);
} go_procs SEC(".maps");

enum go_walk_end {
	GO_WALK_RUNNING = 0,
	GO_WALK_DONE,	  /* every bucket read */
	GO_WALK_READ_ERR, /* a bucket or a string unreadable */
};

/* the walk's state, in the per-CPU scratch area (see struct scratch) */
struct go_walk {
	struct go_bucket_str bucket; /* the bucket being walked */
	__u64 buckets, oldbuckets;   /* GO_LABELS_SLICE: buckets is the list's array */
	__u32 nr_buckets, nr_old;    /* 2^B (the list's length), and the old buckets' number */
	__u32 next;		     /* the next bucket to read: buckets first, then old ones */
	__u32 reads;		     /* buckets read */
	__u32 off;		     /* where the entries start in the record */
	__u32 pos;		     /* entry bytes written */
	__u32 nr;		     /* entries written */
	__u32 seen;		     /* slots in use seen */
	__u32 flags;		     /* GO_LABELS_F_* */
	__u32 end;		     /* enum go_walk_end */
};

static __always_inline struct sample_record *scratch_record(void);
static __always_inline struct go_walk *scratch_go(void);
static __always_inline void inc_stat(__u32 stat);

/* the record's bytes the entries may take: the verifier checks writes against it */
#define GO_ENTRIES_END (SAMPLE_RECORD_FULL_MAX_SIZE - GO_LABEL_ENTRY_MAX)

/*
 * Append the label @k = @v to the record (both the application's string
 * headers, their bytes read here).  Return: 0 to go on, 1 when the walk
 * ends (a string unreadable: w->end says).
 */
static __always_inline long go_put_label(struct go_walk *w, __u8 *rec, const struct go_string *k,
					 const struct go_string *v)
{
	/* 64-bit: a bound checked on a 32-bit copy would not hold for the pointer */
	__u64 klen = k->len, vlen = v->len, at;
	__u8 *e;

	/* a label left out whole: too many, or too long (a cut value is another value) */
	if (w->nr >= GO_LABELS_MAX || klen > GO_LABEL_KEY_MAX || vlen > GO_LABEL_VALUE_MAX) {
		w->flags |= GO_LABELS_F_TRUNCATED;
		return 0;
	}
	at = (__u64)w->off + w->pos;
	/* the bounds are for the verifier: they hold already */
	if (at > GO_ENTRIES_END || klen > GO_LABEL_KEY_MAX || vlen > GO_LABEL_VALUE_MAX)
		return 0;
	e = rec + at;
	e[0] = klen;
	e[1] = vlen;
	if (bpf_probe_read_user(e + 2, klen, (const void *)k->ptr) ||
	    bpf_probe_read_user(e + 2 + klen, vlen, (const void *)v->ptr)) {
		w->end = GO_WALK_READ_ERR;
		return 1;
	}
	w->pos += 2 + klen + vlen;
	w->nr++;
	return 0;
}

/* GO_LABELS_MAP: slot @i of the walk, a bucket read at each eighth */
static long go_label_step(__u32 i, void *ctx)
{
	struct go_walk *w = scratch_go();
	__u8 *rec = (__u8 *)scratch_record();
	__u32 slot = i & (GO_BUCKET_SLOTS - 1);
	__u64 addr;

	if (!w || !rec)
		return 1;
	if (!slot) {
		/* the chain goes on, else the next bucket */
		if (i && w->bucket.overflow)
			addr = w->bucket.overflow;
		else if (w->next < w->nr_buckets)
			addr = w->buckets + (__u64)w->next++ * sizeof(w->bucket);
		else if (w->next < w->nr_buckets + w->nr_old)
			addr = w->oldbuckets +
			       (__u64)(w->next++ - w->nr_buckets) * sizeof(w->bucket);
		else {
			w->end = GO_WALK_DONE;
			return 1;
		}
		/* out of reads: the walk ends short (truncated) */
		if (w->reads++ == GO_MAP_MAX_READS)
			return 1;
		if (bpf_probe_read_user(&w->bucket, sizeof(w->bucket), (const void *)addr)) {
			w->end = GO_WALK_READ_ERR;
			return 1;
		}
	}
	if (w->bucket.tophash[slot] < GO_MIN_TOPHASH)
		return 0;
	w->seen++;
	return go_put_label(w, rec, &w->bucket.keys[slot], &w->bucket.values[slot]);
}

/* GO_LABELS_SLICE: label @i of the list (w->buckets, w->nr_buckets long) */
static long go_slice_step(__u32 i, void *ctx)
{
	struct go_walk *w = scratch_go();
	__u8 *rec = (__u8 *)scratch_record();
	struct go_label_pair l;

	if (!w || !rec)
		return 1;
	if (i >= w->nr_buckets) {
		w->end = GO_WALK_DONE;
		return 1;
	}
	if (bpf_probe_read_user(&l, sizeof(l), (const void *)(w->buckets + (__u64)i * sizeof(l)))) {
		w->end = GO_WALK_READ_ERR;
		return 1;
	}
	w->seen++;
	return go_put_label(w, rec, &l.key, &l.value);
}

/* read the pointer at @addr into @v; false when it is unreadable */
static __always_inline bool go_read_ptr(__u64 addr, __u64 *v)
{
	return !bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/*
 * The running goroutine's labels into the record at the first 8-byte
 * boundary from byte @off (past the frames and the OpenTelemetry record).
 * Return: the bytes appended, the alignment included (0: none).
 */
static __always_inline __u32 read_go_labels(struct sample_record *rec, __u32 off)
{
	const struct go_labels_ref *ref;
	struct go_labels_record *hdr;
	struct go_hmap_head head;
	struct go_slice list;
	struct go_walk *w;
	__u64 tp, g, m, curg, labels, hmap, count;
	__u32 start;

	ref = bpf_map_lookup_elem(&go_procs, &rec->pid);
	if (!ref)
		return 0;
	if (ref->exec_id && ref->exec_id != rec->exec_id) {
		inc_stat(SAMPLER_STAT_GO_STALE);
		return 0;
	}
	tp = arch_thread_pointer(bpf_get_current_task_btf());
	if (!go_read_ptr(tp + ref->tls_g, &g)) {
		inc_stat(SAMPLER_STAT_GO_READ_ERR);
		return 0;
	}
	/* no g: a thread the Go runtime did not make (cgo's C threads) */
	if (!g) {
		inc_stat(SAMPLER_STAT_GO_NONE);
		return 0;
	}
	if (!go_read_ptr(g + ref->g_m, &m) || !m || !go_read_ptr(m + ref->m_curg, &curg)) {
		inc_stat(SAMPLER_STAT_GO_READ_ERR);
		return 0;
	}
	/* no curg: the scheduler runs */
	if (!curg) {
		inc_stat(SAMPLER_STAT_GO_NONE);
		return 0;
	}
	if (!go_read_ptr(curg + ref->g_labels, &labels)) {
		inc_stat(SAMPLER_STAT_GO_READ_ERR);
		return 0;
	}
	if (!labels) {
		inc_stat(SAMPLER_STAT_GO_NONE);
		return 0;
	}
	start = (off + 7) & ~7u;
	/* the bound is for the verifier: the frames and the OpenTelemetry record end before */
	if (start > SAMPLE_RECORD_OTEL_MAX_SIZE + 7)
		return 0;
	w = scratch_go();
	if (!w)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	w->off = start + sizeof(*hdr);
	if (ref->kind == GO_LABELS_SLICE) {
		if (bpf_probe_read_user(&list, sizeof(list), (const void *)labels)) {
			inc_stat(SAMPLER_STAT_GO_READ_ERR);
			return 0;
		}
		if (!list.len) {
			inc_stat(SAMPLER_STAT_GO_NONE);
			return 0;
		}
		if (list.len > list.cap || list.len > GO_SLICE_MAX) {
			inc_stat(SAMPLER_STAT_GO_BAD_MAP);
			return 0;
		}
		w->buckets = list.ptr;
		w->nr_buckets = list.len;
		count = list.len;
		/* one more step: the one that finds no label left */
		bpf_loop(GO_SLICE_MAX + 1, go_slice_step, NULL, 0);
	} else {
		if (!go_read_ptr(labels, &hmap)) {
			inc_stat(SAMPLER_STAT_GO_READ_ERR);
			return 0;
		}
		if (!hmap) {
			inc_stat(SAMPLER_STAT_GO_NONE);
			return 0;
		}
		if (bpf_probe_read_user(&head, sizeof(head), (const void *)hmap)) {
			inc_stat(SAMPLER_STAT_GO_READ_ERR);
			return 0;
		}
		if (!head.count) {
			inc_stat(SAMPLER_STAT_GO_NONE);
			return 0;
		}
		if (head.B > GO_MAP_MAX_B) {
			inc_stat(SAMPLER_STAT_GO_BAD_MAP);
			return 0;
		}
		w->nr_buckets = 1u << head.B;
		w->buckets = head.buckets;
		w->oldbuckets = head.oldbuckets;
		if (head.oldbuckets)
			w->nr_old = (head.flags & GO_HMAP_SAME_SIZE_GROW) ? w->nr_buckets
									  : w->nr_buckets >> 1;
		count = head.count;
		/* one more step: the one that finds no bucket left */
		bpf_loop(GO_MAP_MAX_READS * GO_BUCKET_SLOTS + 1, go_label_step, NULL, 0);
	}
	if (w->end == GO_WALK_READ_ERR) {
		inc_stat(SAMPLER_STAT_GO_READ_ERR);
		return 0;
	}
	/* walked whole, another count: not a map of this layout (or not this map) */
	if (w->end == GO_WALK_DONE && w->seen != count) {
		inc_stat(SAMPLER_STAT_GO_BAD_MAP);
		return 0;
	}
	/* out of reads before the end: the labels found so far */
	if (w->end != GO_WALK_DONE)
		w->flags |= GO_LABELS_F_TRUNCATED;
	if (w->flags & GO_LABELS_F_TRUNCATED)
		inc_stat(SAMPLER_STAT_GO_TRUNCATED);
	if (!w->nr)
		return 0;
	hdr = (void *)((__u8 *)rec + start);
	hdr->size = w->pos;
	hdr->nr = w->nr;
	hdr->flags = w->flags;
	rec->flags |= SAMPLE_F_GO_LABELS;
	inc_stat(SAMPLER_STAT_GO_OK);
	return start - off + sizeof(*hdr) + w->pos;
}

#endif /* CTXPROF_GO_LABELS_BPF_H */
