# calltrace_storage under load: the stress test, built from the sources
# directly (not libcollector.a) once under TSan and once under ASan+UBSan, with
# CALLTRACE_STRESS_HOOKS widening the race windows; and the put benchmark.
# The stress binaries are plain programs: exit 0 passes, one result line.

STRESS_CC ?= $(CLANG)
STRESS_SRCS := tests/unit/stress_calltrace_storage.c user/calltrace_storage.c
STRESS_DEPS := $(STRESS_SRCS) user/calltrace_storage.h tests/unit/stress.mk
STRESS_CFLAGS := -g -O1 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser \
	-DCALLTRACE_STRESS_HOOKS $(EXTRA_CFLAGS)
STRESS_BINS += $(OUTPUT)/tests/stress_calltrace_storage_tsan \
	$(OUTPUT)/tests/stress_calltrace_storage_asan
CALLTRACE_BENCH := $(OUTPUT)/bench/calltrace_bench

UNIT_EXTRA += $(STRESS_BINS) $(CALLTRACE_BENCH)

$(OUTPUT)/tests/stress_calltrace_storage_tsan: $(STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=thread $(STRESS_SRCS) -lpthread -o $@

# UBSan must fail the run, not print and carry on
$(OUTPUT)/tests/stress_calltrace_storage_asan: $(STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(STRESS_SRCS) -lpthread -o $@

# -O2 like the collector; our put next to a mutex table, measured in one run
$(CALLTRACE_BENCH): bench/calltrace_bench.c user/calltrace_storage.c user/calltrace_storage.h \
		tests/unit/stress.mk
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser $(EXTRA_CFLAGS) \
		bench/calltrace_bench.c user/calltrace_storage.c -lpthread -o $@
