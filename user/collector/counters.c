// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * counters - the one description of every counter, and the values read
 * for it; counters_output.c makes the summary lines and /metrics samples
 * from them.  See counters.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collector/state.h"
#include "collector/counters.h"
#include "util/clock.h"

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "export_result's size_t counts read as u64");

#define V(field) offsetof(struct counter_values, field)

static const char *sampler_name(unsigned int i)
{
	return sampler_stat_name(i);
}

static const char *drain_name(unsigned int i)
{
	return drain_drop_name(i);
}

static const char *condition_name(unsigned int i)
{
	return health_condition_name(i);
}

static const char *perf_map_skip(unsigned int i)
{
	return perf_map_skip_name(i);
}

static const char *vmstructs_error(unsigned int i)
{
	return vmstructs__error_name((enum vmstructs_error)i);
}

/* --- the families: one per Prometheus metric */
#define FAMILY(id, n, t, h, l)                                                                     \
	static const struct metrics_family id = {                                                  \
		.name = n, .type = METRICS_##t, .help = h, .label = l}

/* samples */
FAMILY(f_taken, "ctxprof_samples_taken_total", COUNTER,
       "Samples the BPF program took of profiled threads.", NULL);
FAMILY(f_in_profile, "ctxprof_samples_in_profile_total", COUNTER, "Samples written into profiles.",
       NULL);
FAMILY(f_dropped, "ctxprof_samples_dropped_total", COUNTER,
       "Samples lost, by reason (taken = in profile + dropped once exported).", "reason");
FAMILY(f_stack_errors, "ctxprof_stack_errors_total", COUNTER,
       "Samples whose user or kernel stack could not be read (samples kept).", "stack");
FAMILY(f_stack_ends, "ctxprof_user_stacks_total", COUNTER,
       "User stacks by how they end (CPU samples', and with --off-cpu waits' as they block).",
       "end");
FAMILY(f_frames, "ctxprof_user_frames_total", COUNTER,
       "User frames by how the unwinder found them.", "method");
FAMILY(f_go_switches, "ctxprof_go_stack_switches_total", COUNTER,
       "Go stack switches (systemstack, mcall, morestack) met by the unwinder, by result.",
       "result");
/* the sampling rate and the CPUs */
FAMILY(f_sampling_hz, "ctxprof_sampling_frequency_hz", GAUGE,
       "Samples per second per CPU requested (-F).", NULL);
FAMILY(f_run_hz, "ctxprof_sampling_run_hz", GAUGE,
       "Samples per second of busy sampled CPU since sampling began (every tick on a task, "
       "profiled or not; idle time does not count).",
       NULL);
FAMILY(f_effective_hz, "ctxprof_sampling_effective_hz", GAUGE,
       "Samples per second of busy sampled CPU over the last seconds (every tick on a task, "
       "profiled or not; idle time does not count).",
       NULL);
FAMILY(f_lowest_hz, "ctxprof_sampling_lowest_hz", GAUGE,
       "The lowest rate per sampled CPU over the last seconds so far.", NULL);
FAMILY(f_max_rate, "ctxprof_perf_event_max_sample_rate", GAUGE,
       "kernel.perf_event_max_sample_rate: the kernel throttles above it.", NULL);
FAMILY(f_throttled, "ctxprof_sampling_throttled", GAUGE,
       "1 while the effective rate is below 90 % of the requested one.", NULL);
FAMILY(f_throttled_s, "ctxprof_sampling_throttled_seconds_total", COUNTER,
       "Seconds the effective rate was below 90 % of the requested one.", NULL);
FAMILY(f_cpus_online, "ctxprof_cpus_online", GAUGE, "Online CPUs.", NULL);
FAMILY(f_cpus_sampled, "ctxprof_cpus_sampled", GAUGE,
       "CPUs with a perf event (fewer than online: some CPU is not sampled).", NULL);
FAMILY(f_hotplug, "ctxprof_cpu_hotplug_total", COUNTER,
       "CPUs seen to go offline and to come online.", "event");
FAMILY(f_open_failures, "ctxprof_cpu_event_open_failures_total", COUNTER,
       "Failed attempts to open the perf event of an online CPU.", NULL);
/* unwinding */
FAMILY(f_tables_built, "ctxprof_unwind_tables_built_total", COUNTER,
       "Unwind tables built from files' CFI.", NULL);
FAMILY(f_tables_debug, "ctxprof_unwind_tables_from_debug_file_total", COUNTER,
       "Unwind tables built from a separate debug file's CFI (of those built).", NULL);
FAMILY(f_build_seconds, "ctxprof_unwind_table_build_seconds_total", COUNTER,
       "Time spent building unwind tables.", NULL);
FAMILY(f_build_max, "ctxprof_unwind_table_build_max_seconds", GAUGE,
       "The longest unwind table build so far.", NULL);
FAMILY(f_tables_shared, "ctxprof_unwind_tables_shared_total", COUNTER,
       "Unwind tables found already built (same file in another process).", NULL);
FAMILY(f_tables_evicted, "ctxprof_unwind_tables_evicted_total", COUNTER,
       "Unwind tables evicted to stay within --unwind-memory.", NULL);
FAMILY(f_table_errors, "ctxprof_unwind_table_errors_total", COUNTER,
       "Files left without an unwind table, by reason.", "reason");
FAMILY(f_reinstalls, "ctxprof_unwind_reinstalls_total", COUNTER,
       "Processes' mappings installed again when a table they waited for landed.", NULL);
FAMILY(f_building, "ctxprof_unwind_tables_building", GAUGE,
       "Files whose unwind table is queued or being built now.", NULL);
FAMILY(f_abandoned, "ctxprof_unwind_builds_abandoned_total", COUNTER,
       "Table builds not begun: the file was gone first (built if seen again).", NULL);
FAMILY(f_installs, "ctxprof_unwind_installs_total", COUNTER,
       "Processes' mappings installed for the unwinder, or not (its maps full).", "result");
FAMILY(f_tables, "ctxprof_unwind_tables", GAUGE, "Unwind tables in BPF maps.", NULL);
FAMILY(f_rows, "ctxprof_unwind_rows", GAUGE, "Unwind rows in BPF maps.", NULL);
FAMILY(f_unwind_used, "ctxprof_unwind_memory_used_bytes", GAUGE, "BPF memory the unwind rows take.",
       NULL);
FAMILY(f_unwind_held, "ctxprof_unwind_memory_bytes", GAUGE,
       "BPF memory the unwinder's maps hold: the row chunks made (1 MiB each, as tables land), "
       "rules, mappings and processes whole.",
       NULL);
FAMILY(f_unwind_chunks, "ctxprof_unwind_row_chunks", GAUGE,
       "Chunks of unwind rows made (at most --unwind-memory's).", NULL);
FAMILY(f_unwind_chunk_errors, "ctxprof_unwind_row_chunk_errors_total", COUNTER,
       "Chunks of unwind rows that could not be made (their tables go without).", NULL);
FAMILY(f_unwind_limit, "ctxprof_unwind_memory_limit_bytes", GAUGE,
       "BPF memory for unwind tables (--unwind-memory).", NULL);
/* processes */
FAMILY(f_processes, "ctxprof_processes", GAUGE, "Live processes the collector tracks.", NULL);
FAMILY(f_threads, "ctxprof_threads", GAUGE, "Live threads the collector tracks.", NULL);
FAMILY(f_lifecycle, "ctxprof_lifecycle_events_total", COUNTER,
       "Fork, exec, exit and rename events applied.", NULL);
FAMILY(f_lifecycle_lost, "ctxprof_lifecycle_events_lost_total", COUNTER,
       "Lifecycle events lost in BPF (ring full).", NULL);
FAMILY(f_snapshots, "ctxprof_mapping_snapshots_total", COUNTER,
       "Mapping snapshots taken at exec and fork.", NULL);
FAMILY(f_proc_reads, "ctxprof_lifecycle_proc_reads_total", COUNTER,
       "Execs (and forks into another cgroup) completed by a read of /proc/PID.", NULL);
FAMILY(f_exe_known, "ctxprof_lifecycle_exe_known_total", COUNTER,
       "Execs of a file read before under the same name: its path known, /proc not read.", NULL);
FAMILY(f_followed, "ctxprof_processes_followed_total", COUNTER,
       "Processes added to the profiled tree (--children).", NULL);
/* libctxprof trace context */
FAMILY(f_context, "ctxprof_trace_context_reads_total", COUNTER,
       "libctxprof trace context reads by result (CPU samples, and with --off-cpu waits as they "
       "block).",
       "result");
FAMILY(f_regions, "ctxprof_context_regions_total", COUNTER,
       "libctxprof regions mapped and validated, or refused.", "result");
FAMILY(f_ctx_threads, "ctxprof_context_threads", GAUGE,
       "Threads whose libctxprof slot the sampler reads.", NULL);
FAMILY(f_claims_refused, "ctxprof_context_claims_refused_total", COUNTER,
       "libctxprof slot claims refused (not a thread of the process, or a slot taken).", NULL);
FAMILY(f_claims_full, "ctxprof_context_claims_map_full_total", COUNTER,
       "libctxprof slot claims that did not fit the sampler's map.", NULL);
FAMILY(f_tags, "ctxprof_context_tags", GAUGE, "libctxprof tag ids known.", NULL);
FAMILY(f_dict_replays, "ctxprof_context_dictionary_replays_total", COUNTER,
       "libctxprof tag dictionaries asked for again (on attach, on unknown ids at export).", NULL);
FAMILY(f_tag_records, "ctxprof_context_tag_records_total", COUNTER,
       "libctxprof dictionary records drained.", NULL);
FAMILY(f_tag_records_again, "ctxprof_context_tag_records_again_total", COUNTER,
       "libctxprof dictionary records drained for a tag id known already (replays).", NULL);
FAMILY(f_tag_ids_unknown, "ctxprof_context_tag_ids_unknown_total", COUNTER,
       "Sample tags exported as a bare ctxprof_tag_id: no dictionary record named the id.", NULL);
FAMILY(f_tags_dropped, "ctxprof_context_tag_records_refused_total", COUNTER,
       "libctxprof dictionary records refused (table full, bad id).", NULL);
FAMILY(f_span_events, "ctxprof_context_span_events_total", COUNTER,
       "libctxprof span begin and end events drained.", NULL);
FAMILY(f_lane_errors, "ctxprof_context_lane_errors_total", COUNTER,
       "Malformed libctxprof lane content skipped.", NULL);
FAMILY(f_lane_consumer, "ctxprof_context_lane_consumer_total", COUNTER,
       "libctxprof lanes and another collector: drain passes refused (it holds them), lanes "
       "taken over (it was silent for 5 s), passes stopped (it took them).",
       "event");
FAMILY(f_regions_shut_down, "ctxprof_context_regions_shut_down", GAUGE,
       "libctxprof regions whose application called ctxprof_shutdown().", NULL);
FAMILY(f_lib_events, "ctxprof_context_library_events_total", COUNTER,
       "Span events and tag records libctxprof's threads made, by their own count: generated, "
       "and of them refused (the application had called ctxprof_shutdown()).",
       "event");
/* OpenTelemetry */
FAMILY(f_otel_processes, "ctxprof_otel_processes_total", COUNTER,
       "Process images whose OpenTelemetry process context was read.", NULL);
FAMILY(f_otel_reads, "ctxprof_otel_process_context_reads_total", COUNTER,
       "OpenTelemetry process context payloads read and decoded.", NULL);
FAMILY(f_otel_errors, "ctxprof_otel_process_context_errors_total", COUNTER,
       "OpenTelemetry process contexts refused or unread, by reason.", "reason");
FAMILY(f_otel_skipped, "ctxprof_otel_values_skipped_total", COUNTER,
       "OpenTelemetry process attribute values skipped (not strings, too long, not UTF-8).", NULL);
FAMILY(f_otel_schemas, "ctxprof_otel_unknown_thread_schemas_total", COUNTER,
       "OpenTelemetry thread context schemas this collector does not know.", NULL);
FAMILY(f_otel_located, "ctxprof_otel_thread_context_located_total", COUNTER,
       "Process images' OpenTelemetry thread context variables, located or not, by result.",
       "result");
FAMILY(f_otel_thread, "ctxprof_otel_thread_context_reads_total", COUNTER,
       "OpenTelemetry thread context reads by result (CPU samples, and with --off-cpu waits as "
       "they block).",
       "result");
FAMILY(f_otel_unknown_keys, "ctxprof_otel_unknown_keys_total", COUNTER,
       "OpenTelemetry thread attributes ignored: no name for their key index.", NULL);
FAMILY(f_otel_key_refreshes, "ctxprof_otel_key_refreshes_total", COUNTER,
       "OpenTelemetry process contexts read again for an unknown key index.", NULL);
FAMILY(f_otel_truncated, "ctxprof_otel_truncated_records_total", COUNTER,
       "OpenTelemetry thread records whose attributes end inside an entry.", NULL);
FAMILY(f_otel_bad_values, "ctxprof_otel_bad_values_total", COUNTER,
       "OpenTelemetry thread attribute values that are no label (not UTF-8, NUL).", NULL);
/* Go goroutine labels */
FAMILY(f_go_processes, "ctxprof_go_label_processes_total", COUNTER,
       "Go programs' process images, by whether their goroutine labels are read.", "result");
FAMILY(f_go_reads, "ctxprof_go_label_reads_total", COUNTER,
       "Goroutine label reads in samples, by result.", "result");
FAMILY(f_go_bad_values, "ctxprof_go_label_bad_values_total", COUNTER,
       "Goroutine labels left out at export: key or value not UTF-8, or a NUL.", NULL);
/* CPython frames */
FAMILY(f_py_processes, "ctxprof_python_processes_total", COUNTER,
       "CPython process images, by whether their Python frames are read.", "result");
FAMILY(f_py_samples, "ctxprof_python_samples_total", COUNTER,
       "Samples with Python frames in place of the interpreter's.", NULL);
FAMILY(f_py_frames, "ctxprof_python_frames_total", COUNTER, "Python frames placed in samples.",
       NULL);
FAMILY(f_py_walks, "ctxprof_python_walks_total", COUNTER,
       "Python frame walks that ended short or found none, by reason.", "result");
FAMILY(f_py_names, "ctxprof_python_code_objects_total", COUNTER,
       "Code objects read at export, by result.", "result");
FAMILY(f_py_retried, "ctxprof_python_code_objects_named_on_retry_total", COUNTER,
       "Code objects named by a read after a first that failed (their memory mapped after "
       "the process's maps were read, or the object half made), counted in the named ones.",
       NULL);
FAMILY(f_py_written, "ctxprof_last_profile_python_frames", GAUGE,
       "Python frames in the last profile written: all, and those named by a reason only.",
       "frames");
/* off-CPU waits */
FAMILY(f_off_recorded, "ctxprof_off_cpu_waits_total", COUNTER,
       "Off-CPU waits of profiled threads recorded (emitted by the sampler).", NULL);
FAMILY(f_off_skipped, "ctxprof_off_cpu_waits_skipped_total", COUNTER,
       "Voluntary switches out not recorded, by reason: back within the threshold, or "
       "sampled away past the budget (the recorded ones weigh more).",
       "reason");
FAMILY(f_off_dropped, "ctxprof_off_cpu_waits_dropped_total", COUNTER,
       "Off-CPU waits lost, by reason.", "reason");
FAMILY(f_off_switches, "ctxprof_off_cpu_switches_total", COUNTER,
       "Voluntary switches out of profiled threads seen.", NULL);
FAMILY(f_off_captured, "ctxprof_off_cpu_captures_total", COUNTER,
       "Stacks and context taken at a switch out (each a wait, recorded or below the "
       "threshold).",
       NULL);
FAMILY(f_off_unreported, "ctxprof_off_cpu_unreported_switch_ins_total", COUNTER,
       "Waits whose switch back in the kernel did not report (no sched_switch event): "
       "ended at the thread's next switch out, less the CPU time it ran since.",
       NULL);
FAMILY(f_off_profile_waits, "ctxprof_last_profile_off_cpu_waits", GAUGE,
       "Off-CPU waits in the last profile written.", NULL);
FAMILY(f_off_profile, "ctxprof_last_profile_off_cpu_seconds", GAUGE,
       "Off-CPU time in the last profile written (scaled by the waits' weights).", NULL);
/* the profile and its symbols */
FAMILY(f_stacks, "ctxprof_profile_stacks_total", COUNTER,
       "Distinct stacks written, summed over profiles.", NULL);
FAMILY(f_locations, "ctxprof_last_profile_locations", GAUGE,
       "Locations in the last profile written.", NULL);
FAMILY(f_functions, "ctxprof_last_profile_functions", GAUGE,
       "Functions in the last profile written.", NULL);
FAMILY(f_mappings, "ctxprof_last_profile_mappings", GAUGE, "Mappings in the last profile written.",
       NULL);
FAMILY(f_symbol_errors, "ctxprof_symbolization_errors_total", COUNTER,
       "Symbol lookups that found no name or no mapping, and ELF files that could not be read "
       "or were refused.",
       "kind");
FAMILY(f_elf_read, "ctxprof_elf_files_read_total", COUNTER, "ELF files read for symbols.", NULL);
FAMILY(f_elf_by_path, "ctxprof_elf_files_by_path_total", COUNTER,
       "ELF files opened by path because /proc/PID/map_files was refused.", NULL);
FAMILY(f_names, "ctxprof_symbol_names_total", COUNTER,
       "Frames named from a source other than the file's own symbol tables.", "source");
FAMILY(f_demangled, "ctxprof_symbols_demangled_total", COUNTER,
       "Distinct mangled symbols, demangled or left as they are.", "result");
FAMILY(f_debug_files, "ctxprof_debug_files_total", COUNTER,
       "Separate debug files used, missing, or candidates refused, by result.", "result");
FAMILY(f_minidebug, "ctxprof_minidebuginfo_total", COUNTER,
       "MiniDebugInfo sections merged or ignored, by result.", "result");
FAMILY(f_gopclntab, "ctxprof_gopclntab_total", COUNTER,
       "Go programs without symbols whose .gopclntab was read or ignored, by result.", "result");
FAMILY(f_elf_shared, "ctxprof_elf_files_shared_total", COUNTER,
       "ELF files found parsed already under their build id.", NULL);
FAMILY(f_elf_by_stat, "ctxprof_elf_files_by_stat_total", COUNTER,
       "Mappings whose file was found parsed already by its identity (a stat, no open).", NULL);
FAMILY(f_sym_files, "ctxprof_symbol_cache_files", GAUGE, "ELF files whose symbols are cached.",
       NULL);
FAMILY(f_sym_bytes, "ctxprof_symbol_cache_bytes", GAUGE,
       "Memory the cached files' parsed symbols hold.", NULL);
FAMILY(f_sym_limit, "ctxprof_symbol_cache_limit_bytes", GAUGE,
       "Memory the cached symbols are kept within (--symbol-memory).", NULL);
FAMILY(f_sym_perf_maps, "ctxprof_symbol_cache_perf_map_bytes", GAUGE,
       "Memory processes' perf maps hold, counted against --symbol-memory.", NULL);
FAMILY(f_sym_evicted, "ctxprof_symbol_cache_evicted_total", COUNTER,
       "Cached files let go: no mapping holds them and idle, or to make room.", NULL);
FAMILY(f_sym_refused, "ctxprof_symbol_cache_refused_total", COUNTER,
       "Parsed files not kept: past --symbol-memory (their frames are named by mapping).", NULL);
FAMILY(f_loc_unnamed, "ctxprof_last_profile_locations_unnamed", GAUGE,
       "Locations of the last profile without a function name.", NULL);
FAMILY(f_loc_unmapped, "ctxprof_last_profile_locations_unmapped", GAUGE,
       "Locations of the last profile in no known mapping.", NULL);
FAMILY(f_uncertain, "ctxprof_frames_named_by_mapping_total", COUNTER,
       "User frames named by their mapping alone: another file was at their address by the "
       "next read, or their mapping left the history.",
       NULL);
/* perf maps: JIT code's names */
FAMILY(f_pm_reads, "ctxprof_perf_map_reads_total", COUNTER,
       "Reads of processes' perf maps (/tmp/perf-PID.map, JIT code's names) that found new "
       "lines.",
       NULL);
FAMILY(f_pm_rereads, "ctxprof_perf_map_rereads_total", COUNTER,
       "Perf maps read again from the start: replaced, truncated or rewritten.", NULL);
FAMILY(f_pm_entries, "ctxprof_perf_map_lines_total", COUNTER,
       "Perf map lines kept: ranges of JIT code named.", NULL);
FAMILY(f_pm_overlapping, "ctxprof_perf_map_lines_overlapping_total", COUNTER,
       "Perf map lines kept whose range overlaps another line's (the later line names the "
       "overlap).",
       NULL);
FAMILY(f_pm_skipped, "ctxprof_perf_map_lines_skipped_total", COUNTER,
       "Perf map lines not kept, by reason.", "reason");
FAMILY(f_pm_refused, "ctxprof_perf_maps_refused_total", COUNTER,
       "Perf maps refused (not a regular file, not the process's user's) or read only in part "
       "(too big), once per process image.",
       "reason");
/* HotSpot JVMs: compiled code named from the JVM's own tables */
FAMILY(f_hs_jvms, "ctxprof_hotspot_jvms_total", COUNTER,
       "JVM process images whose VMStructs tables were read (read) or whose libjvm.so could not "
       "be read (unreadable).",
       "result");
FAMILY(f_hs_refused, "ctxprof_hotspot_layouts_refused_total", COUNTER,
       "JVMs whose VMStructs tables were refused, by why: their frames stay unnamed.", "reason");
FAMILY(f_hs_frames, "ctxprof_hotspot_frames_total", COUNTER,
       "JIT frames in JVMs' code caches: named as a Java method, named by their code blob "
       "(interpreter, stubs), or not named (left to the perf map).",
       "result");
FAMILY(f_hs_methods, "ctxprof_hotspot_methods_read_total", COUNTER,
       "Compiled methods' names read from JVMs (each nmethod once).", NULL);
FAMILY(f_maps_reads, "ctxprof_maps_reads_total", COUNTER,
       "/proc/PID/maps reads, unchanged ones included.", NULL);
FAMILY(f_maps_changed, "ctxprof_maps_reads_changed_total", COUNTER,
       "/proc/PID/maps reads whose text had changed.", NULL);
FAMILY(f_maps_bad, "ctxprof_maps_bad_lines_total", COUNTER,
       "Unparsable lines in /proc/PID/maps, skipped.", NULL);
FAMILY(f_maps_snapshots, "ctxprof_mappings_changes_total", COUNTER,
       "Snapshots of a process's executable mappings added (they changed).", NULL);
FAMILY(f_maps_inherited, "ctxprof_mappings_inherited_total", COUNTER,
       "Forked children started with their parent's mappings.", NULL);
FAMILY(f_map_events_on, "ctxprof_mapping_events_on", GAUGE,
       "1 when the kernel reports each new executable mapping (PERF_RECORD_MMAP2).", NULL);
FAMILY(f_map_events, "ctxprof_mapping_events_total", COUNTER,
       "New executable mappings the kernel reported.", NULL);
FAMILY(f_map_applied, "ctxprof_mapping_events_applied_total", COUNTER,
       "Reported new executable mappings applied to their process's mappings.", NULL);
FAMILY(f_map_events_lost, "ctxprof_mapping_events_lost_total", COUNTER,
       "Reports of new executable mappings lost (ring full, malformed, batch full).", NULL);
FAMILY(f_map_events_gaps, "ctxprof_mapping_events_gaps_total", COUNTER,
       "CPUs whose mapping reports had a gap (offline, then back).", NULL);
FAMILY(f_maps_events_lost, "ctxprof_mappings_events_lost_total", COUNTER,
       "Mapping changes not delivered to the main thread's readers: queue full (retried).", NULL);
/* timelines and per-thread traces */
FAMILY(f_tl_threads, "ctxprof_timeline_threads", GAUGE, "Threads in the last timeline.", NULL);
FAMILY(f_tl_spans, "ctxprof_timeline_spans", GAUGE, "Span slices in the last timeline.", NULL);
FAMILY(f_tl_unmatched, "ctxprof_timeline_span_ends_unmatched", GAUGE,
       "Span ends in the last timeline whose span was not open.", NULL);
FAMILY(f_tl_lost, "ctxprof_timeline_span_events_lost", GAUGE,
       "Span begins or ends the last timeline's samples show but its events lack.", "event");
FAMILY(f_tl_slices, "ctxprof_timeline_stack_slices", GAUGE, "Stack slices in the last timeline.",
       NULL);
FAMILY(f_tl_samples, "ctxprof_timeline_samples", GAUGE, "Samples replayed into the last timeline.",
       NULL);
FAMILY(f_tl_waits, "ctxprof_timeline_waits", GAUGE,
       "Off-CPU waits replayed into the last timeline (--off-cpu).", NULL);
FAMILY(f_tl_no_stack, "ctxprof_timeline_samples_no_stack", GAUGE,
       "Samples and waits of the last timeline whose stack was no longer stored.", NULL);
FAMILY(f_events, "ctxprof_trace_events_total", COUNTER, "Per-thread trace events recorded.", NULL);
FAMILY(f_events_replayed, "ctxprof_trace_events_replayed_total", COUNTER,
       "Per-thread trace events written into timelines.", NULL);
FAMILY(f_events_lost, "ctxprof_trace_events_lost_total", COUNTER,
       "Per-thread trace events lost, by reason.", "reason");
FAMILY(f_span_left_out, "ctxprof_timeline_span_events_left_out_total", COUNTER,
       "libctxprof span events left out of timelines, by reason.", "reason");
FAMILY(f_seeds, "ctxprof_trace_seeds_total", COUNTER,
       "Thread state (name, open spans) copied into new trace parts, and handed to timelines "
       "after the events it repeats were recycled.",
       "event");
FAMILY(f_parts, "ctxprof_trace_parts", GAUGE, "Per-thread trace parts of 4 KiB allocated.", NULL);
FAMILY(f_replay_bytes, "ctxprof_trace_replay_max_bytes", GAUGE,
       "The largest copy one replay made of a thread's events.", NULL);
/* exports */
FAMILY(f_files, "ctxprof_files_written_total", COUNTER, "Profile files written.", NULL);
FAMILY(f_write_failed, "ctxprof_file_writes_failed_total", COUNTER,
       "File writes that failed (the file is kept in memory, or dropped).", NULL);
FAMILY(f_files_kept, "ctxprof_files_kept_total", COUNTER,
       "Files kept in memory after a failed write.", NULL);
FAMILY(f_written_late, "ctxprof_files_written_late_total", COUNTER,
       "Files written from memory after a failed write.", NULL);
FAMILY(f_files_dropped, "ctxprof_files_dropped_total", COUNTER,
       "Files never written: no room left in memory for them, or still unwritten at the end.",
       NULL);
FAMILY(f_pending, "ctxprof_files_pending", GAUGE, "Files kept in memory, to be written again.",
       NULL);
FAMILY(f_pending_bytes, "ctxprof_files_pending_bytes", GAUGE, "Bytes of the files kept in memory.",
       NULL);
FAMILY(f_pending_limit, "ctxprof_files_pending_limit_bytes", GAUGE,
       "The bound on the bytes of files kept in memory.", NULL);
FAMILY(f_exports, "ctxprof_exports_total", COUNTER, "Profile exports by result.", "result");
FAMILY(f_last_export_time, "ctxprof_last_export_timestamp_seconds", GAUGE,
       "When the last successful export ended, since the Unix epoch (0: none yet).", NULL);
FAMILY(f_last_export_duration, "ctxprof_last_export_duration_seconds", GAUGE,
       "How long the last successful export took.", NULL);
FAMILY(f_last_export_ok, "ctxprof_last_export_success", GAUGE,
       "1 unless the latest export attempt failed.", NULL);
/* health, the HTTP server */
FAMILY(f_degraded, "ctxprof_degraded", GAUGE,
       "1 while a condition that leaves the profile incomplete holds (/healthz: degraded).",
       "condition");
FAMILY(f_degraded_raised, "ctxprof_degraded_raised_total", COUNTER,
       "Times each degraded condition was raised.", "condition");
FAMILY(f_http_conns, "ctxprof_http_connections_total", COUNTER,
       "Connections accepted by the /metrics and /healthz listeners.", "listener");
FAMILY(f_http_requests, "ctxprof_http_requests_total", COUNTER,
       "Requests answered by the /metrics and /healthz listeners.", "listener");
FAMILY(f_http_evicted, "ctxprof_http_connections_evicted_total", COUNTER,
       "Connections shut down to make room for a newcomer (the address holding the most "
       "loses its oldest).",
       "listener");
FAMILY(f_http_log, "ctxprof_http_log_messages_suppressed_total", COUNTER,
       "HTTP server messages not logged (at most one every 10 s).", NULL);
/* the BPF programs, as the kernel accounts them (kernel.bpf_stats_enabled, --bpf-stats) */
FAMILY(f_bpf_runs, "ctxprof_bpf_runs_total", COUNTER,
       "Runs of the sampler's BPF programs (counted while BPF run-time statistics are on).",
       "program");
FAMILY(f_bpf_time, "ctxprof_bpf_run_seconds_total", COUNTER,
       "Run time of the sampler's BPF programs (counted while BPF run-time statistics are on).",
       "program");
/* the collector itself */
/* /debug/pprof/profile */
FAMILY(f_pprof_received, "ctxprof_pprof_requests_received_total", COUNTER,
       "/debug/pprof/profile requests received.", NULL);
FAMILY(f_pprof_requests, "ctxprof_pprof_requests_total", COUNTER,
       "/debug/pprof/profile requests, by how they ended.", "result");
FAMILY(f_pprof_pending, "ctxprof_pprof_requests_pending", GAUGE,
       "/debug/pprof/profile requests being profiled now.", NULL);
FAMILY(f_pprof_samples, "ctxprof_pprof_samples_total", COUNTER,
       "CPU samples in the profiles /debug/pprof/profile served.", NULL);
FAMILY(f_pprof_left_out, "ctxprof_pprof_samples_left_out_total", COUNTER,
       "Samples of a scrape's window not in its profile, by reason.", "reason");
FAMILY(f_pprof_late, "ctxprof_pprof_windows_late_total", COUNTER,
       "Scrape windows that opened late (the main thread stalled).", NULL);
/* --push */
FAMILY(f_push_profiles, "ctxprof_push_profiles_total", COUNTER,
       "Profiles for the store, by what became of them (queued + restored = sent + dropped + "
       "kept + pending).",
       "result");
FAMILY(f_push_samples, "ctxprof_push_samples_total", COUNTER,
       "CPU samples in those profiles, by what became of them.", "result");
FAMILY(f_push_dropped, "ctxprof_push_profiles_dropped_total", COUNTER,
       "Profiles never sent, by reason.", "reason");
FAMILY(f_push_dropped_samples, "ctxprof_push_samples_dropped_total", COUNTER,
       "CPU samples of profiles never sent, by reason.", "reason");
FAMILY(f_push_attempts, "ctxprof_push_attempts_total", COUNTER, "Uploads begun.", NULL);
FAMILY(f_push_retries, "ctxprof_push_retries_total", COUNTER, "Uploads of a profile tried before.",
       NULL);
FAMILY(f_push_failures, "ctxprof_push_failures_total", COUNTER,
       "Uploads to be tried again: no answer (refused, reset, timed out), or 408, 429, 5xx.",
       "kind");
FAMILY(f_push_bytes, "ctxprof_push_bytes_sent_total", COUNTER,
       "Bytes of gzipped profiles the store took.", NULL);
FAMILY(f_push_pending, "ctxprof_push_pending_profiles", GAUGE, "Profiles waiting to be sent.",
       NULL);
FAMILY(f_push_pending_bytes, "ctxprof_push_pending_bytes", GAUGE,
       "Bytes of the profiles waiting to be sent.", NULL);
FAMILY(f_push_limit, "ctxprof_push_spool_limit_bytes", GAUGE,
       "The bound on those bytes (--push-spool).", NULL);
FAMILY(f_push_spool, "ctxprof_push_spool_files_total", COUNTER,
       "Spool directory files: written for a failed upload, not writable, found bad at start.",
       "result");
FAMILY(f_push_secrets, "ctxprof_push_secret_reads_total", COUNTER,
       "Token or password files read again after a change, by result.", "result");
FAMILY(f_push_failing, "ctxprof_push_failing", GAUGE, "1 while the latest upload failed.", NULL);
FAMILY(f_push_status, "ctxprof_push_last_status", GAUGE,
       "The store's latest HTTP status (0: none yet, or no answer).", NULL);
FAMILY(f_push_unmade, "ctxprof_push_profiles_unmade_total", COUNTER,
       "Series profiles that could not be made (no memory): their samples are not pushed.", NULL);
FAMILY(f_cpu, "process_cpu_seconds_total", COUNTER, "User and system CPU time of the collector.",
       NULL);
FAMILY(f_drain_cpu, "ctxprof_drain_cpu_seconds_total", COUNTER,
       "CPU time of the drain threads (part of process_cpu_seconds_total).", NULL);
FAMILY(f_drained, "ctxprof_drain_records_total", COUNTER,
       "Records the drain threads took from the rings.", NULL);
FAMILY(f_rss, "process_resident_memory_bytes", GAUGE, "Resident memory of the collector.", NULL);
FAMILY(f_start_time, "process_start_time_seconds", GAUGE,
       "Start time of the collector since the Unix epoch.", NULL);

/* the family counters__dropped() sums (counters_output.c) */
const struct metrics_family *const counters_dropped_family = &f_dropped;

/* --- the table: summary order within each section */
#define ONE(fam, lbl, sect, w, off, ...)                                                           \
	{                                                                                          \
		.kind = COUNTER_VALUE, .family = &(fam), .label = (lbl), .section = (sect),        \
		.words = (w), .offset = V(off), __VA_ARGS__                                        \
	}
#define RANGE(fam, sect, off, n, fn, from, ...)                                                    \
	{                                                                                          \
		.kind = COUNTER_RANGE, .family = &(fam), .section = (sect), .offset = V(off),      \
		.count = (n), .name = (fn), .first = (from), __VA_ARGS__                           \
	}

#define S_(i) sampler[SAMPLER_STAT_##i]

const struct counter_desc counter_descs[] = {
	/* samples: 9958 taken, 9958 in profile, 0 dropped (tests parse this line) */
	ONE(f_taken, NULL, COUNTERS_SAMPLES, "taken", S_(SAMPLES)),
	ONE(f_in_profile, NULL, COUNTERS_SAMPLES, "in profile", exported),
	{.kind = COUNTER_SUM,
	 .family = &f_dropped,
	 .section = COUNTERS_SAMPLES,
	 .words = "dropped"},
	/* dropped by reason: ring_full=0 ... no_trace=0 */
	RANGE(f_dropped, COUNTERS_DROPS, S_(DROP_FIRST),
	      SAMPLER_STAT_DROP_LAST - SAMPLER_STAT_DROP_FIRST + 1, sampler_name,
	      SAMPLER_STAT_DROP_FIRST),
	RANGE(f_dropped, COUNTERS_DROPS, drains.drops, DRAIN_DROP_MAX, drain_name, 0),
	ONE(f_dropped, "no_trace", COUNTERS_DROPS, NULL, no_trace),
	ONE(f_dropped, "unwritten", COUNTERS_DROPS, NULL, queue.dropped_samples),
	/* sampling rate: 99 Hz requested, 98 Hz effective per CPU (97 in the last
	 * seconds, lowest 95); perf_event_max_sample_rate=...; throttled (below
	 * 90 %) for 0 s (test_throttle.sh reads it) */
	ONE(f_sampling_hz, NULL, COUNTERS_SAMPLING, "{} Hz requested", sampling.requested_hz,
	    .unit = COUNTER_NUMBER),
	ONE(f_run_hz, NULL, COUNTERS_SAMPLING, "{} Hz effective per CPU", sampling.run_hz,
	    .unit = COUNTER_NUMBER, .flags = COUNTER_KNOWN),
	ONE(f_effective_hz, NULL, COUNTERS_SAMPLING, "({} in the last seconds",
	    sampling.effective_hz, .unit = COUNTER_NUMBER, .flags = COUNTER_KNOWN | COUNTER_JOIN),
	ONE(f_lowest_hz, NULL, COUNTERS_SAMPLING, "lowest {})", sampling.lowest_hz,
	    .unit = COUNTER_NUMBER, .flags = COUNTER_KNOWN),
	ONE(f_max_rate, NULL, COUNTERS_SAMPLING, "perf_event_max_sample_rate={}",
	    sampling.max_sample_rate, .unit = COUNTER_NUMBER,
	    .flags = COUNTER_KNOWN | COUNTER_GROUP | COUNTER_LIMIT),
	ONE(f_throttled_s, NULL, COUNTERS_SAMPLING, "throttled (below 90 %) for {} s",
	    sampling.throttled_checks, .flags = COUNTER_GROUP),
	ONE(f_throttled, NULL, COUNTERS_SAMPLING, "still at the end", sampling.throttled,
	    .flags = COUNTER_NONZERO | COUNTER_WORDS),
	/* CPUs: 2 online, 2 sampled; hotplug: 1 went offline, 1 came online; 0 event
	 * opens failed (test_hotplug.sh reads it) */
	ONE(f_cpus_online, NULL, COUNTERS_CPUS, "online", sampling.cpus_online),
	ONE(f_cpus_sampled, NULL, COUNTERS_CPUS, "sampled", sampling.cpus_sampled),
	ONE(f_hotplug, "offline", COUNTERS_CPUS, "hotplug: {} went offline", sampling.cpus_offlined,
	    .flags = COUNTER_GROUP),
	ONE(f_hotplug, "online", COUNTERS_CPUS, "came online", sampling.cpus_onlined),
	ONE(f_open_failures, NULL, COUNTERS_CPUS, "event opens failed", sampling.open_failed,
	    .flags = COUNTER_GROUP),
	ONE(f_stack_errors, "user", COUNTERS_STACK_ERRORS, NULL, S_(USTACK_ERR)),
	ONE(f_stack_errors, "kernel", COUNTERS_STACK_ERRORS, NULL, S_(KSTACK_ERR)),
	/* user stacks by how they end: complete always, the others when they happened */
	RANGE(f_stack_ends, COUNTERS_STACK_ENDS, S_(USTOP_FIRST), 1, sampler_name,
	      SAMPLER_STAT_USTOP_FIRST),
	RANGE(f_stack_ends, COUNTERS_STACK_ENDS, sampler[SAMPLER_STAT_USTOP_FIRST + 1],
	      UNWIND_STOP_MAX - 1, sampler_name, SAMPLER_STAT_USTOP_FIRST + 1,
	      .flags = COUNTER_NONZERO),
	ONE(f_stack_ends, "cut_outside_mappings", COUNTERS_STACK_ENDS,
	    "cut at a return address outside executable mappings={}", stacks_cut,
	    .flags = COUNTER_GROUP),
	ONE(f_uncertain, NULL, COUNTERS_STACK_ENDS,
	    "frames named by mapping only (another file there by the next read)={}",
	    frames_uncertain, .flags = COUNTER_GROUP),

	/* unwinding */
	ONE(f_frames, "cfi", COUNTERS_UNWINDING, "frames by CFI", S_(UFRAMES_CFI)),
	ONE(f_frames, "plt", COUNTERS_UNWINDING, "by PLT stubs", S_(UFRAMES_PLT)),
	ONE(f_frames, "signal", COUNTERS_UNWINDING, "through signal frames", S_(UFRAMES_SIGNAL)),
	ONE(f_frames, "frame_pointer", COUNTERS_UNWINDING, "by frame pointer", S_(UFRAMES_FP)),
	/* Go stack switches: go_switch_followed=... */
	RANGE(f_go_switches, COUNTERS_UNWINDING, S_(GO_SWITCH_OK),
	      SAMPLER_STAT_GO_SWITCH_BAD_STATE - SAMPLER_STAT_GO_SWITCH_OK + 1, sampler_name,
	      SAMPLER_STAT_GO_SWITCH_OK, .flags = COUNTER_GROUP | COUNTER_NONZERO),
	ONE(f_tables_built, NULL, COUNTERS_UNWINDING, "tables built", unwind.tables_built,
	    .flags = COUNTER_GROUP),
	ONE(f_tables_debug, NULL, COUNTERS_UNWINDING, "of them from a debug file's CFI",
	    unwind.tables_from_debug_file),
	ONE(f_build_seconds, NULL, COUNTERS_UNWINDING, "building them", unwind.build_ns,
	    .unit = COUNTER_NS),
	ONE(f_build_max, NULL, COUNTERS_UNWINDING, "the longest {}", unwind.build_max_ns,
	    .unit = COUNTER_NS),
	ONE(f_tables_shared, NULL, COUNTERS_UNWINDING, "shared", unwind.tables_shared),
	ONE(f_table_errors, "no_cfi", COUNTERS_UNWINDING, "files without CFI", unwind.files_no_cfi),
	ONE(f_table_errors, "unreadable", COUNTERS_UNWINDING, "unreadable",
	    unwind.files_unreadable),
	ONE(f_table_errors, "failed", COUNTERS_UNWINDING, "failed", unwind.tables_failed),
	/* "too slow N" (test_hostile_elf.sh reads them so) */
	ONE(f_table_errors, "too_slow", COUNTERS_UNWINDING, "too slow {}", unwind.tables_too_slow),
	ONE(f_table_errors, "too_large", COUNTERS_UNWINDING, "too large {}",
	    unwind.tables_too_large),
	ONE(f_table_errors, "cancelled", COUNTERS_UNWINDING, "cancelled {}",
	    unwind.tables_cancelled),
	ONE(f_table_errors, "no_room", COUNTERS_UNWINDING, "with no room", unwind.tables_no_room),
	ONE(f_tables_evicted, NULL, COUNTERS_UNWINDING, "evicted", unwind.tables_evicted),
	ONE(f_building, NULL, COUNTERS_UNWINDING, "being built", unwind.tables_building),
	ONE(f_abandoned, NULL, COUNTERS_UNWINDING, "builds abandoned (the file gone first)",
	    unwind.builds_abandoned),
	ONE(f_installs, "installed", COUNTERS_UNWINDING, "processes' mappings installed",
	    unwind.installs, .flags = COUNTER_GROUP),
	ONE(f_reinstalls, NULL, COUNTERS_UNWINDING, "again when a table landed", unwind.reinstalls),
	ONE(f_installs, "failed", COUNTERS_UNWINDING, "not (maps full)", unwind.install_failed),
	ONE(f_installs, "gone", COUNTERS_UNWINDING, "skipped (the process exited first)",
	    unwind.install_gone),
	ONE(f_rows, NULL, COUNTERS_UNWINDING, "rows", unwind.rows, .flags = COUNTER_GROUP),
	ONE(f_tables, NULL, COUNTERS_UNWINDING, "tables in BPF maps", unwind.tables_cached),
	ONE(f_unwind_used, NULL, COUNTERS_UNWINDING, "used", unwind_bytes, .unit = COUNTER_BYTES),
	ONE(f_unwind_held, NULL, COUNTERS_UNWINDING, "{} held in BPF maps", unwind.store.bytes,
	    .unit = COUNTER_BYTES),
	ONE(f_unwind_chunks, NULL, COUNTERS_UNWINDING, "({} row chunks", unwind.store.chunks,
	    .flags = COUNTER_JOIN),
	ONE(f_unwind_chunk_errors, NULL, COUNTERS_UNWINDING, "{} refused)",
	    unwind.store.chunk_errors),
	ONE(f_unwind_limit, NULL, COUNTERS_UNWINDING, "allowed (--unwind-memory)",
	    unwind.store.bytes_max, .unit = COUNTER_BYTES),

	/* mappings: 12 reads of /proc/PID/maps (3 changed, 0 bad lines), 3 snapshots, ... */
	ONE(f_maps_reads, NULL, COUNTERS_MAPPINGS, "reads of /proc/PID/maps", states.reads),
	ONE(f_maps_changed, NULL, COUNTERS_MAPPINGS, "({} changed", states.reads_changed,
	    .flags = COUNTER_JOIN),
	ONE(f_maps_bad, NULL, COUNTERS_MAPPINGS, "{} bad lines)", states.bad_lines),
	ONE(f_maps_snapshots, NULL, COUNTERS_MAPPINGS, "snapshots", states.snapshots),
	ONE(f_maps_inherited, NULL, COUNTERS_MAPPINGS, "taken from a parent at fork",
	    states.inherited),
	ONE(f_maps_events_lost, NULL, COUNTERS_MAPPINGS, "deliveries queued again (queue full)",
	    states.events_lost),
	ONE(f_map_events_on, NULL, COUNTERS_MAPPINGS, "the kernel reports new executable mappings",
	    mapping_events_on, .flags = COUNTER_GROUP | COUNTER_WORDS | COUNTER_NONZERO),
	ONE(f_map_events, NULL, COUNTERS_MAPPINGS, "reported", tracker.mapping_events,
	    .have = COUNTERS_HAVE_MAPPING_EVENTS),
	ONE(f_map_applied, NULL, COUNTERS_MAPPINGS, "({} applied)", states.mapped,
	    .flags = COUNTER_JOIN, .have = COUNTERS_HAVE_MAPPING_EVENTS),
	ONE(f_map_events_lost, NULL, COUNTERS_MAPPINGS, "reports lost", tracker.mapping_events_lost,
	    .have = COUNTERS_HAVE_MAPPING_EVENTS),
	ONE(f_map_events_gaps, NULL, COUNTERS_MAPPINGS, "CPUs with a gap",
	    tracker.mapping_events_gaps, .have = COUNTERS_HAVE_MAPPING_EVENTS),

	/* processes (--all, --children) */
	ONE(f_processes, NULL, COUNTERS_PROCESSES, "live", tracker.processes),
	ONE(f_threads, NULL, COUNTERS_PROCESSES, "threads", tracker.threads),
	ONE(f_lifecycle, NULL, COUNTERS_PROCESSES, "lifecycle events", tracker.events,
	    .flags = COUNTER_GROUP),
	ONE(f_lifecycle_lost, NULL, COUNTERS_PROCESSES, "lost", tracker.dropped),
	ONE(f_snapshots, NULL, COUNTERS_PROCESSES, "exec/fork snapshots", tracker.snapshots,
	    .flags = COUNTER_GROUP),
	ONE(f_proc_reads, NULL, COUNTERS_PROCESSES, "reads of /proc/PID at exec",
	    tracker.proc_reads, .flags = COUNTER_GROUP),
	ONE(f_exe_known, NULL, COUNTERS_PROCESSES, "execs of a known file (not read)",
	    tracker.exe_known),
	ONE(f_followed, NULL, COUNTERS_PROCESSES, "processes followed in the tree (--children)",
	    tracker.tracked, .have = COUNTERS_HAVE_CHILDREN),

	/* trace context (libctxprof) */
	ONE(f_context, "ok", COUNTERS_CONTEXT, "samples with a valid context", S_(CTX_OK)),
	ONE(f_context, "empty", COUNTERS_CONTEXT, "empty", S_(CTX_EMPTY)),
	ONE(f_context, "torn", COUNTERS_CONTEXT, "torn (rejected)", S_(CTX_TORN)),
	ONE(f_context, "unreadable", COUNTERS_CONTEXT, "unreadable", S_(CTX_READ_ERR)),
	ONE(f_context, "stale", COUNTERS_CONTEXT, "stale (slot changed hands)", S_(CTX_STALE)),
	ONE(f_regions, "valid", COUNTERS_CONTEXT, "regions", app.regions, .flags = COUNTER_GROUP),
	ONE(f_regions, "refused", COUNTERS_CONTEXT, "refused", app.regions_rejected),
	ONE(f_ctx_threads, NULL, COUNTERS_CONTEXT, "threads", app.threads, .flags = COUNTER_GROUP),
	ONE(f_claims_refused, NULL, COUNTERS_CONTEXT, "claims refused", app.threads_rejected),
	ONE(f_claims_full, NULL, COUNTERS_CONTEXT, "claims with no room in the sampler's map",
	    app.map_full),
	ONE(f_tags, NULL, COUNTERS_CONTEXT, "tags", app.tags, .flags = COUNTER_GROUP),
	ONE(f_dict_replays, NULL, COUNTERS_CONTEXT, "dictionary replays requested",
	    app.dict_replays),
	ONE(f_tag_records, NULL, COUNTERS_CONTEXT, "tag records", app.tag_records),
	ONE(f_tag_records_again, NULL, COUNTERS_CONTEXT, "of them for a known id",
	    app.tag_records_again),
	ONE(f_tags_dropped, NULL, COUNTERS_CONTEXT, "tag records refused", app.tags_dropped),
	ONE(f_tag_ids_unknown, NULL, COUNTERS_CONTEXT, "tag ids unknown at export",
	    app.tag_ids_unknown),
	ONE(f_span_events, NULL, COUNTERS_CONTEXT, "span events", app.span_events,
	    .flags = COUNTER_GROUP),
	ONE(f_lane_errors, NULL, COUNTERS_CONTEXT, "lane errors", app.lane_errors),
	ONE(f_lane_consumer, "refused", COUNTERS_CONTEXT,
	    "drain passes refused: another collector holds the lanes", app.lane_passes_refused),
	ONE(f_lane_consumer, "takeover", COUNTERS_CONTEXT, "lanes taken from a silent collector",
	    app.lane_takeovers),
	ONE(f_lane_consumer, "lost", COUNTERS_CONTEXT, "drain passes stopped: lanes taken",
	    app.lane_passes_lost),
	ONE(f_regions_shut_down, NULL, COUNTERS_CONTEXT, "regions shut down by their application",
	    app.regions_shut_down),
	ONE(f_lib_events, "generated", COUNTERS_CONTEXT, "events generated by the threads",
	    app.events_generated),
	ONE(f_lib_events, "refused", COUNTERS_CONTEXT, "of them refused after shutdown",
	    app.events_refused),

	/* OpenTelemetry process context, and where thread context was found */
	ONE(f_otel_processes, NULL, COUNTERS_OTEL_PROCESS, "processes", otel.processes),
	ONE(f_otel_reads, NULL, COUNTERS_OTEL_PROCESS, "reads", otel.reads),
	ONE(f_otel_errors, "bad_header", COUNTERS_OTEL_PROCESS, "refused headers", otel.bad_header),
	ONE(f_otel_errors, "bad_payload", COUNTERS_OTEL_PROCESS, "bad payloads", otel.bad_payload),
	ONE(f_otel_errors, "read_error", COUNTERS_OTEL_PROCESS, "read errors", otel.read_errors),
	ONE(f_otel_errors, "mid_update", COUNTERS_OTEL_PROCESS, "found mid-update", otel.updating),
	ONE(f_otel_skipped, NULL, COUNTERS_OTEL_PROCESS, "values skipped", otel.skipped_values),
	ONE(f_otel_schemas, NULL, COUNTERS_OTEL_PROCESS, "unknown thread schemas",
	    otel.other_schema),
	ONE(f_otel_located, "found", COUNTERS_OTEL_PROCESS,
	    "thread context located in {} processes", otel.tls_found, .flags = COUNTER_GROUP),
	ONE(f_otel_located, "no_symbol", COUNTERS_OTEL_PROCESS, "without their symbol",
	    otel.tls_no_symbol),
	ONE(f_otel_located, "unsupported", COUNTERS_OTEL_PROCESS, "unsupported",
	    otel.tls_unsupported),
	ONE(f_otel_located, "unreadable", COUNTERS_OTEL_PROCESS, "unreadable", otel.tls_unreadable),
	ONE(f_otel_located, "map_full", COUNTERS_OTEL_PROCESS, "with no room in the sampler's map",
	    otel.map_full),
	/* OpenTelemetry thread context: otel_ok=... (tests parse the names) */
	RANGE(f_otel_thread, COUNTERS_OTEL_THREAD, S_(OTEL_OK),
	      SAMPLER_STAT_OTEL_ATTRS_ERR - SAMPLER_STAT_OTEL_OK + 1, sampler_name,
	      SAMPLER_STAT_OTEL_OK),
	ONE(f_otel_unknown_keys, NULL, COUNTERS_OTEL_THREAD, "unknown keys", otel.unknown_keys,
	    .flags = COUNTER_GROUP),
	ONE(f_otel_key_refreshes, NULL, COUNTERS_OTEL_THREAD, "key map refreshes",
	    otel.key_refreshes),
	ONE(f_otel_truncated, NULL, COUNTERS_OTEL_THREAD, "truncated records",
	    otel.attrs_truncated),
	ONE(f_otel_bad_values, NULL, COUNTERS_OTEL_THREAD, "bad values", otel.bad_values),

	/* Go goroutine labels: the programs, then the reads go_labels_ok=... (tests parse them) */
	ONE(f_go_processes, "read", COUNTERS_GO_LABELS, "read in {} Go processes", go.processes),
	ONE(f_go_processes, "unsupported_version", COUNTERS_GO_LABELS, "unsupported: {} by version",
	    go.unsupported_version),
	ONE(f_go_processes, "unsupported_build", COUNTERS_GO_LABELS, "{} by build",
	    go.unsupported_build),
	ONE(f_go_processes, "unreadable", COUNTERS_GO_LABELS, "unreadable", go.unreadable),
	ONE(f_go_processes, "map_full", COUNTERS_GO_LABELS, "with no room in the sampler's map",
	    go.map_full),
	RANGE(f_go_reads, COUNTERS_GO_LABELS, S_(GO_OK),
	      SAMPLER_STAT_GO_STALE - SAMPLER_STAT_GO_OK + 1, sampler_name, SAMPLER_STAT_GO_OK,
	      .flags = COUNTER_GROUP),
	ONE(f_go_bad_values, NULL, COUNTERS_GO_LABELS, "bad values", go.bad_values,
	    .flags = COUNTER_GROUP),

	/* CPython frames: the interpreters, the samples (tests parse "N samples with Python
	 * frames"), the walks' ends, the names */
	ONE(f_py_processes, "read", COUNTERS_PYTHON, "read in {} Python processes",
	    python.processes),
	ONE(f_py_processes, "unsupported_version", COUNTERS_PYTHON, "unsupported: {} by version",
	    python.unsupported_version),
	ONE(f_py_processes, "unsupported_build", COUNTERS_PYTHON, "{} by build",
	    python.unsupported_build),
	ONE(f_py_processes, "bad_layout", COUNTERS_PYTHON, "{} by a refused layout",
	    python.bad_layout),
	ONE(f_py_processes, "unreadable", COUNTERS_PYTHON, "unreadable", python.unreadable),
	ONE(f_py_processes, "map_full", COUNTERS_PYTHON, "with no room in the sampler's map",
	    python.map_full),
	ONE(f_py_samples, NULL, COUNTERS_PYTHON, "{} samples with Python frames", S_(PY_OK),
	    .flags = COUNTER_GROUP),
	ONE(f_py_frames, NULL, COUNTERS_PYTHON, "{} Python frames", S_(PY_FRAMES)),
	RANGE(f_py_walks, COUNTERS_PYTHON, S_(PY_NO_THREAD),
	      SAMPLER_STAT_PY_STALE - SAMPLER_STAT_PY_NO_THREAD + 1, sampler_name,
	      SAMPLER_STAT_PY_NO_THREAD, .flags = COUNTER_GROUP),
	ONE(f_py_names, "named", COUNTERS_PYTHON, "code objects named {}", python.named,
	    .flags = COUNTER_GROUP),
	ONE(f_py_retried, NULL, COUNTERS_PYTHON, "{} of them on a second read", python.retried),
	ONE(f_py_names, "changed", COUNTERS_PYTHON, "changed since sampled", python.stale),
	ONE(f_py_names, "unreadable", COUNTERS_PYTHON, "unreadable", python.unreadable_code),
	ONE(f_py_names, "malformed", COUNTERS_PYTHON, "malformed", python.malformed),
	ONE(f_py_names, "over_budget", COUNTERS_PYTHON, "not kept (symbol memory)",
	    python.over_budget),
	ONE(f_py_written, "all", COUNTERS_PYTHON, "in the last profile: {} Python frames",
	    last.python_frames, .flags = COUNTER_GROUP),
	ONE(f_py_written, "unnamed", COUNTERS_PYTHON, "{} named by a reason only",
	    last.python_unnamed),

	/* off-CPU: 120 waits recorded, 3000 below threshold, 0 sampled away, 0 dropped
	 * (test_offcpu reads these words) */
	ONE(f_off_recorded, NULL, COUNTERS_OFF_CPU, "{} waits recorded", S_(OFF_EMITTED)),
	ONE(f_off_skipped, "below_threshold", COUNTERS_OFF_CPU, "{} below threshold",
	    S_(OFF_BELOW)),
	ONE(f_off_skipped, "sampled_away", COUNTERS_OFF_CPU, "{} sampled away",
	    S_(OFF_SAMPLED_AWAY)),
	{.kind = COUNTER_SUM,
	 .family = &f_off_dropped,
	 .section = COUNTERS_OFF_CPU,
	 .words = "{} dropped"},
	ONE(f_off_dropped, "ring_full", COUNTERS_OFF_CPU, "(ring full {}", S_(OFF_DROP_RING_FULL),
	    .flags = COUNTER_JOIN),
	ONE(f_off_dropped, "no_storage", COUNTERS_OFF_CPU, "no task storage {}",
	    S_(OFF_DROP_NO_STORAGE)),
	ONE(f_off_dropped, "collector", COUNTERS_OFF_CPU, "in the collector {})",
	    drains.off_dropped),
	ONE(f_off_switches, NULL, COUNTERS_OFF_CPU, "{} voluntary switches out", S_(OFF_SWITCHES),
	    .flags = COUNTER_GROUP),
	ONE(f_off_captured, NULL, COUNTERS_OFF_CPU, "{} captured", S_(OFF_CAPTURED)),
	ONE(f_off_unreported, NULL, COUNTERS_OFF_CPU,
	    "{} came back with no switch in reported (end from CPU time)", S_(OFF_UNREPORTED_IN)),
	ONE(f_off_profile_waits, NULL, COUNTERS_OFF_CPU, "in the last profile: {} waits",
	    last.off_waits, .flags = COUNTER_GROUP),
	ONE(f_off_profile, NULL, COUNTERS_OFF_CPU, "{} off the CPU", last.off_ns,
	    .unit = COUNTER_NS),

	/* the profile */
	ONE(f_stacks, NULL, COUNTERS_PROFILE, "unique stacks", traces_exported),
	ONE(f_locations, NULL, COUNTERS_PROFILE, "locations", last.locations),
	ONE(f_functions, NULL, COUNTERS_PROFILE, "functions", last.functions),
	ONE(f_mappings, NULL, COUNTERS_PROFILE, "mappings in the last profile", last.mappings),
	ONE(f_loc_unnamed, NULL, COUNTERS_PROFILE, "of its locations without a name",
	    last.locations_unnamed, .flags = COUNTER_GROUP),
	ONE(f_loc_unmapped, NULL, COUNTERS_PROFILE, "in no known mapping", last.locations_unmapped),
	/* distinct locations per profile, summed: a counter, not the last file's */
	ONE(f_symbol_errors, "unnamed", COUNTERS_PROFILE, "summed over profiles: {} without a name",
	    locations_unnamed, .flags = COUNTER_GROUP),
	ONE(f_symbol_errors, "unmapped", COUNTERS_PROFILE, "in no known mapping",
	    locations_unmapped),
	ONE(f_elf_read, NULL, COUNTERS_PROFILE, "ELF files read", sym.elf_opened,
	    .flags = COUNTER_GROUP),
	ONE(f_symbol_errors, "elf_unreadable", COUNTERS_PROFILE, "unreadable", sym.elf_open_failed),
	ONE(f_symbol_errors, "elf_invalid", COUNTERS_PROFILE, "not valid ELF",
	    sym.elf_parse_failed),
	ONE(f_symbol_errors, "symbols_over_budget", COUNTERS_PROFILE,
	    "with symbols past the per-file budget", sym.symbols_over_budget),
	ONE(f_symbol_errors, "elf_not_mapped_inode", COUNTERS_PROFILE,
	    "refused as not the mapped inode", sym.elf_mismatch),
	ONE(f_elf_by_path, NULL, COUNTERS_PROFILE, "opened by path (map_files refused)",
	    sym.elf_by_path),
	ONE(f_elf_shared, NULL, COUNTERS_PROFILE, "found parsed already (same build id)",
	    sym.elf_shared),
	ONE(f_elf_by_stat, NULL, COUNTERS_PROFILE, "mappings found parsed by a stat",
	    sym.elf_by_stat),

	/* symbols */
	ONE(f_names, "debug_file", COUNTERS_SYMBOLS, "names from debug files",
	    sym.names_debug_file),
	ONE(f_names, "minidebuginfo", COUNTERS_SYMBOLS, "from MiniDebugInfo", sym.names_minidebug),
	ONE(f_names, "gopclntab", COUNTERS_SYMBOLS, "from Go's .gopclntab", sym.names_gopclntab),
	ONE(f_names, "vdso", COUNTERS_SYMBOLS, "from the vDSO", sym.names_vdso),
	ONE(f_demangled, "demangled", COUNTERS_SYMBOLS, "demangled", sym.demangled,
	    .flags = COUNTER_GROUP),
	ONE(f_demangled, "left_mangled", COUNTERS_SYMBOLS, "left mangled", sym.demangle_failed),
	ONE(f_debug_files, "used", COUNTERS_SYMBOLS, "debug files used", sym.debug_files,
	    .flags = COUNTER_GROUP),
	ONE(f_debug_files, "missing", COUNTERS_SYMBOLS, "missing", sym.debug_missing),
	ONE(f_debug_files, "build_id_mismatch", COUNTERS_SYMBOLS, "refused for their build id",
	    sym.debug_build_id_bad),
	ONE(f_debug_files, "crc_mismatch", COUNTERS_SYMBOLS, "for their CRC", sym.debug_crc_bad),
	ONE(f_debug_files, "unusable", COUNTERS_SYMBOLS, "as unusable", sym.debug_unusable),
	ONE(f_minidebug, "merged", COUNTERS_SYMBOLS, "MiniDebugInfo merged", sym.minidebug_files,
	    .flags = COUNTER_GROUP),
	ONE(f_minidebug, "bad", COUNTERS_SYMBOLS, "bad", sym.minidebug_bad),
	ONE(f_minidebug, "too_big", COUNTERS_SYMBOLS, "too big", sym.minidebug_too_big),
	ONE(f_gopclntab, "read", COUNTERS_SYMBOLS, "Go .gopclntab read", sym.go_tables,
	    .flags = COUNTER_GROUP),
	ONE(f_gopclntab, "bad", COUNTERS_SYMBOLS, "bad", sym.go_bad),
	ONE(f_gopclntab, "too_big", COUNTERS_SYMBOLS, "too big", sym.go_too_big),
	ONE(f_sym_files, NULL, COUNTERS_SYMBOLS, "files cached", sym.files_cached,
	    .flags = COUNTER_GROUP),
	ONE(f_sym_bytes, NULL, COUNTERS_SYMBOLS, "of symbols", sym.bytes_cached,
	    .unit = COUNTER_BYTES),
	ONE(f_sym_limit, NULL, COUNTERS_SYMBOLS, "allowed (--symbol-memory)", sym.bytes_budget,
	    .unit = COUNTER_BYTES),
	ONE(f_sym_evicted, NULL, COUNTERS_SYMBOLS, "evicted", sym.files_evicted),
	ONE(f_sym_refused, NULL, COUNTERS_SYMBOLS, "not kept (past the limit)",
	    sym.files_over_budget),
	ONE(f_sym_perf_maps, NULL, COUNTERS_SYMBOLS, "of the symbols' memory held by perf maps",
	    sym.bytes_charged, .unit = COUNTER_BYTES, .flags = COUNTER_GROUP),

	/* perf maps (JIT code): 3 reads (0 from the start again); 2338 lines kept (4
	 * overlapping), 415 frames named; 0 lines skipped: no_name=0 ...; ... */
	ONE(f_pm_reads, NULL, COUNTERS_PERF_MAPS, "reads", perf_maps.reads),
	ONE(f_pm_rereads, NULL, COUNTERS_PERF_MAPS, "({} from the start again)", perf_maps.rereads,
	    .flags = COUNTER_JOIN),
	ONE(f_pm_entries, NULL, COUNTERS_PERF_MAPS, "lines kept", perf_maps.entries,
	    .flags = COUNTER_GROUP),
	ONE(f_pm_overlapping, NULL, COUNTERS_PERF_MAPS, "({} overlapping)", perf_maps.overlapping,
	    .flags = COUNTER_JOIN),
	ONE(f_names, "perf_map", COUNTERS_PERF_MAPS, "frames named", perf_maps.frames_named),
	{.kind = COUNTER_SUM,
	 .family = &f_pm_skipped,
	 .section = COUNTERS_PERF_MAPS,
	 .flags = COUNTER_GROUP,
	 .words = "lines skipped:"},
	RANGE(f_pm_skipped, COUNTERS_PERF_MAPS, perf_maps.skipped, PERF_MAP_SKIP_MAX, perf_map_skip,
	      0, .flags = COUNTER_JOIN),
	ONE(f_pm_refused, "not_regular", COUNTERS_PERF_MAPS, "refused as not regular files",
	    perf_maps.not_regular, .flags = COUNTER_GROUP),
	ONE(f_pm_refused, "not_owner", COUNTERS_PERF_MAPS, "as not the process's user's",
	    perf_maps.not_owner),
	ONE(f_pm_refused, "too_big", COUNTERS_PERF_MAPS, "read only up to 64 MiB",
	    perf_maps.too_big),

	/* HotSpot JVMs: 1 read, 0 unreadable; refused: ...; frames: 415 methods, ... */
	ONE(f_hs_jvms, "read", COUNTERS_HOTSPOT, "{} JVMs' tables read", hotspot.jvms),
	ONE(f_hs_jvms, "unreadable", COUNTERS_HOTSPOT, "{} unreadable", hotspot.unreadable),
	{.kind = COUNTER_SUM,
	 .family = &f_hs_refused,
	 .section = COUNTERS_HOTSPOT,
	 .flags = COUNTER_GROUP,
	 .words = "refused:"},
	RANGE(f_hs_refused, COUNTERS_HOTSPOT, hotspot.refused[1], VMSTRUCTS_ERROR_MAX - 1,
	      vmstructs_error, 1, .flags = COUNTER_JOIN),
	ONE(f_hs_frames, "method", COUNTERS_HOTSPOT, "frames named as methods {}",
	    hotspot.frames_named, .flags = COUNTER_GROUP),
	ONE(f_hs_frames, "blob", COUNTERS_HOTSPOT, "by their code blob {}", hotspot.frames_blob),
	ONE(f_hs_frames, "unnamed", COUNTERS_HOTSPOT, "not named {}", hotspot.frames_unnamed),
	ONE(f_hs_methods, NULL, COUNTERS_HOTSPOT, "{} methods read", hotspot.methods_read),

	/* timeline (--timeline, --timelines): the last one written */
	ONE(f_tl_threads, NULL, COUNTERS_TIMELINE, "threads in the last timeline",
	    timeline.threads),
	ONE(f_tl_spans, NULL, COUNTERS_TIMELINE, "spans", timeline.spans),
	ONE(f_tl_unmatched, NULL, COUNTERS_TIMELINE, "ends without a begin",
	    timeline.spans_unmatched),
	ONE(f_tl_lost, "begin", COUNTERS_TIMELINE, "span begins lost (the samples show them)",
	    timeline.spans_begin_lost, .flags = COUNTER_GROUP),
	ONE(f_tl_lost, "end", COUNTERS_TIMELINE, "ends", timeline.spans_end_lost),
	ONE(f_tl_slices, NULL, COUNTERS_TIMELINE, "stack slices", timeline.slices,
	    .flags = COUNTER_GROUP),
	ONE(f_tl_samples, NULL, COUNTERS_TIMELINE, "samples", timeline.samples),
	ONE(f_tl_waits, NULL, COUNTERS_TIMELINE, "waits", timeline.waits),
	ONE(f_tl_no_stack, NULL, COUNTERS_TIMELINE, "with their stack no longer stored",
	    timeline.no_stack),
	ONE(f_events, NULL, COUNTERS_TIMELINE, "events recorded", traces.events,
	    .flags = COUNTER_GROUP),
	ONE(f_events_replayed, NULL, COUNTERS_TIMELINE, "in timelines", traces.events_replayed),
	ONE(f_events_lost, "recycled", COUNTERS_TIMELINE, "recycled unwritten (--timeline-memory)",
	    traces.events_recycled),
	ONE(f_events_lost, "no_memory", COUNTERS_TIMELINE, "dropped (no memory)",
	    traces.events_dropped),
	ONE(f_span_left_out, "unverified_thread", COUNTERS_TIMELINE,
	    "span events left out from unverified threads", app.span_events_unattributed,
	    .flags = COUNTER_GROUP),
	ONE(f_span_left_out, "bad_time", COUNTERS_TIMELINE, "with a time far from ours",
	    app.span_events_bad_time),
	ONE(f_seeds, "written", COUNTERS_TIMELINE, "thread state seeded into new parts",
	    traces.seeds, .flags = COUNTER_GROUP),
	ONE(f_seeds, "replayed", COUNTERS_TIMELINE, "used after recycling", traces.seeds_replayed),
	ONE(f_parts, NULL, COUNTERS_TIMELINE, "parts of 4 KiB", traces.parts,
	    .flags = COUNTER_GROUP),
	ONE(f_replay_bytes, NULL, COUNTERS_TIMELINE, "the most one thread took",
	    traces.replay_bytes, .unit = COUNTER_BYTES),

	/* exports */
	ONE(f_files, NULL, COUNTERS_EXPORTS, "profiles written", files_written),
	ONE(f_exports, "ok", COUNTERS_EXPORTS, "exports ok", exports_ok),
	ONE(f_exports, "error", COUNTERS_EXPORTS, "failed", exports_failed),
	ONE(f_last_export_ok, NULL, COUNTERS_EXPORTS, "last attempt ok={}", last_export_ok,
	    .flags = COUNTER_GROUP),
	ONE(f_last_export_duration, NULL, COUNTERS_EXPORTS, "the last good one took {}",
	    last_export_seconds, .unit = COUNTER_SECONDS),
	ONE(f_last_export_time, NULL, COUNTERS_EXPORTS, NULL, last_export_time,
	    .unit = COUNTER_TIME),

	/* writes: failed attempts, and what became of those files (test_disk_full.sh reads it) */
	ONE(f_write_failed, NULL, COUNTERS_WRITES, "attempts failed", queue.failed),
	ONE(f_files_kept, NULL, COUNTERS_WRITES, "files kept in memory", queue.kept,
	    .flags = COUNTER_GROUP),
	ONE(f_pending_limit, NULL, COUNTERS_WRITES, "(at most {})", queue.max_bytes,
	    .unit = COUNTER_BYTES, .flags = COUNTER_JOIN | COUNTER_LIMIT),
	ONE(f_written_late, NULL, COUNTERS_WRITES, "of them written later", queue.written_late),
	ONE(f_pending, NULL, COUNTERS_WRITES, "still kept", queue.pending),
	ONE(f_pending_bytes, NULL, COUNTERS_WRITES, "({})", queue.pending_bytes,
	    .unit = COUNTER_BYTES, .flags = COUNTER_JOIN),
	ONE(f_files_dropped, NULL, COUNTERS_WRITES, "files dropped", queue.dropped,
	    .flags = COUNTER_GROUP),
	{.kind = COUNTER_ALSO,
	 .section = COUNTERS_WRITES,
	 .words = "with {} samples",
	 .offset = V(queue.dropped_samples)},

	/* degraded conditions: those raised at the end, and how often each was */
	RANGE(f_degraded, COUNTERS_DEGRADED_NOW, health.active, HEALTH_CONDITION_MAX,
	      condition_name, 0, .flags = COUNTER_NONZERO),
	RANGE(f_degraded_raised, COUNTERS_DEGRADED_RAISED, health.raised, HEALTH_CONDITION_MAX,
	      condition_name, 0, .flags = COUNTER_NONZERO),

	/* the HTTP listeners */
	ONE(f_http_requests, "metrics", COUNTERS_HTTP, "requests on the metrics listener",
	    http.metrics.requests),
	ONE(f_http_conns, "metrics", COUNTERS_HTTP, "connections", http.metrics.connections),
	ONE(f_http_evicted, "metrics", COUNTERS_HTTP, "evicted", http.metrics.evicted),
	ONE(f_http_requests, "health", COUNTERS_HTTP, "requests on the health listener",
	    http.health.requests, .flags = COUNTER_GROUP),
	ONE(f_http_conns, "health", COUNTERS_HTTP, "connections", http.health.connections),
	ONE(f_http_evicted, "health", COUNTERS_HTTP, "evicted", http.health.evicted),
	ONE(f_http_log, NULL, COUNTERS_HTTP, "server messages not logged (rate limit)",
	    http.log_suppressed, .flags = COUNTER_GROUP),

	/* /debug/pprof/profile */
	ONE(f_pprof_received, NULL, COUNTERS_SCRAPES, "requests", scrape_requests.requests),
	ONE(f_pprof_requests, "served", COUNTERS_SCRAPES, "profiles served", scrapes.served),
	ONE(f_pprof_samples, NULL, COUNTERS_SCRAPES, "with {} samples", scrapes.samples,
	    .flags = COUNTER_JOIN),
	ONE(f_pprof_requests, "bad_request", COUNTERS_SCRAPES, "requests refused as bad",
	    scrape_requests.bad),
	ONE(f_pprof_requests, "busy", COUNTERS_SCRAPES, "as too many at once",
	    scrape_requests.busy),
	ONE(f_pprof_requests, "failed", COUNTERS_SCRAPES, "failed", scrapes.failed),
	ONE(f_pprof_requests, "stopped", COUNTERS_SCRAPES, "cut by the stop", scrapes.stopped),
	ONE(f_pprof_pending, NULL, COUNTERS_SCRAPES, "being taken", scrape_requests.pending),
	ONE(f_pprof_left_out, "table_full", COUNTERS_SCRAPES, "samples left out: tables full",
	    scrapes.dropped, .flags = COUNTER_GROUP),
	ONE(f_pprof_left_out, "unmatched", COUNTERS_SCRAPES, "not matching the request's labels",
	    scrapes.unmatched),
	ONE(f_pprof_late, NULL, COUNTERS_SCRAPES, "windows opened late", scrapes.late,
	    .flags = COUNTER_NONZERO),

	/* --push: every profile ends in one count */
	ONE(f_push_profiles, "queued", COUNTERS_PUSH, "profiles queued", push.queued),
	ONE(f_push_samples, "queued", COUNTERS_PUSH, "({} samples)", push.queued_samples,
	    .flags = COUNTER_JOIN),
	ONE(f_push_profiles, "restored", COUNTERS_PUSH, "restored from the spool directory",
	    push.restored),
	ONE(f_push_samples, "restored", COUNTERS_PUSH, "({} samples)", push.restored_samples,
	    .flags = COUNTER_JOIN),
	ONE(f_push_profiles, "sent", COUNTERS_PUSH, "sent", push.sent, .flags = COUNTER_GROUP),
	ONE(f_push_samples, "sent", COUNTERS_PUSH, "({} samples)", push.sent_samples,
	    .flags = COUNTER_JOIN),
	ONE(f_push_bytes, NULL, COUNTERS_PUSH, "{} sent", push.sent_bytes, .unit = COUNTER_BYTES),
	ONE(f_push_dropped, "spool_full", COUNTERS_PUSH, "dropped for room (--push-spool)",
	    push.dropped[PUSH_DROP_SPOOL_FULL], .flags = COUNTER_GROUP),
	ONE(f_push_dropped_samples, "spool_full", COUNTERS_PUSH, "({} samples)",
	    push.dropped_samples[PUSH_DROP_SPOOL_FULL], .flags = COUNTER_JOIN),
	ONE(f_push_dropped, "rejected", COUNTERS_PUSH, "refused by the store (4xx)",
	    push.dropped[PUSH_DROP_REJECTED]),
	ONE(f_push_dropped_samples, "rejected", COUNTERS_PUSH, "({} samples)",
	    push.dropped_samples[PUSH_DROP_REJECTED], .flags = COUNTER_JOIN),
	ONE(f_push_dropped, "stopping", COUNTERS_PUSH, "unsent at the stop",
	    push.dropped[PUSH_DROP_STOPPING]),
	ONE(f_push_dropped_samples, "stopping", COUNTERS_PUSH, "({} samples)",
	    push.dropped_samples[PUSH_DROP_STOPPING], .flags = COUNTER_JOIN),
	ONE(f_push_profiles, "kept", COUNTERS_PUSH,
	    "kept in the spool directory for the next start", push.kept, .flags = COUNTER_GROUP),
	ONE(f_push_samples, "kept", COUNTERS_PUSH, "({} samples)", push.kept_samples,
	    .flags = COUNTER_JOIN),
	ONE(f_push_pending, NULL, COUNTERS_PUSH, "pending", push.pending),
	ONE(f_push_samples, "pending", COUNTERS_PUSH, "({} samples)", push.pending_samples,
	    .flags = COUNTER_JOIN),
	ONE(f_push_pending_bytes, NULL, COUNTERS_PUSH, "{} pending", push.pending_bytes,
	    .unit = COUNTER_BYTES),
	ONE(f_push_limit, NULL, COUNTERS_PUSH, "(at most {})", push.spool_limit,
	    .unit = COUNTER_BYTES, .flags = COUNTER_JOIN | COUNTER_LIMIT),
	ONE(f_push_attempts, NULL, COUNTERS_PUSH, "uploads", push.attempts, .flags = COUNTER_GROUP),
	ONE(f_push_retries, NULL, COUNTERS_PUSH, "retries", push.retries),
	ONE(f_push_failures, "no_answer", COUNTERS_PUSH, "without an answer",
	    push.failed_no_answer),
	ONE(f_push_failures, "status", COUNTERS_PUSH, "answered 408, 429 or 5xx",
	    push.failed_status),
	ONE(f_push_status, NULL, COUNTERS_PUSH, "last status {}", push.last_status),
	ONE(f_push_failing, NULL, COUNTERS_PUSH, "failing now", push.failing,
	    .flags = COUNTER_WORDS | COUNTER_NONZERO),
	ONE(f_push_spool, "written", COUNTERS_PUSH, "spool files written", push.spool_written,
	    .flags = COUNTER_GROUP),
	ONE(f_push_spool, "failed", COUNTERS_PUSH, "not writable", push.spool_errors),
	ONE(f_push_spool, "bad", COUNTERS_PUSH, "found bad and removed", push.spool_bad),
	ONE(f_push_secrets, "ok", COUNTERS_PUSH, "secret files read again", push.secret_reloads,
	    .flags = COUNTER_GROUP | COUNTER_NONZERO),
	ONE(f_push_secrets, "error", COUNTERS_PUSH, "unreadable", push.secret_errors,
	    .flags = COUNTER_NONZERO),
	ONE(f_push_unmade, NULL, COUNTERS_PUSH, "series profiles not made (no memory)", push_failed,
	    .flags = COUNTER_NONZERO),

	/* BPF run time: per run, and per sample taken (the runs on unprofiled tasks included) */
	ONE(f_bpf_time, "sample", COUNTERS_BPF, "sample() {} in all", bpf.sample_ns,
	    .unit = COUNTER_NS),
	ONE(f_bpf_runs, "sample", COUNTERS_BPF, "runs", bpf.sample_runs),
	{.kind = COUNTER_RATIO,
	 .section = COUNTERS_BPF,
	 .words = "ns per run",
	 .offset = V(bpf.sample_ns),
	 .per = V(bpf.sample_runs),
	 .scale = 1},
	{.kind = COUNTER_RATIO,
	 .section = COUNTERS_BPF,
	 .words = "ns per sample taken",
	 .offset = V(bpf.sample_ns),
	 .per = V(sampler[SAMPLER_STAT_SAMPLES]),
	 .scale = 1},
	ONE(f_bpf_time, "offcpu_switch", COUNTERS_BPF, "offcpu_switch() {} in all", bpf.switch_ns,
	    .unit = COUNTER_NS, .flags = COUNTER_GROUP, .have = COUNTERS_HAVE_OFF_CPU),
	ONE(f_bpf_runs, "offcpu_switch", COUNTERS_BPF, "runs", bpf.switch_runs,
	    .have = COUNTERS_HAVE_OFF_CPU),
	{.kind = COUNTER_RATIO,
	 .section = COUNTERS_BPF,
	 .have = COUNTERS_HAVE_OFF_CPU,
	 .words = "ns per run",
	 .offset = V(bpf.switch_ns),
	 .per = V(bpf.switch_runs),
	 .scale = 1},

	/* the collector itself */
	ONE(f_cpu, NULL, COUNTERS_COLLECTOR, "in all (set-up, symbols, export)", cpu_s,
	    .unit = COUNTER_SECONDS),
	ONE(f_drain_cpu, NULL, COUNTERS_COLLECTOR, "in the drain threads", drains.cpu_ns,
	    .unit = COUNTER_NS),
	{.kind = COUNTER_RATIO,
	 .section = COUNTERS_COLLECTOR,
	 .words = "us per record",
	 .offset = V(drains.cpu_ns),
	 .per = V(drains.received),
	 .scale = 1e-3},
	ONE(f_drained, NULL, COUNTERS_COLLECTOR, "records drained", drains.received,
	    .flags = COUNTER_GROUP),
	ONE(f_rss, NULL, COUNTERS_COLLECTOR, "resident", rss_bytes, .unit = COUNTER_BYTES),
	ONE(f_start_time, NULL, COUNTERS_COLLECTOR, NULL, start_time, .unit = COUNTER_TIME),
};

const unsigned int nr_counter_descs = sizeof(counter_descs) / sizeof(counter_descs[0]);

static uint64_t self_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * sysconf(_SC_PAGESIZE);
}

