# Benchmarks (make bench runs bench/run.sh; bench/README.md has the figures).
# Each micro-benchmark measures our structure next to its baseline in the same
# run; all are -O2 like the collector.  Included by the top Makefile.

CONTEXT_BENCH := $(OUTPUT)/bench/context_bench
CALLTRACE_BENCH := $(OUTPUT)/bench/calltrace_bench
REGISTRY_BENCH := $(OUTPUT)/bench/registry_bench
# bench/run.sh's target (frame pointers: the perf and bpftrace baselines walk
# them) and its reader of the kernel's BPF run-time statistics
FIXED_WORK := $(OUTPUT)/bench/fixed_work
FIXED_WORK_NOFP := $(OUTPUT)/bench/fixed_work_nofp
PROGSTAT := $(OUTPUT)/bench/progstat
UNWIND_TABLE_BENCH := $(OUTPUT)/bench/unwind_table_bench
# bench/context_read.sh's Go program: goroutines in pprof.Do spans
GO_LABELS_BENCH := $(OUTPUT)/bench/go_labels
TRACE_BENCH := $(OUTPUT)/bench/trace_bench
BENCH_BINS := $(CONTEXT_BENCH) $(CALLTRACE_BENCH) $(REGISTRY_BENCH) $(FIXED_WORK) \
	$(FIXED_WORK_NOFP) $(PROGSTAT) $(UNWIND_TABLE_BENCH) $(TRACE_BENCH) $(GO_LABELS_BENCH)
BENCH_CFLAGS := -g -O2 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser $(EXTRA_CFLAGS) \
	-MMD -MP

# ns per context update, ours next to a Java-style seq_cst final store
$(CONTEXT_BENCH): bench/context_bench.c $(LIBCTXPROF_A) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -Ilib/ctxprof $< $(LIBCTXPROF_A) -lpthread -o $@

# call-trace put next to a mutex table
$(CALLTRACE_BENCH): bench/calltrace_bench.c $(LIBCOLLECTOR) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) $< $(LIBCOLLECTOR) $(LIBS) -o $@

# RCU registry lookups next to an rwlock registry
$(REGISTRY_BENCH): bench/registry_bench.c $(LIBCOLLECTOR) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) $< $(LIBCOLLECTOR) $(LIBS) -o $@

$(FIXED_WORK): bench/fixed_work.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -fno-omit-frame-pointer $< -lpthread -o $@

$(FIXED_WORK_NOFP): bench/fixed_work.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -fomit-frame-pointer $< -lpthread -o $@

$(PROGSTAT): bench/progstat.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) $< $(LIBS) -o $@

# wall time, rows and rules of building a file's unwind table
$(UNWIND_TABLE_BENCH): bench/unwind_table_bench.c $(LIBCOLLECTOR) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) $< $(LIBCOLLECTOR) $(LIBS) -o $@

# per-thread trace appends next to a mutex-protected vector; replay; memory
$(TRACE_BENCH): bench/trace_bench.c $(LIBCOLLECTOR) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) $< $(LIBCOLLECTOR) $(LIBS) -o $@

# offline: no modules, the build cache under $(OUTPUT)
$(GO_LABELS_BENCH): tests/workloads/go_labels/main.go | $(OUTPUT)/bench
	$(call msg,GO,$@)
	$(Q)GO111MODULE=off GOFLAGS= GOPATH=$(abspath $(OUTPUT))/gopath \
		GOCACHE=$(abspath $(OUTPUT))/gocache $(GO) build -o $@ $<

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

-include $(wildcard $(OUTPUT)/bench/*.d)
