# cpuclock_skew (tests/workloads/cpuclock/cpuclock_skew.c): test_offcpu.sh's
# oracle for how far a thread's CPU clock strays from the time it ran (a BPF
# program of its own on sched_switch; not the collector's).  In a folder of
# its own: the generic workload rule builds every tests/workloads/*.c.

CPUCLOCK_SRC := tests/workloads/cpuclock
CPUCLOCK_TOOL := $(OUTPUT)/workloads/cpuclock_skew

all: $(CPUCLOCK_TOOL)

$(OUTPUT)/workloads/cpuclock_skew.bpf.o: $(CPUCLOCK_SRC)/cpuclock_skew.bpf.c | $(OUTPUT)/workloads
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/workloads/cpuclock_skew.skel.h: $(OUTPUT)/workloads/cpuclock_skew.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name cpuclock_skew_bpf > $@

$(CPUCLOCK_TOOL): $(CPUCLOCK_SRC)/cpuclock_skew.c $(OUTPUT)/workloads/cpuclock_skew.skel.h
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -I$(OUTPUT)/workloads $< \
		$(LIBS) -o $@