void counters__read(const struct collector *c, struct counter_values *v)
{
	const struct collector_opts *o = &c->opts;
	struct sampler_health h;

	memset(v, 0, sizeof(*v));
	v->have = (c->unwinder ? COUNTERS_HAVE_UNWINDER : 0) |
		  (o->all || o->children ? COUNTERS_HAVE_TRACKER : 0) |
		  (o->children ? COUNTERS_HAVE_CHILDREN : 0) | (c->app ? COUNTERS_HAVE_APP : 0) |
		  (c->otel ? COUNTERS_HAVE_OTEL : 0) | (c->go ? COUNTERS_HAVE_GO : 0) |
		  (c->python ? COUNTERS_HAVE_PYTHON : 0) |
		  (o->off_cpu ? COUNTERS_HAVE_OFF_CPU : 0) | (c->tl ? COUNTERS_HAVE_TIMELINE : 0) |
		  (c->metrics ? COUNTERS_HAVE_HTTP : 0) | (c->scrape ? COUNTERS_HAVE_SCRAPES : 0) |
		  (c->push ? COUNTERS_HAVE_PUSH : 0);
	sampler__read_stats(c->sampler, v->sampler);
	sampler__prog_cost(c->sampler, &v->bpf);
	if (v->bpf.sample_runs || v->bpf.switch_runs)
		v->have |= COUNTERS_HAVE_BPF_STATS;
	drains__counters(c->drains, &v->drains);
	if (c->unwinder)
		unwinder__stats(c->unwinder, &v->unwind);
	symbolizer__stats(c->sym, &v->sym);
	process_states__stats(c->states, &v->states);
	if (c->tracker)
		tracker__stats(c->tracker, &v->tracker);
	/* a bool between counters: as a count, and what the summary may say */
	v->mapping_events_on = v->tracker.mapping_events_on;
	if (v->mapping_events_on)
		v->have |= COUNTERS_HAVE_MAPPING_EVENTS;
	if (c->app)
		app_context__stats(c->app, &v->app);
	if (c->otel)
		otel_context__stats(c->otel, &v->otel);
	if (c->go)
		go_labels__stats(c->go, &v->go);
	if (c->python)
		python_procs__stats(c->python, &v->python);
	if (c->tl)
		traces__stats(c->tl, &v->traces);
	v->timeline = c->tl_last;
	v->last = c->last;
	sampler__health(c->sampler, &h);
	v->sampling = (struct counter_sampling){
		.requested_hz = h.requested_hz,
		.run_hz = h.run_hz,
		.effective_hz = h.effective_hz,
		.lowest_hz = h.lowest_hz,
		.max_sample_rate = (double)h.max_sample_rate,
		.throttled = h.throttled,
		.throttled_checks = h.throttled_checks,
		.cpus_online = h.cpus_online > 0 ? h.cpus_online : 0,
		.cpus_sampled = h.cpus_sampled > 0 ? h.cpus_sampled : 0,
		.cpus_offlined = h.cpus_offlined,
		.cpus_onlined = h.cpus_onlined,
		.open_failed = h.open_failed,
	};
	outqueue__stats(c->queue, &v->queue);
	health__stats(c->health, &v->health);
	metrics_server__stats(c->metrics, &v->http);
	if (c->scrapeq)
		scrape_queue__stats(c->scrapeq, &v->scrape_requests);
	if (c->scrape)
		scrape__stats(c->scrape, &v->scrapes);
	push__stats(c->push, &v->push);
	v->push_failed = c->push_failed;
	v->exported = c->exported;
	v->no_trace = c->no_trace;
	v->traces_exported = c->traces_exported;
	v->stacks_cut = c->stacks_cut;
	v->frames_uncertain = c->frames_uncertain;
	v->perf_maps = c->perf_maps;
	v->hotspot = c->hotspot;
	v->locations_unnamed = c->locations_unnamed;
	v->locations_unmapped = c->locations_unmapped;
	v->files_written = c->files_written;
	v->exports_ok = c->exports_ok;
	v->exports_failed = c->exports_failed;
	v->last_export_ok = !c->last_export_failed;
	v->unwind_bytes = v->unwind.rows * sizeof(struct unwind_row);
	v->rss_bytes = self_rss_bytes();
	v->cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	v->start_time = c->start_time;
	v->last_export_time = c->last_export_time;
	v->last_export_seconds = c->last_export_duration;
}
