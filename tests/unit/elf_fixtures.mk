# ELF fixtures for test_elf_syms: real binaries, built here, whose symbols,
# build ids and segments the test checks against nm and readelf, and the
# stripped files with a .gnu_debuglink or MiniDebugInfo distributions ship.

STRIP ?= strip
OBJCOPY ?= objcopy
ELF_FIXTURE_DIR := $(OUTPUT)/fixtures
ELF_FIXTURES := $(addprefix $(ELF_FIXTURE_DIR)/,elf_fixture_nopie elf_fixture_pie \
	elf_fixture_stripped libelf_fixture.so elf_fixture_minidebug elf_fixture_debuglink)
# fixed flags, not $(CFLAGS): a sanitizer or -O0 build must not change the fixtures
ELF_FIXTURE_CFLAGS := -O1 -fno-inline -fno-omit-frame-pointer -std=gnu11 -Wall -Werror
ELF_FIXTURE_LDFLAGS := -Wl,--build-id=sha1

UNIT_EXTRA += $(ELF_FIXTURES)
$(OUTPUT)/tests/test_elf_syms $(OUTPUT)/tests/test_symbolizer: $(ELF_FIXTURES)

$(ELF_FIXTURE_DIR)/elf_fixture_nopie: tests/unit/fixtures/elf_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fno-pie -no-pie $(ELF_FIXTURE_LDFLAGS) $< -o $@

$(ELF_FIXTURE_DIR)/elf_fixture_pie: tests/unit/fixtures/elf_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIE -pie $(ELF_FIXTURE_LDFLAGS) $< -o $@

# -rdynamic puts the global functions in .dynsym, the only table strip leaves
$(ELF_FIXTURE_DIR)/elf_fixture_stripped: tests/unit/fixtures/elf_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIE -pie -rdynamic $(ELF_FIXTURE_LDFLAGS) $< -o $@.full
	$(Q)$(STRIP) --strip-all $@.full -o $@
	$(Q)rm -f $@.full

$(ELF_FIXTURE_DIR)/libelf_fixture.so: tests/unit/fixtures/elf_fixture_lib.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared $(ELF_FIXTURE_LDFLAGS) $< -o $@

# a stripped PIE whose static function only its debug file names; --strip-all,
# as distributions strip (--strip-debug would leave .symtab in place)
$(ELF_FIXTURE_DIR)/elf_fixture_debuglink.debug: tests/unit/fixtures/elf_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -g -fPIE -pie $(ELF_FIXTURE_LDFLAGS) $< -o $(@:.debug=.full)
	$(Q)$(OBJCOPY) --only-keep-debug $(@:.debug=.full) $@

$(ELF_FIXTURE_DIR)/elf_fixture_debuglink: $(ELF_FIXTURE_DIR)/elf_fixture_debuglink.debug
	$(call msg,FIXTURE,$@)
	$(Q)cd $(ELF_FIXTURE_DIR) && $(OBJCOPY) --strip-all \
		--add-gnu-debuglink=elf_fixture_debuglink.debug elf_fixture_debuglink.full \
		elf_fixture_debuglink

# MiniDebugInfo as Fedora's find-debuginfo makes it (the recipe of gdb's
# manual, "MiniDebugInfo"): the local functions .dynsym lacks, in a
# symbol-only debug file, xz-compressed into .gnu_debugdata; the unstripped
# $@.full stays, for the test's nm
$(ELF_FIXTURE_DIR)/elf_fixture_minidebug: tests/unit/fixtures/elf_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -g -fPIE -pie -rdynamic $(ELF_FIXTURE_LDFLAGS) $< -o $@.full
	$(Q)nm -D $@.full --format=posix --defined-only | awk '{ print $$1 }' | sort > $@.dynsyms
	$(Q)nm $@.full --format=posix --defined-only | \
		awk '{ if ($$2 == "T" || $$2 == "t" || $$2 == "D") print $$1 }' | sort > $@.funcsyms
	$(Q)comm -13 $@.dynsyms $@.funcsyms > $@.keep
	$(Q)$(OBJCOPY) --only-keep-debug $@.full $@.debug
	$(Q)$(OBJCOPY) -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.keep $@.debug $@.mini
	$(Q)rm -f $@.mini.xz && xz --keep $@.mini
	$(Q)$(STRIP) --strip-all -R .comment $@.full -o $@.tmp
	$(Q)$(OBJCOPY) --add-section .gnu_debugdata=$@.mini.xz $@.tmp $@
	$(Q)rm -f $@.dynsyms $@.funcsyms $@.keep $@.debug $@.mini $@.mini.xz $@.tmp

$(ELF_FIXTURE_DIR):
	$(Q)mkdir -p $@
