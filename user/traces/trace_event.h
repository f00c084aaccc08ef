/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace_event - the events of a per-thread trace (traces/trace.h): whole
 * 8-byte words, the first a header (type, size in words, an argument), the
 * second the event's CLOCK_MONOTONIC time in ns: parts hold whole words
 * (docs/design/thread-traces.md).
 *
 *   SAMPLE       hdr(cpu, context read)  time  stack id (calltrace_storage)  span id
 *   SPAN_BEGIN   hdr       time  span id  local root span id
 *   SPAN_END     hdr       time  span id
 *   THREAD_NAME  hdr       time  name (16 bytes, NUL-padded)
 *   THREAD_EXIT  hdr       time
 *   WAIT         hdr(state, context read)  time (back on a CPU)  stack id  span id  wait ns
 *
 * Inline encoders for the writers (no call, no allocation).
 *
 * Threads: inline encoders and decoders over the caller's words; any thread.
 */
#ifndef CTXPROF_TRACE_EVENT_H
#define CTXPROF_TRACE_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* 0 is no type: a zero header word is never an event */
enum trace_event_type {
	TRACE_EV_SAMPLE = 1,
	TRACE_EV_SPAN_BEGIN,
	TRACE_EV_SPAN_END,
	TRACE_EV_THREAD_NAME,
	TRACE_EV_THREAD_EXIT,
	TRACE_EV_WAIT, /* an off-CPU wait (--off-cpu), timed at its end */
	TRACE_EV_MAX,
};

#define TRACE_EV_NAME_LEN 16
/* the longest event, in words */
#define TRACE_EV_MAX_WORDS 5

static inline uint64_t trace_ev_hdr(enum trace_event_type type, unsigned int nwords, uint64_t arg)
{
	return (uint64_t)type | (uint64_t)(nwords & 0xff) << 8 | arg << 16;
}

static inline enum trace_event_type trace_ev_type(uint64_t hdr)
{
	return (enum trace_event_type)(hdr & 0xff);
}

static inline unsigned int trace_ev_words(uint64_t hdr)
{
	return (hdr >> 8) & 0xff;
}

static inline uint64_t trace_ev_arg(uint64_t hdr)
{
	return hdr >> 16;
}

/* the words of each type; 0: no such type */
static inline unsigned int trace_ev_expected_words(enum trace_event_type type)
{
	static const unsigned char words[TRACE_EV_MAX] = {
		[TRACE_EV_SAMPLE] = 4,	    [TRACE_EV_SPAN_BEGIN] = 4,	[TRACE_EV_SPAN_END] = 3,
		[TRACE_EV_THREAD_NAME] = 4, [TRACE_EV_THREAD_EXIT] = 2, [TRACE_EV_WAIT] = 5,
	};

	return type < TRACE_EV_MAX ? words[type] : 0;
}

/* SAMPLE's argument: the CPU, and whether the thread's context was read */
#define TRACE_EV_SAMPLE_CONTEXT (1ull << 32)

/*
 * In the argument of a SPAN_BEGIN or THREAD_NAME: a seed, a copy of an
 * earlier event that a part switch put at the start of the new part (the
 * thread's state then: its name, its open spans), with the original time.
 * A replay hands seeds over only when the events before the part were lost
 * to recycling; a reader that knows the span already ignores its seed.
 */
#define TRACE_EV_SEED (1ull << 33)

static inline bool trace_ev_is_seed(uint64_t hdr)
{
	return trace_ev_arg(hdr) & TRACE_EV_SEED;
}

/* the events that change the state a part switch seeds */
static inline bool trace_ev_is_state(uint64_t hdr)
{
	enum trace_event_type type = trace_ev_type(hdr);

	return type == TRACE_EV_SPAN_BEGIN || type == TRACE_EV_SPAN_END ||
	       type == TRACE_EV_THREAD_NAME;
}

/* @context: the span id is the thread's context as read (0: in no span) */
static inline unsigned int trace_ev_sample(uint64_t *ev, uint64_t time_ns, uint32_t cpu,
					   bool context, uint64_t stack_id, uint64_t span_id)
{
	ev[0] = trace_ev_hdr(TRACE_EV_SAMPLE, 4, cpu | (context ? TRACE_EV_SAMPLE_CONTEXT : 0));
	ev[1] = time_ns;
	ev[2] = stack_id;
	ev[3] = span_id;
	return 4;
}

/*
 * A wait that ended at @end_ns after @wait_ns off the CPU, with the stack
 * and span of the thread as it left; @state: the task's state then
 * (TASK_INTERRUPTIBLE 1, TASK_UNINTERRUPTIBLE 2, ...).  Timed at its end:
 * that is when the collector hears of it.
 */
static inline unsigned int trace_ev_wait(uint64_t *ev, uint64_t end_ns, uint32_t state,
					 bool context, uint64_t stack_id, uint64_t span_id,
					 uint64_t wait_ns)
{
	ev[0] = trace_ev_hdr(TRACE_EV_WAIT, 5,
			     (state & 0xff) | (context ? TRACE_EV_SAMPLE_CONTEXT : 0));
	ev[1] = end_ns;
	ev[2] = stack_id;
	ev[3] = span_id;
	ev[4] = wait_ns;
	return 5;
}

static inline unsigned int trace_ev_span_begin(uint64_t *ev, uint64_t time_ns, uint64_t span_id,
					       uint64_t local_root_span_id)
{
	ev[0] = trace_ev_hdr(TRACE_EV_SPAN_BEGIN, 4, 0);
	ev[1] = time_ns;
	ev[2] = span_id;
	ev[3] = local_root_span_id;
	return 4;
}

static inline unsigned int trace_ev_span_end(uint64_t *ev, uint64_t time_ns, uint64_t span_id)
{
	ev[0] = trace_ev_hdr(TRACE_EV_SPAN_END, 3, 0);
	ev[1] = time_ns;
	ev[2] = span_id;
	return 3;
}

/* @name: up to TRACE_EV_NAME_LEN bytes, NUL-terminated or not */
static inline unsigned int trace_ev_thread_name(uint64_t *ev, uint64_t time_ns, const char *name)
{
	char buf[TRACE_EV_NAME_LEN] = {0};

	memcpy(buf, name, strnlen(name, sizeof(buf)));
	ev[0] = trace_ev_hdr(TRACE_EV_THREAD_NAME, 4, 0);
	ev[1] = time_ns;
	memcpy(&ev[2], buf, sizeof(buf));
	return 4;
}

static inline unsigned int trace_ev_thread_exit(uint64_t *ev, uint64_t time_ns)
{
	ev[0] = trace_ev_hdr(TRACE_EV_THREAD_EXIT, 2, 0);
	ev[1] = time_ns;
	return 2;
}

#endif /* CTXPROF_TRACE_EVENT_H */
