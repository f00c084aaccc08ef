# libctxprof's tests: its unit tests, the TSan stress test and the fuzz
# corpus generator.  The library itself is built by lib/ctxprof/ctxprof.mk;
# the collector's reader (user/appctx/ctxprof_region.c) is part of
# libcollector.a like every user/*/*.c.

CTXPROF_STRESS := $(OUTPUT)/tests/stress_ctxprof_tsan
CTXPROF_CORPUS_GEN := $(OUTPUT)/fuzz/gen_ctxprof_region

UNIT_EXTRA += $(LIBCTXPROF)
STRESS_BINS += $(CTXPROF_STRESS)

.PHONY: ctxprof-corpus

# unit tests: the library's internals (-Ilib/ctxprof) and the collector's
# readers (test_app_context: regions the library makes in a child process)
# (test_ctxprof_context and test_ctxprof_lanes share tests/unit/ctxprof_check.c)
CTXPROF_CHECK_OBJ := $(OUTPUT)/tests/ctxprof_check.o
CTXPROF_TESTS := $(addprefix $(OUTPUT)/tests/,test_ctxprof_context test_ctxprof_lanes \
	test_ctxprof_region test_app_context)
$(CTXPROF_TESTS): \
		$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(UNIT_FIXTURES) $(LIBCTXPROF_A) \
		$(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/ctxprof $< $(filter %.o,$^) $(LIBCTXPROF_A) $(LIBCOLLECTOR) \
		$(ALL_LDFLAGS) $(LIBS) -lcmocka -o $@
$(CTXPROF_CHECK_OBJ): tests/unit/ctxprof_check.c tests/unit/ctxprof_check.h $(LIBCTXPROF_A) \
		| $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/ctxprof -c $< -o $@
$(OUTPUT)/tests/test_ctxprof_context $(OUTPUT)/tests/test_ctxprof_lanes: $(CTXPROF_CHECK_OBJ) \
	tests/unit/ctxprof_check.h

# the context protocol and the lanes under TSan, library built from source
CTXPROF_STRESS_SRCS := tests/unit/stress_ctxprof.c $(LIBCTXPROF_SRCS) user/appctx/ctxprof_region.c
$(CTXPROF_STRESS): $(CTXPROF_STRESS_SRCS) $(LIBCTXPROF_HDRS) user/appctx/ctxprof_region.h \
		tests/unit/ctxprof.mk | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(CLANG) -g -O1 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -Ilib/ctxprof \
		$(EXTRA_CFLAGS) -fsanitize=thread $(CTXPROF_STRESS_SRCS) -lpthread -o $@

# regenerates tests/fuzz/corpus/ctxprof_region/ (after an ABI change)
$(CTXPROF_CORPUS_GEN): tests/fuzz/gen_ctxprof_region.c $(LIBCTXPROF_A) | $(OUTPUT)/fuzz
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib/ctxprof $< $(LIBCTXPROF_A) -lpthread -o $@
ctxprof-corpus: $(CTXPROF_CORPUS_GEN)
	$(Q)$(CTXPROF_CORPUS_GEN) tests/fuzz/corpus/ctxprof_region

