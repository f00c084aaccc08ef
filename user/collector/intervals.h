/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * intervals - the exports of a window, for the collector's main loop
 * (collector.c): the storage's rotation handed to an exporter, the
 * profile written (or kept to write again), the timeline up to the cut,
 * the series pushed, the next window opened in the drains, the process
 * states of gone images collected.  Private to user/collector/.
 *
 * Main thread only.
 */
#ifndef CTXPROF_COLLECTOR_INTERVALS_H
#define CTXPROF_COLLECTOR_INTERVALS_H

#include <stdbool.h>
#include "export/export.h"

struct collector;
struct process_state;

/** intervals__release_state() - what the main thread attached to a process state, released with it.
 */
void intervals__release_state(struct process_state *st);

/** intervals__profile_opts() - what every profile of this run is made with. */
void intervals__profile_opts(struct collector *c, struct export_opts *eo);

/**
 * intervals__export_profile() - write the window's profile to @path (NULL:
 * pushed only), and its timeline; @final: the drains stopped, every table.
 * Return: 0, or a negative errno when the window could not be exported (a
 * file that could not be written is kept or dropped and counted: not an
 * error).
 */
int intervals__export_profile(struct collector *c, const char *path, bool final);

/** intervals__export() - intervals__export_profile() to the interval's file (continuous mode). */
int intervals__export(struct collector *c, bool final);

#endif /* CTXPROF_COLLECTOR_INTERVALS_H */
