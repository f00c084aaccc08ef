# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The timeline's readers: test_timeline and the fuzz target
# fuzz_timeline_names read what export/timeline.c writes with a strict JSON
# parser of their own (tests/unit/json_strict.c), linked into both; the
# fuzz target's copy is instrumented like the rest of it.

JSON_STRICT_OBJ := $(OUTPUT)/tests/json_strict.o

$(JSON_STRICT_OBJ): tests/unit/json_strict.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/test_timeline: tests/unit/test_timeline.c $(JSON_STRICT_OBJ) $(UNIT_FIXTURES) \
		$(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(JSON_STRICT_OBJ) $(UNIT_FIXTURES) $(LIBCOLLECTOR) \
		$(ALL_LDFLAGS) $(LIBS) -lcmocka -o $@

$(OUTPUT)/fuzz/fuzz_timeline_names: tests/fuzz/fuzz_timeline_names.c tests/unit/json_strict.c \
		tests/unit/json_strict.h $(USER_SRCS) $(SKELS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/unit $< tests/unit/json_strict.c $(USER_SRCS) $(LIBS) \
		-o $@
