// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "appctx/app_context.h"
#include "appctx/go_labels.h"
#include "appctx/python_proc.h"
#include "appctx/otel_context.h"
#include "export/export.h"
#include "export/pprof.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"
#include "runtimes/hotspot/hotspot_proc.h"
#include "symbols/perf_map.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

/* a trace's pprof location ids, recorded while the storage hands traces over */
struct trace_locs {
	uint64_t trace_id;
	size_t first; /* index into exporter.locs */
	size_t nr;
	struct process_state *ps; /* its process image, NULL when unknown */
	const char *off_class;	  /* an off-CPU wait's class (off_cpu_class()); NULL: CPU */
};

struct exporter {
	struct pprof *p;
	struct symbolizer *sym;
	struct trace_locs *trace_locs; /* in hand-over order */
	size_t nr_trace_locs, trace_locs_cap;
	struct htable trace_locs_idx; /* trace id -> trace_locs index */
	uint64_t *locs;
	size_t nr_locs, cap_locs;
	uint64_t period_ns;
	struct process_states *states;
	struct thread_registry *reg;
	bool proc_labels;
	const char *node;
	struct calltrace_storage *traces;
	struct perf_map_stats *perf_maps; /* NULL: perf maps not read */
	struct hotspot_stats *hotspot;	  /* NULL: JVMs' tables not read */
	struct python_procs *python;	  /* NULL: Python frames named by reason only */
	uint64_t begin_ns;		  /* CLOCK_MONOTONIC: perf maps refreshed once since */
	const struct export_match *match;
	size_t nr_match;
	enum export_labels labels;
	int err;
	struct export_result *res;
	struct export_result result;
};

static bool trace_locs_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct trace_locs *tl = ctx;

	return tl[idx].trace_id == *(const uint64_t *)key;
}

static int map_put(struct exporter *st, uint64_t trace_id, size_t first, size_t nr,
		   struct process_state *ps, const char *off_class)
{
	int err;

	err = array_grow((void **)&st->trace_locs, &st->trace_locs_cap, st->nr_trace_locs + 1,
			 sizeof(*st->trace_locs), 1024);
	if (err)
		return err;
	err = htable__insert(&st->trace_locs_idx, hash_u64(trace_id), st->nr_trace_locs);
	if (err)
		return err;
	st->trace_locs[st->nr_trace_locs++] =
		(struct trace_locs){trace_id, first, nr, ps, off_class};
	return 0;
}

static const struct trace_locs *map_get(const struct exporter *st, uint64_t trace_id)
{
	uint32_t idx = htable__find(&st->trace_locs_idx, hash_u64(trace_id), trace_locs_eq,
				    st->trace_locs, &trace_id);

	return idx == HTABLE_NONE ? NULL : &st->trace_locs[idx];
}

static int push_loc(struct exporter *st, uint64_t loc)
{
	int err;

	if (!loc)
		return -ENOMEM;
	err = array_grow((void **)&st->locs, &st->cap_locs, st->nr_locs + 1, sizeof(*st->locs),
			 4096);
	if (err)
		return err;
	st->locs[st->nr_locs++] = loc;
	return 0;
}

/* one frame -> one pprof location: mapping and function as far as known */
static uint64_t frame_location(struct exporter *st, const struct sym_frame *f, uint64_t addr)
{
	struct pprof_mapping m = {
		.memory_start = f->map_start,
		.memory_limit = f->map_end,
		.file_offset = f->map_pgoff,
		.filename = f->mapping_path,
		.build_id = f->build_id,
		.has_functions = f->function != NULL,
	};
	struct pprof_line lines[SYM_FRAME_MAX_INLINE + 1];
	size_t before = pprof__nr_locations(st->p), n = 0;
	uint64_t mapping = 0, function = 0, loc;
	uint32_t i;

	if (f->mapping_path) {
		mapping = pprof__mapping(st->p, &m);
		if (!mapping)
			return 0;
	}
	/* the calls inlined there, innermost first, each a Line of its own */
	for (i = 0; f->function && i < f->nr_inlined; i++) {
		const struct sym_inline *in = &f->inlined[i];

		lines[n].function_id = pprof__function(st->p, in->function, in->function, in->file);
		if (!lines[n].function_id)
			return 0;
		lines[n++].line = in->line;
	}
	if (f->function) {
		/* name: for reading (no version, demangled); system_name: as the table has it */
		function = pprof__function(st->p, f->function, f->system_name, f->file);
		if (!function)
			return 0;
		lines[n].function_id = function;
		lines[n++].line = f->line;
	}
	loc = pprof__location_lines(st->p, mapping, addr, lines, n);
	/* a location is new once: count addresses, not lookups */
	if (loc && pprof__nr_locations(st->p) != before) {
		st->res->locations_unnamed += !function;
		st->res->locations_unmapped += !mapping;
	}
	return loc;
}

