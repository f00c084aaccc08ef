# libctxprof, the application-side library (lib/ctxprof/, include/ctxprof.h,
# include/ctxprof_abi.h): the static and shared libraries, its unit tests,
# the TSan stress test, the context-update benchmark and the fuzz corpus
# generator.  The collector's reader (user/ctxprof_region.c) is part of
# libcollector.a like every user/*.c.
#
# One set of objects serves both libraries: -fPIC so the .a links into PIEs
# and shared objects, -fvisibility=hidden so the .so exports only the
# CTXPROF_API functions of include/ctxprof.h.

LIBCTXPROF_SRCS := $(wildcard lib/ctxprof/*.c)
LIBCTXPROF_HDRS := include/ctxprof.h include/ctxprof_abi.h lib/ctxprof/internal.h
LIBCTXPROF_OBJS := $(patsubst lib/ctxprof/%.c,$(OUTPUT)/lib/ctxprof/%.o,$(LIBCTXPROF_SRCS))
LIBCTXPROF_A := $(OUTPUT)/libctxprof.a
LIBCTXPROF_SO := $(OUTPUT)/libctxprof.so
LIBCTXPROF := $(LIBCTXPROF_A) $(LIBCTXPROF_SO)
# the library sees include/ only: it must not depend on the collector's headers
LIBCTXPROF_CFLAGS := $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -fPIC \
	-fvisibility=hidden -MMD -MP $(EXTRA_CFLAGS)

CTXPROF_STRESS := $(OUTPUT)/tests/stress_ctxprof_tsan
CONTEXT_BENCH := $(OUTPUT)/bench/context_bench
CTXPROF_CORPUS_GEN := $(OUTPUT)/fuzz/gen_ctxprof_region

UNIT_EXTRA += $(LIBCTXPROF) $(CONTEXT_BENCH)
STRESS_BINS += $(CTXPROF_STRESS)

.PHONY: libctxprof ctxprof-corpus
libctxprof: $(LIBCTXPROF)

$(OUTPUT)/lib/ctxprof/%.o: lib/ctxprof/%.c | $(OUTPUT)/lib/ctxprof
	$(call msg,CC,$@)
	$(Q)$(CC) $(LIBCTXPROF_CFLAGS) -c $< -o $@

$(LIBCTXPROF_A): $(LIBCTXPROF_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# nodelete: thread-exit destructors and atfork handlers point into the library
$(LIBCTXPROF_SO): $(LIBCTXPROF_OBJS)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -Wl,-soname,libctxprof.so -Wl,-z,nodelete -Wl,--no-undefined \
		$(ALL_LDFLAGS) $^ -lpthread -o $@

$(OUTPUT)/lib/ctxprof:
	$(Q)mkdir -p $@

# unit tests: the library's internals (-Ilib/ctxprof) and the collector's reader
$(OUTPUT)/tests/test_ctxprof $(OUTPUT)/tests/test_ctxprof_region: \
		$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(LIBCTXPROF_A) $(LIBCOLLECTOR) \
		| $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/ctxprof $< $(LIBCTXPROF_A) $(LIBCOLLECTOR) $(ALL_LDFLAGS) \
		$(LIBS) -lcmocka -o $@

# the context protocol and the lanes under TSan, library built from source
CTXPROF_STRESS_SRCS := tests/unit/stress_ctxprof.c $(LIBCTXPROF_SRCS) user/ctxprof_region.c
$(CTXPROF_STRESS): $(CTXPROF_STRESS_SRCS) $(LIBCTXPROF_HDRS) user/ctxprof_region.h \
		tests/unit/libctxprof.mk | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(CLANG) -g -O1 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -Ilib/ctxprof \
		$(EXTRA_CFLAGS) -fsanitize=thread $(CTXPROF_STRESS_SRCS) -lpthread -o $@

# -O2: ns per context update, ours next to the seed's seq_cst final store
$(CONTEXT_BENCH): bench/context_bench.c $(LIBCTXPROF_A) $(LIBCTXPROF_HDRS) tests/unit/libctxprof.mk
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Ilib/ctxprof $(EXTRA_CFLAGS) \
		bench/context_bench.c $(LIBCTXPROF_A) -lpthread -o $@

# regenerates tests/fuzz/corpus/ctxprof_region/ (after an ABI change)
$(CTXPROF_CORPUS_GEN): tests/fuzz/gen_ctxprof_region.c $(LIBCTXPROF_A) | $(OUTPUT)/fuzz
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/ctxprof $< $(LIBCTXPROF_A) -lpthread -o $@
ctxprof-corpus: $(CTXPROF_CORPUS_GEN)
	$(Q)$(CTXPROF_CORPUS_GEN) tests/fuzz/corpus/ctxprof_region

-include $(wildcard $(OUTPUT)/lib/ctxprof/*.d)
