// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tag dictionary: (key, value) -> id, process-wide, behind one mutex.
 * Interning is not a hot call: the application interns once and keeps the
 * id.  An entry's dictionary record goes out on the interning thread's
 * detail lane the first time that works; the collector may ask for the
 * whole dictionary again (dict_replay_request, e.g. when it attached late).
 * An application may have interned everything at start and never intern
 * again, so a replay is served a bounded batch at a time on paths every
 * application takes: span events, ctxprof_flush(), thread registration (and
 * interns).  Those check ctxprof_dict__replay_pending() (three loads) and
 * never wait: the lock is only tried, and only when a ring is free.
 *
 * The same paths send the entries whose first record did not fit (a burst
 * of interns larger than the interning thread's detail rings, or interns
 * while no collector drains them): ctxprof_dict_unsent counts them, and a
 * step sends them, in id order from a cursor, on whatever thread's lane
 * has room.  So no entry stays unsent while any thread has span events,
 * flushes or registrations, without the application interning it again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define REPLAY_BATCH 64	  /* records a single intern call replays at most */
#define UNSENT_SCAN  4096 /* entries a step looks at for unsent ones, at most */

struct dict_entry {
	__u64 hash;
	char *key; /* key bytes then value bytes, one allocation */
	__u16 key_len;
	__u16 value_len;
	bool emitted;
};

static pthread_mutex_t dict_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dict_entry *entries; /* entries[id - 1] */
static __u32 nr_entries, cap_entries;
static __u32 *table; /* open addressing, ids; 0 is empty */
static __u32 table_mask;
static __u32 replay_seen; /* last dict_replay_request taken up */
static __u32 replay_next; /* next id to replay; 0: no replay running */
static __u32 unsent_next; /* next id to look at for an unsent entry */
/* entries not emitted yet; read without the lock */
_Atomic __u32 ctxprof_dict_unsent;
/* replay_seen once its replay is complete; read without the lock */
_Atomic __u32 ctxprof_dict_replay_served;

static __u64 hash_pair(const char *k, size_t kl, const char *v, size_t vl)
{
	/* FNV-1a; the separator keeps ("ab", "c") apart from ("a", "bc") */
	__u64 h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < kl; i++)
		h = (h ^ (unsigned char)k[i]) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (i = 0; i < vl; i++)
		h = (h ^ (unsigned char)v[i]) * 0x100000001b3ull;
	return h ^ kl << 48;
}

static bool entry_is(const struct dict_entry *e, __u64 h, const char *k, size_t kl, const char *v,
		     size_t vl)
{
	return e->hash == h && e->key_len == kl && e->value_len == vl && !memcmp(e->key, k, kl) &&
	       !memcmp(e->key + kl, v, vl);
}

static int grow_table(void)
{
	__u32 new_size = table ? (table_mask + 1) * 2 : 1024;
	__u32 *t = calloc(new_size, sizeof(*t));
	__u32 i;

	if (!t)
		return -1;
	for (i = 0; i < nr_entries; i++) {
		__u32 j = entries[i].hash & (new_size - 1);

		while (t[j])
			j = (j + 1) & (new_size - 1);
		t[j] = i + 1;
	}
	free(table);
	table = t;
	table_mask = new_size - 1;
	return 0;
}

static __u32 insert(__u64 h, const char *k, size_t kl, const char *v, size_t vl, __u32 max_tags)
{
	struct dict_entry *e;
	char *bytes;
	__u32 j;

	if (nr_entries >= max_tags)
		return 0;
	/* keep the table at most half full */
	if ((nr_entries + 1) * 2 > (table ? table_mask + 1 : 0) && grow_table())
		return 0;
	if (!table)
		return 0;
	if (nr_entries == cap_entries) {
		__u32 cap = cap_entries ? cap_entries * 2 : 256;
		struct dict_entry *n = realloc(entries, cap * sizeof(*n));

		if (!n)
			return 0;
		entries = n;
		cap_entries = cap;
	}
	bytes = malloc(kl + vl + 1);
	if (!bytes)
		return 0;
	memcpy(bytes, k, kl);
	memcpy(bytes + kl, v, vl);
	e = &entries[nr_entries++];
	*e = (struct dict_entry){.hash = h, .key = bytes, .key_len = kl, .value_len = vl};
	j = h & table_mask;
	while (table[j])
		j = (j + 1) & table_mask;
	table[j] = nr_entries;
	return nr_entries;
}

static bool emit(__u32 id)
{
	struct dict_entry *e = &entries[id - 1];

	return ctxprof__emit_tag(id, e->key, e->key_len, e->key + e->key_len, e->value_len);
}

/* entry @id's record went out: it is no longer unsent; under dict_lock */
static void set_emitted(__u32 id)
{
	if (entries[id - 1].emitted)
		return;
	entries[id - 1].emitted = true;
	atomic_fetch_sub_explicit(&ctxprof_dict_unsent, 1, memory_order_relaxed);
}

/* send a batch of the entries whose record did not fit; under dict_lock.
 * Return: records sent */