/*
 * What the root of a stack that ended early says, as a frame of its own: a
 * stack is never silently short.  NULL: the stack is whole (or, walked by
 * frame pointers on request, its end is unknown; or it ends at a Go runtime
 * function that switched stacks, runtime.systemstack or mcall, which says
 * so itself and is counted).
 */
static const char *stop_marker(uint32_t flags)
{
	switch (SAMPLE_USTOP(flags)) {
	case UNWIND_STOP_TRUNCATED:
		return "[truncated: deeper than 127 frames]";
	case UNWIND_STOP_NO_MAPPING:
		return "[unwind stopped: return address in no known mapping]";
	case UNWIND_STOP_NO_CFI:
		return "[unwind stopped: no CFI for the code]";
	case UNWIND_STOP_UNSUPPORTED:
		return "[unwind stopped: CFI the unwinder cannot follow]";
	case UNWIND_STOP_READ_ERR:
		return "[unwind stopped: stack unreadable]";
	case UNWIND_STOP_BAD_FRAME:
		return "[unwind stopped: corrupt frame]";
	case UNWIND_STOP_NO_TABLE_YET:
		return "[frame pointers: unwind tables not ready yet]";
	case UNWIND_STOP_JIT_NO_FP:
		return "[unwind stopped: JIT code without a frame pointer]";
	default:
		return NULL;
	}
}

static int push_marker(struct exporter *st, const char *name)
{
	uint64_t function = pprof__function(st->p, name, name, NULL);

	return push_loc(st, function ? pprof__location(st->p, 0, 0, function) : 0);
}

/* code with no file behind it, where a JIT puts what it compiles (as perf's "//anon") */
static bool anonymous_code(const char *path)
{
	return !path[0] || !strncmp(path, "[anon:", 6);
}

/*
 * @ps's JVM, looked for once, at the first export that sees anonymous code
 * in it (outside its lock: reads of files and of the process)
 */
static void hotspot_look(struct exporter *st, struct process_state *ps)
{
	struct proc_maps *all;

	if (!st->hotspot || ps->hotspot_looked)
		return;
	ps->hotspot_looked = true;
	all = proc_maps__read((pid_t)ps->pid);
	if (!all)
		return;
	ps->hotspot = hotspot_proc__open((pid_t)ps->pid, all, st->hotspot, 0);
	proc_maps__free(all);
}

/*
 * Read what is new in @ps's perf map, once per export and process image,
 * before its frames are named (and outside its lock: a read of a file): a
 * process that has anonymous executable code gets one, the others are not
 * looked for.  A retired image's pid may be another process's by now: its
 * map keeps what was read.
 */
static void perf_map_check(struct exporter *st, struct process_state *ps)
{
	const struct mappings *snap;
	bool jit = false, retired;
	unsigned int i;

	if ((!st->perf_maps && !st->hotspot) || ps->perf_map_checked_ns >= st->begin_ns)
		return;
	ps->perf_map_checked_ns = st->begin_ns;
	pthread_mutex_lock(&ps->lock);
	retired = ps->retired;
	snap = mappings_history__latest(&ps->maps);
	for (i = 0; !ps->perf_map && snap && i < snap->nr && !jit; i++)
		jit = anonymous_code(snap->maps[i].path);
	pthread_mutex_unlock(&ps->lock);
	if (retired || (!ps->perf_map && !jit))
		return;
	if (jit)
		hotspot_look(st, ps);
	if (!st->perf_maps)
		return;
	if (!ps->perf_map)
		ps->perf_map = perf_map__new((pid_t)ps->pid, st->sym);
	if (ps->perf_map)
		perf_map__refresh(ps->perf_map, st->perf_maps);
}

