# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The timeline's readers: test_timeline_spans, test_timeline_output and the fuzz target
# fuzz_timeline_names read what export/timeline.c writes with a strict JSON
# parser of their own (tests/unit/json_strict.c), linked into both; the
# fuzz target's copy is instrumented like the rest of it.

JSON_STRICT_OBJ := $(OUTPUT)/tests/json_strict.o

$(JSON_STRICT_OBJ): tests/unit/json_strict.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# the fixture and document checks both timeline tests use, compiled once
TIMELINE_CHECK_OBJ := $(OUTPUT)/tests/timeline_check.o
$(TIMELINE_CHECK_OBJ): tests/unit/timeline_check.c tests/unit/timeline_check.h \
		tests/unit/json_strict.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -c $< -o $@
$(OUTPUT)/tests/test_timeline_spans $(OUTPUT)/tests/test_timeline_output: $(TIMELINE_CHECK_OBJ) \
		$(JSON_STRICT_OBJ) tests/unit/timeline_check.h

$(OUTPUT)/fuzz/fuzz_timeline_names: tests/fuzz/fuzz_timeline_names.c tests/unit/json_strict.c \
		tests/unit/json_strict.h $(USER_SRCS) $(SKELS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/unit $< tests/unit/json_strict.c $(USER_SRCS) $(LIBS) \
		-o $@
