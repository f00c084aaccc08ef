# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# ELF fixtures for test_unwind_table: real binaries, built here, whose CFI
# the test compares row by row with readelf --debug-dump=frames-interp.

UNWIND_FIXTURE_DIR := $(OUTPUT)/fixtures/unwind
UNWIND_FIXTURES := $(addprefix $(UNWIND_FIXTURE_DIR)/,unwind_omitfp_pie unwind_fp_nopie \
	libunwind_fixture.so unwind_bare_debug_frame unwind_bare_zlib unwind_bare_zlib_gnu \
	unwind_bare_stripped unwind_bare.debug unwind_bare_nocfi unwind_mixed unwind_mixed.debug)
# fixed flags, not $(CFLAGS): a sanitizer or -O0 build must not change the fixtures;
# -z lazy: calls go through the .plt stubs whose FDE has the PLT CFA expression
UNWIND_FIXTURE_CFLAGS := -O2 -std=gnu11 -Wall -Werror -Wl,-z,lazy
# no libc, no crt files, no linker-made .eh_frame: the CFI is .debug_frame or nothing
UNWIND_BARE_CFLAGS := -O2 -fno-omit-frame-pointer -std=gnu11 -Wall -Werror -nostdlib -static \
	-fno-pie -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wl,--no-ld-generated-unwind-info -Wl,--build-id=sha1
OBJCOPY ?= objcopy
STRIP ?= strip

UNIT_EXTRA += $(UNWIND_FIXTURES)

# the checks of a built table both unwind_table tests make
$(OUTPUT)/tests/unwind_check.o: tests/unit/unwind_check.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -c $< -o $@
$(OUTPUT)/tests/test_unwind_table $(OUTPUT)/tests/test_unwind_synth: $(OUTPUT)/tests/unwind_check.o

# the same program for AArch64 (A64_CC, tests/unit/elf_fixtures.mk), where it is installed
UNWIND_FIXTURES_A64 := $(addprefix $(UNWIND_FIXTURE_DIR)/,unwind_a64_omitfp_pie unwind_a64_fp_nopie)
ifneq ($(shell command -v $(A64_CC)),)
UNIT_EXTRA += $(UNWIND_FIXTURES_A64)
endif
$(UNWIND_FIXTURE_DIR)/unwind_a64_omitfp_pie: tests/unit/fixtures/unwind_fixture.c | $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(A64_CC) $(UNWIND_FIXTURE_CFLAGS) -fomit-frame-pointer -fPIE -pie $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_a64_fp_nopie: tests/unit/fixtures/unwind_fixture.c | $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(A64_CC) $(UNWIND_FIXTURE_CFLAGS) -fno-omit-frame-pointer -fno-pie -no-pie $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_omitfp_pie: tests/unit/fixtures/unwind_fixture.c | $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -fomit-frame-pointer -fPIE -pie $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_fp_nopie: tests/unit/fixtures/unwind_fixture.c | $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -fno-omit-frame-pointer -fno-pie -no-pie $< -o $@

$(UNWIND_FIXTURE_DIR)/libunwind_fixture.so: tests/unit/fixtures/unwind_fixture_lib.c \
		| $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -fPIC -shared $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_bare_debug_frame: tests/unit/fixtures/unwind_fixture_bare.c \
		| $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_BARE_CFLAGS) -g $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_bare_nocfi: tests/unit/fixtures/unwind_fixture_bare.c \
		| $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_BARE_CFLAGS) $< -o $@

# .debug_frame compressed as SHF_COMPRESSED, and as the older .zdebug_frame
$(UNWIND_FIXTURE_DIR)/unwind_bare_zlib: $(UNWIND_FIXTURE_DIR)/unwind_bare_debug_frame
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --compress-debug-sections=zlib $< $@

$(UNWIND_FIXTURE_DIR)/unwind_bare_zlib_gnu: $(UNWIND_FIXTURE_DIR)/unwind_bare_debug_frame
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --compress-debug-sections=zlib-gnu $< $@

# a stripped file whose CFI lives in its separate debug file only
$(UNWIND_FIXTURE_DIR)/unwind_bare_stripped: $(UNWIND_FIXTURE_DIR)/unwind_bare_debug_frame
	$(call msg,FIXTURE,$@)
	$(Q)$(STRIP) --strip-debug $< -o $@

$(UNWIND_FIXTURE_DIR)/unwind_bare.debug: $(UNWIND_FIXTURE_DIR)/unwind_bare_debug_frame
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@

# built without unwind tables, as some distributions build programs: the
# start files still bring .eh_frame, the program's own functions have CFI
# only in .debug_frame, which goes to the separate debug file
$(UNWIND_FIXTURE_DIR)/unwind_mixed.debug: tests/unit/fixtures/unwind_fixture.c \
		| $(UNWIND_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(UNWIND_FIXTURE_CFLAGS) -g -fomit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables $< -o $(@:.debug=.full)
	$(Q)$(OBJCOPY) --only-keep-debug $(@:.debug=.full) $@

$(UNWIND_FIXTURE_DIR)/unwind_mixed: $(UNWIND_FIXTURE_DIR)/unwind_mixed.debug
	$(call msg,FIXTURE,$@)
	$(Q)$(STRIP) --strip-debug $(<:.debug=.full) -o $@

$(UNWIND_FIXTURE_DIR):
	$(Q)mkdir -p $@

# test_elf_file reads their compressed .debug_frame sections too
$(OUTPUT)/tests/test_unwind_table $(OUTPUT)/tests/test_elf_file: $(UNWIND_FIXTURES)