/*
 * A frame in anonymous code, or a leaf in no known mapping, named as perf
 * names it: from its process's perf map (a return address at @addr - 1).
 */
static void perf_map_name(struct exporter *st, const struct process_state *ps, uint64_t addr,
			  bool ra, struct sym_frame *f)
{
	const char *name;

	if (!st->perf_maps || !ps->perf_map || (ra && !addr))
		return;
	name = perf_map__lookup(ps->perf_map, addr - ra);
	if (!name)
		return;
	f->function = f->system_name = name;
	st->perf_maps->frames_named++;
}

/* a JIT frame: a JVM's compiled code from its tables first, its perf map after */
static void jit_name(struct exporter *st, struct process_state *ps, uint64_t addr, bool ra,
		     struct sym_frame *f)
{
	const char *name;

	if (ps->hotspot && st->hotspot && !(ra && !addr)) {
		name = hotspot_proc__name(ps->hotspot, addr - ra, st->hotspot);
		if (name) {
			f->function = f->system_name = name;
			return;
		}
	}
	perf_map_name(st, ps, addr, ra, f);
}

/* a Python frame (include/python_abi.h) -> a location without mapping, named by its code object */
static uint64_t python_location(struct exporter *st, struct process_state *ps, uint64_t w1,
				uint64_t w2)
{
	struct python_frame pf;
	struct pprof_line line;

	if (ps && !ps->python && st->python)
		python_procs__look(st->python, ps);
	python_proc__frame(st->python, ps ? ps->python : NULL, w1, w2, &pf);
	/* no system name: the pprof tool "demangles" a function whose system
	 * name is its name, and strips "<module>" to nothing as a C++ template */
	line.function_id = pprof__function_at(st->p, pf.function, NULL, pf.file, pf.start_line);
	if (!line.function_id)
		return 0;
	line.line = pf.line;
	st->res->python_frames++;
	st->res->python_unnamed += !pf.named;
	return pprof__location_lines(st->p, 0, 0, &line, 1);
}

/*
 * The user frames of @t, named from its process image's mappings.  A return
 * address outside every executable mapping (a frame-pointer walk through
 * code without frame pointers) is garbage: the stack is cut there, marked
 * and counted, never shown as a frame.  Without the image's mappings (a
 * process gone before they were read) no return address can be vouched for:
 * the stack keeps its leaf and says so.
 */
static void add_user_frames(struct exporter *st, const struct calltrace *t,
			    struct process_state *ps)
{
	uint32_t gen = t->flags >> PROCESS_STATE_GEN_SHIFT & MAPPINGS_GEN_MASK;
	char uncertain[PROC_MAPS_MAX_PATH + 64];
	const char *marker = stop_marker(t->flags);
	enum mappings_find why;
	const struct mapping *m;
	struct sym_frame f;
	unsigned int i;
	uint64_t addr;
	bool ra;