static int unsent_step(void)
{
	__u32 looked;
	int n = 0;

	for (looked = 0; looked < UNSENT_SCAN && n < REPLAY_BATCH; looked++) {
		if (!atomic_load_explicit(&ctxprof_dict_unsent, memory_order_relaxed))
			break;
		if (unsent_next < 1 || unsent_next > nr_entries)
			unsent_next = 1;
		if (!entries[unsent_next - 1].emitted) {
			if (!emit(unsent_next))
				break; /* no room: continue later */
			set_emitted(unsent_next);
			n++;
		}
		unsent_next++;
	}
	return n;
}

/* serve the collector's replay request a batch at a time; under dict_lock.
 * Return: records sent */
static int replay_step(struct ctxprof_shm *shm)
{
	__u32 req = ld32(&shm->hdr->dict_replay_request, relaxed);
	int n;

	if (req != replay_seen) {
		replay_seen = req;
		replay_next = 1;
	}
	for (n = 0; replay_next && n < REPLAY_BATCH; n++) {
		if (replay_next > nr_entries) {
			replay_next = 0;
			break;
		}
		if (!emit(replay_next))
			break; /* pool exhausted: continue later */
		set_emitted(replay_next);
		replay_next++;
	}
	if (!replay_next) {
		atomic_store_explicit(&ctxprof_dict_replay_served, replay_seen,
				      memory_order_relaxed);
		n += unsent_step();
	}
	return n;
}

/*
 * ctxprof_dict__serve_replay() - a batch of a pending replay on the calling
 * thread's @detail lane, handed to the collector at once.  Never waits: with
 * no ring free, or the dictionary locked (its holder serves it), it is left
 * for a later call.
 */
void ctxprof_dict__serve_replay(struct ctxprof_lane_producer *detail)
{
	struct ctxprof_shm *shm = ctxprof__shm();
	int sent;

	if (!shm || !ctxprof_lane__can_reserve(detail) || pthread_mutex_trylock(&dict_lock))
		return;
	sent = replay_step(shm);
	pthread_mutex_unlock(&dict_lock);
	if (sent)
		ctxprof_lane__flush(detail);
}

__u32 ctxprof_dict__intern(const char *key, const char *value)
{
	struct ctxprof_shm *shm = ctxprof__shm();
	size_t kl, vl;
	__u64 h;
	__u32 id = 0, j;

	if (!shm || !key || !value)
		goto out;
	kl = strnlen(key, CTXPROF_TAG_KEY_MAX + 1);
	vl = strnlen(value, CTXPROF_TAG_VALUE_MAX + 1);
	if (!kl || kl > CTXPROF_TAG_KEY_MAX || vl > CTXPROF_TAG_VALUE_MAX)
		goto out;
	h = hash_pair(key, kl, value, vl);

	pthread_mutex_lock(&dict_lock);
	for (j = table ? h & table_mask : 0; table && table[j]; j = (j + 1) & table_mask) {
		if (entry_is(&entries[table[j] - 1], h, key, kl, value, vl)) {
			id = table[j];
			break;
		}
	}
	if (!id) {
		id = insert(h, key, kl, value, vl, shm->max_tags);
		if (id) {
			add64(&shm->hdr->tags_interned, 1, relaxed);
			atomic_fetch_add_explicit(&ctxprof_dict_unsent, 1, memory_order_relaxed);
		}
	}
	if (id && !entries[id - 1].emitted && emit(id))
		set_emitted(id);
	if (ld32(&shm->hdr->dict_replay_request, relaxed) != replay_seen || replay_next ||
	    atomic_load_explicit(&ctxprof_dict_unsent, memory_order_relaxed))
		replay_step(shm);
	pthread_mutex_unlock(&dict_lock);
out:
	if (!id && shm)
		add64(&shm->hdr->tag_intern_failures, 1, relaxed);
	return id;
}

void ctxprof_dict__forget_emitted(void)
{
	__u32 i;

	for (i = 0; i < nr_entries; i++)
		entries[i].emitted = false;
	replay_seen = 0;
	replay_next = 0;
	unsent_next = 1;
	atomic_store_explicit(&ctxprof_dict_replay_served, 0, memory_order_relaxed);
	atomic_store_explicit(&ctxprof_dict_unsent, nr_entries, memory_order_relaxed);
}

void ctxprof_dict__reset(void)
{
	__u32 i;

	for (i = 0; i < nr_entries; i++)
		free(entries[i].key);
	free(entries);
	free(table);
	entries = NULL;
	table = NULL;
	nr_entries = cap_entries = table_mask = 0;
	replay_seen = replay_next = unsent_next = 0;
	atomic_store_explicit(&ctxprof_dict_replay_served, 0, memory_order_relaxed);
	atomic_store_explicit(&ctxprof_dict_unsent, 0, memory_order_relaxed);
}

void ctxprof_dict__lock(void)
{
	pthread_mutex_lock(&dict_lock);
}

void ctxprof_dict__unlock(void)
{
	pthread_mutex_unlock(&dict_lock);
}

/* fork child: the lock was taken in the prepare handler by a thread that is gone */
void ctxprof_dict__reinit_lock(void)
{
	pthread_mutex_init(&dict_lock, NULL);
}
