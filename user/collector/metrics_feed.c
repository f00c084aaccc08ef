// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics_feed - degraded conditions from the modules' reports, and the
 * described counters into the snapshot /metrics serves.  See
 * metrics_feed.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector/state.h"
#include "collector/counters.h"
#include "collector/health.h"
#include "collector/metrics_feed.h"
#include "export/push.h"
#include "sampling/sampler.h"

static void fill_snapshot(struct collector *c, struct metrics_snapshot *m)
{
	struct counter_values v;

	memset(m, 0, sizeof(*m));
	m->version = CTXPROF_VERSION;
	m->node = c->node;
	m->mode = c->opts.all ? "all" : c->opts.children ? "children" : "pid";
	counters__read(c, &v);
	counters__snapshot(&v, m);
	m->nr_rings = sampler__ring_fill(c->sampler, m->ring_fill, METRICS_MAX_RINGS);
}

/*
 * The sampler's findings (sampler__check() ran this second) as degraded
 * conditions: the kernel samples below the requested rate, an online CPU
 * has no perf event.  Export failures are raised where exports end
 * (health__exported()).
 */
static void sampling_conditions(struct collector *c)
{
	struct sampler_health h;
	char why[160];

	sampler__health(c->sampler, &h);
	if (h.throttled) {
		snprintf(why, sizeof(why),
			 "the kernel samples at %.0f Hz per CPU of %u requested "
			 "(kernel.perf_event_max_sample_rate=%ld)",
			 h.effective_hz, h.requested_hz, h.max_sample_rate);
		health__raise(c->health, HEALTH_THROTTLED, why);
	} else {
		health__clear(c->health, HEALTH_THROTTLED);
	}
	if (h.cpus_sampled < h.cpus_online) {
		snprintf(why, sizeof(why), "%d of %d online CPUs sampled: a perf event is missing",
			 h.cpus_sampled, h.cpus_online);
		health__raise(c->health, HEALTH_CPU_OFFLINE_EVENTS_MISSING, why);
	} else {
		health__clear(c->health, HEALTH_CPU_OFFLINE_EVENTS_MISSING);
	}
}

/* --push: the store not taking profiles is a degraded condition (they wait in the spool) */
static void push_condition(struct collector *c)
{
	char why[HEALTH_REASON_LEN], url[PUSH_URL_MAX];
	struct push_stats st;

	if (!c->push)
		return;
	push__stats(c->push, &st);
	if (!st.failing) {
		health__clear(c->health, HEALTH_PUSH_FAILING);
		return;
	}
	push__last_error(c->push, why, sizeof(why), url, sizeof(url));
	health__raise(c->health, HEALTH_PUSH_FAILING, why);
}

void metrics_feed__tick(struct collector *c)
{
	sampling_conditions(c);
	push_condition(c);
	if (!c->metrics)
		return;
	fill_snapshot(c, c->snap);
	metrics_server__publish(c->metrics, c->snap);
}

int metrics_feed__start(struct collector *c, char *err_msg, size_t err_len)
{
	const struct collector_opts *o = &c->opts;

	c->health = health__new(c->drains, c->tracker, o->interval);
	if (!c->health) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	if (!o->metrics_addr && !o->health_addr)
		return 0;
	c->snap = malloc(sizeof(*c->snap));
	if (!c->snap) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	c->metrics = metrics_server__start(
		&(struct metrics_server_opts){
			.metrics_addr = o->metrics_addr,
			.scrapes = c->scrapeq,
			.health_addr = o->health_addr,
			.health = health__check,
			.health_ctx = c->health,
		},
		err_msg, err_len);
	if (!c->metrics)
		return -errno;
	metrics_feed__tick(c);
	if (o->metrics_addr)
		fprintf(stderr,
			"ctxprof: metrics at http://%s/metrics, health at /healthz, profiles at "
			"/debug/pprof/profile?seconds=N\n",
			o->metrics_addr);
	if (o->health_addr)
		fprintf(stderr, "ctxprof: health checks at http://%s/healthz\n", o->health_addr);
	return 0;
}