	if (ps)
		pthread_mutex_lock(&ps->lock);
	for (i = 0; i < t->nr_uframes && !st->err; i++) {
		addr = t->frames[t->nr_kframes + i];
		if (PYTHON_FRAME_IS(addr)) {
			/* two words; a lone first word (cut by the stack's end) is no frame */
			if (i + 1 < t->nr_uframes)
				st->err = push_loc(
					st, python_location(st, ps, addr,
							    t->frames[t->nr_kframes + i + 1]));
			i++;
			continue;
		}
		/* every user frame but the interrupted instruction is a return
		 * address, unless a signal frame saved it */
		ra = i > 0 && !(addr & SAMPLE_FRAME_EXACT);
		addr &= ~SAMPLE_FRAME_EXACT;
		why = MAPPINGS_FOUND;
		m = ps && addr >= ra ? mappings_history__find_gen(&ps->maps, addr - ra, gen, &why)
				     : NULL;
		if (!m && i > 0) {
			st->res->stacks_cut++;
			st->res->frames_cut += t->nr_uframes - i;
			marker = ps ? "[unwind stopped: return address outside executable mappings]"
				    : "[unwind stopped: the process's mappings are unknown]";
			break;
		}
		if (m)
			symbolizer__user(st->sym, m, addr, ra, &f);
		else
			memset(&f, 0, sizeof(f));
		/* JIT code: the mapping stays anonymous (or none), the function is
		 * named by the JVM's own tables, else by the perf map */
		if (ps && !f.function && why == MAPPINGS_FOUND && (!m || anonymous_code(m->path)))
			jit_name(st, ps, addr, ra, &f);
		/*
		 * The file it was in is not known for sure: never another file's
		 * function, nor its build id (a symbol server would name the frame
		 * from it), and a name of its own so that pprof does not
		 * symbolize it from whatever file has that path now.
		 */
		if (m && why != MAPPINGS_FOUND) {
			snprintf(uncertain, sizeof(uncertain), "[%s: replaced before it was read]",
				 m->path[0] ? m->path : "anonymous code");
			f.function = f.system_name = uncertain;
			f.build_id = NULL;
			f.file = NULL;
			f.line = 0;
			f.nr_inlined = 0;
			st->res->frames_uncertain++;
		}
		st->err = push_loc(st, frame_location(st, &f, addr));
	}
	if (ps)
		pthread_mutex_unlock(&ps->lock);
	if (marker && !st->err)
		st->err = push_marker(st, marker);
}

/*
 * The class of a wait, from the innermost kernel function that tells (the
 * frames leaf first: schedule() and the like come before what called
 * them); NULL when @fn does not tell.
 */
static const char *off_cpu_class(const char *fn)
{
	static const struct {
		const char *part, *class;
	} kinds[] = {
		{"futex", "lock"},
		{"rwsem", "lock"},
		{"mutex_lock", "lock"},
		{"nanosleep", "sleep"},
		{"msleep", "sleep"},
		{"pipe_", "network"},
		{"unix_stream", "network"},
		{"sock", "network"},
		{"tcp_", "network"},
		{"udp_", "network"},
		{"ep_poll", "network"},
		{"do_select", "network"},
		{"do_sys_poll", "network"},
		{"fsync", "io"},
		{"sync_file", "io"},
		{"io_schedule", "io"},
		{"blk_", "io"},
		{"jbd2", "io"},
		{"folio_wait", "io"},
		{"wait_on_page", "io"},
		{"filemap_", "io"},
		{"wait_for_completion", "other"},
		{"do_wait", "other"},
	};
	size_t i;

	for (i = 0; fn && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strstr(fn, kinds[i].part))
			return kinds[i].class;
	return NULL;
}

static void add_trace(void *ctx, const struct calltrace *t)
{
	const char *off_class = NULL;
	struct exporter *st = ctx;
	size_t first = st->nr_locs;
	struct process_state *ps;
	struct sym_frame f;
	unsigned int i;
	uint64_t addr;

	if (st->err)
		return;
	for (i = 0; i < t->nr_kframes; i++) {
		addr = t->frames[i];
		symbolizer__kernel(st->sym, addr, i > 0, &f);
		if ((t->flags & SAMPLE_F_OFFCPU) && !off_class)
			off_class = off_cpu_class(f.function);
		st->err = push_loc(st, frame_location(st, &f, addr));
		if (st->err)
			return;
	}
	ps = st->states ? process_states__find(st->states, st->reg, t->pid, t->exec_id) : NULL;
	if (ps)
		perf_map_check(st, ps);
	add_user_frames(st, t, ps);
	if (st->err)
		return;
	if ((t->flags & SAMPLE_F_OFFCPU) && !off_class)
		off_class = "other";
	st->err = map_put(st, t->trace_id, first, st->nr_locs - first, ps, off_class);
	st->res->traces++;
}

