/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * app_context - the collector's side of libctxprof: find a target's registry
 * region, keep the sampler's tid -> context slot map current, and drain the
 * region's lanes (tag dictionary, span events).  On mapping a region it
 * asks the library for the whole tag dictionary again (dict_replay_request):
 * the tags interned before the collector came have names too.
 *
 * The region is the application's memory and is hostile: it is only mapped
 * when it is a sealed memfd (so it can neither shrink under us nor be a file
 * whose reads block), every field is validated by user/ctxprof_region.c, and
 * a tid a slot claims is only put into the BPF map once /proc/PID/task/TID
 * shows it is a thread of that process (else the app could make the sampler
 * read another task's memory at an address of its choosing).  Nor may the
 * region make the collector's work grow with polls: a refused region is
 * remembered and not looked at again, a slot's claim is judged once per
 * slot generation, a tid is held by one slot at a time, and a poll looks up
 * at most APP_CONTEXT_CLAIMS_PER_POLL new claims.
 *
 * A process's regions (struct app_region, a chain) are part of its state in
 * the thread registry (processes/process_state.h: @app), which hands them
 * back with app_context__release() when the process is gone.
 *
 * Main thread only: no locks inside.
 */
#ifndef CTXPROF_APP_CONTEXT_H
#define CTXPROF_APP_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct app_context;
struct app_region;
struct mappings;
struct proc_maps;
struct process_state;
struct trace_writer;

/* new slot claims checked against /proc in one poll, at most; the rest wait */
#define APP_CONTEXT_CLAIMS_PER_POLL 256
/* regions looked at per process, at most: mapped and refused ones together */
#define APP_CONTEXT_REGIONS_PER_PROCESS 16

struct app_context_stats {
	uint64_t regions;	   /* regions mapped and validated */
	uint64_t regions_rejected; /* regions refused, each once (see the -v log) */
	uint64_t threads;	   /* tids currently in the sampler's map, each once */
	/* slot claims refused, once per slot and generation: the tid is no
	 * thread of the process, or another slot holds it already */
	uint64_t threads_rejected;
	uint64_t claims_checked;  /* new claims looked up in /proc */
	uint64_t claims_deferred; /* new claims a poll left to the next (per poll) */
	uint64_t map_full;	  /* claims that did not fit in the sampler's map, each once */
	uint64_t span_events;	  /* span begin/end events drained */
	/* of those, left out of the timelines: their slot's tid is not one the
	 * collector verified, or their time is not near the collector's */
	uint64_t span_events_unattributed;
	uint64_t span_events_bad_time;
	uint64_t tags; /* distinct tag ids known */
	/* dictionaries asked for: one per region mapped, then by exports that met unknown ids */
	uint64_t dict_replays;
	uint64_t tag_records; /* dictionary records drained */
	/* of those, for an id known already (a replay, or an entry sent twice) */
	uint64_t tag_records_again;
	uint64_t tags_dropped; /* dictionary records refused (table full, bad id) */
	/* tags of exported samples no record named: labeled ctxprof_tag_id = the id */
	uint64_t tag_ids_unknown;
	uint64_t lane_errors; /* malformed lane content skipped (all reasons) */
	/*
	 * One consumer per region (docs/design/app-region.md): drain passes
	 * refused because another collector holds the lanes; lanes taken from
	 * a collector silent for 5 s; passes stopped because another took them
	 */
	uint64_t lane_passes_refused;
	uint64_t lane_takeovers;
	uint64_t lane_passes_lost;
	uint64_t regions_shut_down; /* regions whose application called ctxprof_shutdown() */
	/* the threads' own counts (their slots' events_generated and
	 * events_refused), summed over every owner of every slot */
	uint64_t events_generated; /* span events and tag records made */
	uint64_t events_refused;   /* of them, refused after ctxprof_shutdown() */
};

/**
 * app_context__new() - @ctx_map_fd: the sampler's tid -> slot map (struct ctx_slot_ref).
 * @verbose: log refused regions on stderr
 * Return: NULL with errno set on failure.  Pair with app_context__free().
 */
struct app_context *app_context__new(int ctx_map_fd, int verbose);

/**
 * app_context__trace() - append the span events drained from now on to the
 * per-thread traces of writer @w (owned by the main thread).
 */
void app_context__trace(struct app_context *a, struct trace_writer *w);

/**
 * app_context__scan() - look for libctxprof regions in @pm, the mappings of
 * process @pid, and map the new ones, adding them to the process's chain
 * @regions.  Refused regions join the chain unmapped, so that a later scan
 * neither opens nor counts them again (but one whose magic was still 0,
 * which may be a region being created, gets one more look).
 */
void app_context__scan(struct app_context *a, pid_t pid, const struct proc_maps *pm,
		       struct app_region **regions);

/**
 * app_context__changed() - the process_state_subscriber's changed (ctx: the
 * app_context; main_thread, wants MAPPINGS_F_CTXPROF_REGION): scan @st's
 * mappings @all into @st->app.  Our own process is skipped: it maps the
 * regions it reads.
 */
void app_context__changed(void *ctx, struct process_state *st, struct mappings *snap,
			  const struct proc_maps *all);

/**
 * app_context__poll() - bring the tid -> slot map up to date with the
 * regions' registered threads and drain their lanes.  Never blocks; looks
 * up at most APP_CONTEXT_CLAIMS_PER_POLL new slot claims in /proc (the
 * others at the next polls, counted in claims_deferred).
 * Return: dictionary records came in: the library may have more to send
 * once its rings are back (a burst of interns, a replay), so poll again soon.
 */
bool app_context__poll(struct app_context *a);

/**
 * app_context__tag() - the key and value of tag @id in a process's @regions.
 * Return: 0 with *key and *value set (valid until the regions are released),
 * or -ENOENT when the dictionary has not (yet) named it: counted
 * (tag_ids_unknown), and the process is asked for its dictionary again, at
 * most every 5 s (counted in dict_replays).
 */
int app_context__tag(struct app_region *regions, uint32_t id, const char **key, const char **value);

/**
 * app_context__release() - unmap a process's @regions and take its threads
 * out of the sampler's map (the process is gone).  Accepts NULL.
 */
void app_context__release(struct app_region *regions);

void app_context__stats(const struct app_context *a, struct app_context_stats *st);

/** app_context__free() - after every region was released; accepts NULL. */
void app_context__free(struct app_context *a);

#endif /* CTXPROF_APP_CONTEXT_H */
