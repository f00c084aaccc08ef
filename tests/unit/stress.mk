# calltrace_storage under load: the stress test, built from the sources
# directly (not libcollector.a) once under TSan and once under ASan+UBSan, with
# CALLTRACE_STRESS_HOOKS widening the race windows.
# The stress binaries are plain programs: exit 0 passes, one result line.
# The unit test also builds the module from source, with the test hooks
# (CALLTRACE_TEST_HOOKS) the collector's build leaves out.

STRESS_CC ?= $(CLANG)
STRESS_SRCS := tests/unit/stress_calltrace_storage.c user/storage/calltrace_storage.c \
	user/util/htable.c
STRESS_DEPS := $(STRESS_SRCS) user/storage/calltrace_storage.h user/util/array.h \
	user/util/hash.h user/util/htable.h tests/unit/stress.mk
STRESS_CFLAGS := -g -O1 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser \
	-DCALLTRACE_STRESS_HOOKS $(EXTRA_CFLAGS)
STRESS_BINS += $(OUTPUT)/tests/stress_calltrace_storage_tsan \
	$(OUTPUT)/tests/stress_calltrace_storage_asan

UNIT_EXTRA += $(STRESS_BINS)

$(OUTPUT)/tests/stress_calltrace_storage_tsan: $(STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=thread $(STRESS_SRCS) -lpthread -o $@

# UBSan must fail the run, not print and carry on
$(OUTPUT)/tests/stress_calltrace_storage_asan: $(STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(STRESS_SRCS) -lpthread -o $@

$(OUTPUT)/tests/test_calltrace_storage: tests/unit/test_calltrace_storage.c \
		user/storage/calltrace_storage.c user/util/htable.c | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DCALLTRACE_TEST_HOOKS $^ $(ALL_LDFLAGS) -lpthread -lcmocka -o $@

# traces/trace under load: writers appending and recycling while a replayer
# cuts and replays (tests/unit/stress_trace.c)
TRACE_STRESS_SRCS := tests/unit/stress_trace.c user/traces/trace.c \
	user/storage/calltrace_storage.c user/util/htable.c
TRACE_STRESS_DEPS := $(TRACE_STRESS_SRCS) user/traces/trace.h user/traces/trace_event.h \
	user/storage/calltrace_storage.h user/util/htable.h tests/unit/stress.mk
TRACE_STRESS := $(OUTPUT)/tests/stress_trace_tsan $(OUTPUT)/tests/stress_trace_asan
STRESS_BINS += $(TRACE_STRESS)
UNIT_EXTRA += $(TRACE_STRESS)

$(OUTPUT)/tests/stress_trace_tsan: $(TRACE_STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=thread $(TRACE_STRESS_SRCS) -lpthread -o $@

$(OUTPUT)/tests/stress_trace_asan: $(TRACE_STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(TRACE_STRESS_SRCS) -lpthread -o $@

# calltrace_storage liveness under 8 writers and a rotation every 3 ms: no
# stack an event names is freed before the event is replayed
# (tests/unit/stress_liveness.c)
LIVENESS_STRESS_SRCS := tests/unit/stress_liveness.c user/storage/calltrace_storage.c \
	user/util/htable.c
LIVENESS_STRESS_DEPS := $(LIVENESS_STRESS_SRCS) user/storage/calltrace_storage.h \
	user/util/htable.h tests/unit/stress.mk
LIVENESS_STRESS := $(OUTPUT)/tests/stress_liveness_tsan $(OUTPUT)/tests/stress_liveness_asan
STRESS_BINS += $(LIVENESS_STRESS)
UNIT_EXTRA += $(LIVENESS_STRESS)

$(OUTPUT)/tests/stress_liveness_tsan: $(LIVENESS_STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=thread $(LIVENESS_STRESS_SRCS) -lpthread -o $@

$(OUTPUT)/tests/stress_liveness_asan: $(LIVENESS_STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(STRESS_CC) $(STRESS_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(LIVENESS_STRESS_SRCS) -lpthread -o $@