/* a row's labels at most: ours, libctxprof's, OpenTelemetry's, the goroutine's */
#define ROW_MAX_LABELS (12 + SAMPLER_NR_TAGS + 2 * OTEL_CONTEXT_MAX_LABELS + GO_LABELS_MAX)

/* add a string label unless one of that key is there (the first one wins) */
static void add_str_label(struct pprof_label *labels, size_t *n, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(labels[i].key, key))
			return;
	labels[(*n)++] = (struct pprof_label){.key = key, .str = value};
}

/*
 * Labels of a row: thread, process, and its trace context when it has one.
 * Policy between a thread's OpenTelemetry record and its libctxprof slot
 * (OTEP 4947 asks readers to document it): the OpenTelemetry record is
 * authoritative for what it carries.  When it names a trace, its trace_id
 * and span_id are the sample's and libctxprof's span_id and
 * local_root_span_id are left out (they would name another span); its
 * attributes win over a libctxprof tag of the same key, and over a
 * resource attribute of the same key.  A record that is absent or not
 * valid leaves the libctxprof context as it was.  A goroutine's labels
 * come next: a Go program's own, they win over libctxprof's and the
 * resource's, not over the OpenTelemetry record's.
 */
static size_t row_labels(const struct exporter *st, const struct sample_row *row,
			 struct process_state *ps, struct pprof_label *labels, char (*hex)[17],
			 struct otel_label_buf *obuf, struct go_label_buf *gbuf)
{
	struct go_label_str gl[GO_LABELS_MAX];
	struct otel_label ol[OTEL_CONTEXT_MAX_LABELS];
	struct otel_proc *otel = ps ? ps->otel : NULL;
	bool otel_ids = row->otel && otel_thread_ctx__has_ids(row->otel);
	const char *key, *value;
	size_t n = 0, no, j;
	int i;

	labels[n++] = (struct pprof_label){.key = "thread_id", .num = row->tid};
	labels[n++] = (struct pprof_label){.key = "thread_name", .str = row->comm};
	labels[n++] = (struct pprof_label){.key = "pid", .num = row->pid};
	if (st->proc_labels && ps) {
		if (ps->comm[0])
			labels[n++] = (struct pprof_label){.key = "comm", .str = ps->comm};
		if (ps->container_id[0])
			labels[n++] = (struct pprof_label){.key = "container_id",
							   .str = ps->container_id};
		if (ps->kube.pod[0]) {
			labels[n++] = (struct pprof_label){.key = "pod", .str = ps->kube.pod};
			labels[n++] = (struct pprof_label){.key = "namespace", .str = ps->kube.ns};
			labels[n++] =
				(struct pprof_label){.key = "container", .str = ps->kube.container};
		}
	}
	if (st->node)
		labels[n++] = (struct pprof_label){.key = "node", .str = st->node};
	if (row->otel) {
		no = otel_context__thread_labels(otel, row->otel, ol, obuf);
		for (j = 0; j < no; j++)
			add_str_label(labels, &n, ol[j].key, ol[j].value);
	}
	if (row->go) {
		no = go_labels__labels(go_labels__of(ps ? ps->go : NULL), row->go, gl, gbuf);
		for (j = 0; j < no; j++)
			add_str_label(labels, &n, gl[j].key, gl[j].value);
	}
	if (row->has_context) {
		if (row->span_id && !otel_ids) {
			snprintf(hex[0], sizeof(hex[0]), "%016llx",
				 (unsigned long long)row->span_id);
			add_str_label(labels, &n, "span_id", hex[0]);
		}
		if (row->local_root_span_id && !otel_ids) {
			snprintf(hex[1], sizeof(hex[1]), "%016llx",
				 (unsigned long long)row->local_root_span_id);
			add_str_label(labels, &n, "local_root_span_id", hex[1]);
		}
		for (i = 0; i < SAMPLER_NR_TAGS; i++) {
			if (!row->tags[i])
				continue;
			if (ps && !app_context__tag(ps->app, row->tags[i], &key, &value))
				add_str_label(labels, &n, key, value);
			else
				labels[n++] = (struct pprof_label){.key = "ctxprof_tag_id",
								   .num = row->tags[i]};
		}
	}
	no = otel_context__resource_labels(otel, ol);
	for (j = 0; j < no; j++)
		add_str_label(labels, &n, ol[j].key, ol[j].value);
	return n;
}

/* whether @labels carry every label of the match list */
static bool row_matches(const struct exporter *st, const struct pprof_label *labels, size_t n)
{
	char num[24];
	size_t i, j;
	bool found;

	for (i = 0; i < st->nr_match; i++) {
		found = false;
		for (j = 0; j < n && !found; j++) {
			if (strcmp(labels[j].key, st->match[i].key))
				continue;
			if (!labels[j].str) {
				snprintf(num, sizeof(num), "%lld", (long long)labels[j].num);
				found = !strcmp(num, st->match[i].value);
			} else {
				found = !strcmp(labels[j].str, st->match[i].value);
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/* the labels EXPORT_LABELS_SPANS keeps, in place; Return: how many */
static size_t span_labels_only(struct pprof_label *labels, size_t n)
{
	static const char *const keep[] = {"span_id", "local_root_span_id", "trace_id"};
	size_t i, j, m = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < sizeof(keep) / sizeof(keep[0]); j++)
			if (!strcmp(labels[i].key, keep[j])) {
				labels[m++] = labels[i];
				break;
			}
	return m;
}

static void add_row(void *ctx, const struct sample_row *row)
{
	struct exporter *st = ctx;
	const struct trace_locs *tl;
	const uint64_t *locs;
	size_t nr_locs;
	struct pprof_label labels[ROW_MAX_LABELS];
	struct otel_label_buf obuf;
	struct go_label_buf gbuf;
	char hex[2][17];
	/* samples, cpu; with --off-cpu also off_cpu, and wall: the one of the two it has */
	int64_t values[4] = {(int64_t)row->count, (int64_t)(row->count * st->period_ns), 0,
			     (int64_t)(row->count * st->period_ns)};
	size_t n;

	if (st->err)
		return;
	/* a trace put after the rotation, counted before the flip, is still ACTIVE */
	if (exporter__trace_frames(st, row->trace_id, &locs, &nr_locs)) {
		st->res->no_trace += row->count;
		return;
	}
	tl = map_get(st, row->trace_id);
	n = row_labels(st, row, tl->ps, labels, hex, &obuf, &gbuf);
	if (st->nr_match && !row_matches(st, labels, n)) {
		st->res->unmatched += row->count;
		return;
	}
	if (st->labels == EXPORT_LABELS_SPANS)
		n = span_labels_only(labels, n);
	if (tl->off_class) {
		/* a wait: no CPU sample, its time in off_cpu/nanoseconds */
		values[0] = values[1] = 0;
		values[2] = values[3] = (int64_t)row->off_ns;
		labels[n++] = (struct pprof_label){.key = "off_cpu_class", .str = tl->off_class};
	}
	st->err = pprof__add_sample(st->p, locs, nr_locs, values, labels, n);
	if (st->err)
		return;
	if (tl->off_class) {
		st->res->off_waits += row->count;
		st->res->off_ns += row->off_ns;
	} else {
		st->res->samples += row->count;
	}
	st->res->rows++;
}

struct exporter *exporter__new(struct calltrace_storage *traces, struct symbolizer *sym,
			       const struct export_opts *opts)
{
	static const struct pprof_value_type types[] = {
		{"samples", "count"},
		{"cpu", "nanoseconds"},
		{"off_cpu", "nanoseconds"},
		/* on the CPU (sampled) or off it (recorded waits): where a span's time went */
		{"wall", "nanoseconds"},
	};
	struct exporter *e;
	const char *const *c;
	int err = 0;

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->sym = sym;
	e->period_ns = opts->period_ns;
	e->states = opts->states;
	e->reg = opts->reg;
	e->proc_labels = opts->proc_labels;
	e->node = opts->node;
	e->traces = traces;
	e->perf_maps = opts->perf_maps;
	e->hotspot = opts->hotspot;
	e->python = opts->python;
	e->match = opts->match;
	e->nr_match = opts->nr_match;
	e->labels = opts->labels;
	e->begin_ns = mono_ns();
	e->res = &e->result;
	/* the waits' types only when they are recorded: profiles without them are as before */
	e->p = pprof__new(types, opts->off_cpu ? 4 : 2, types[1], (int64_t)opts->period_ns);
	if (!e->p) {
		err = -errno;
		goto err_free;
	}
	/* pprof shows the last type unless told: CPU stays what a profile opens on */
	pprof__set_default_type(e->p, 1);
	pprof__set_time(e->p, opts->time_nanos, opts->duration_nanos);
	for (c = opts->comments; c && *c; c++) {
		err = pprof__add_comment(e->p, *c);
		if (err)
			goto err_free;
	}
	return e;

err_free:
	exporter__free(e);
	errno = -err;
	return NULL;
}

struct exporter *exporter__begin(struct calltrace_storage *traces, struct symbolizer *sym,
				 const struct export_opts *opts)
{
	struct exporter *e = exporter__new(traces, sym, opts);
	int err;

	if (!e)
		return NULL;
	calltrace_storage__process(traces, add_trace, e);
	err = e->err;
	if (err) {
		exporter__free(e);
		errno = -err;
		return NULL;
	}
	return e;
}

int exporter__add_samples(struct exporter *e, const struct sample_table *samples)
{
	sample_table__for_each(samples, add_row, e);
	return e->err;
}

int exporter__add_row(struct exporter *e, const struct sample_row *row)
{
	add_row(e, row);
	return e->err;
}

struct process_state *exporter__row_state(struct exporter *e, const struct sample_row *row)
{
	const uint64_t *locs;
	size_t nr;

	if (exporter__trace_frames(e, row->trace_id, &locs, &nr))
		return NULL;
	return map_get(e, row->trace_id)->ps;
}

int exporter__trace_frames(struct exporter *e, uint64_t trace_id, const uint64_t **locs, size_t *nr)
{
	const struct trace_locs *tl = map_get(e, trace_id);
	const struct calltrace *t;

	if (!tl && !e->err) {
		/* put after the rotation (or, for an exporter of no rotation,
		 * in the cycle the last one handed over) */
		t = calltrace_storage__lookup(e->traces, trace_id);
		if (t) {
			add_trace(e, t);
			e->res->traces--;
			tl = map_get(e, trace_id);
		}
	}
	if (!tl)
		return e->err ? e->err : -ENOENT;
	*locs = e->locs + tl->first;
	*nr = tl->nr;
	return 0;
}

const char *exporter__trace_wait_class(const struct exporter *e, uint64_t trace_id)
{
	const struct trace_locs *tl = map_get(e, trace_id);

	return tl ? tl->off_class : NULL;
}

const struct pprof *exporter__pprof(const struct exporter *e)
{
	return e->p;
}

/* the profile's table sizes into the result, as it is written */
static void count_tables(struct exporter *e)
{
	e->result.locations = pprof__nr_locations(e->p);
	e->result.functions = pprof__nr_functions(e->p);
	e->result.mappings = pprof__nr_mappings(e->p);
}

void exporter__result(struct exporter *e, struct export_result *res)
{
	count_tables(e);
	*res = e->result;
}

int exporter__write(struct exporter *e, const char *path, struct output_keep *keep,
		    struct export_result *res)
{
	int err;

	count_tables(e);
	err = pprof__write_gz(e->p, path, keep);
	*res = e->result;
	return err;
}

int exporter__gz(struct exporter *e, size_t max, uint8_t **gz, size_t *gz_len,
		 struct export_result *res)
{
	int err;

	*gz = NULL;
	*gz_len = 0;
	if (e->err)
		return e->err;
	count_tables(e);
	err = pprof__gz(e->p, max, gz, gz_len);
	*res = e->result;
	return err;
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	pprof__free(e->p);
	free(e->trace_locs);
	htable__destroy(&e->trace_locs_idx);
	free(e->locs);
	free(e);
}
