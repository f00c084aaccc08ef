# ELF fixtures for test_elf_syms_*: real binaries, built here, whose symbols,
# build ids and segments the test checks against nm and readelf.  And for
# the symbolizer's other sources of names: separate debug files in fake
# target roots (test_debug_file), MiniDebugInfo (test_elf_syms_lookup), C++
# (test_export), aliases and symbol versions (test_elf_syms_*, test_export).

STRIP ?= strip
OBJCOPY ?= objcopy
CXX ?= g++
ELF_FIXTURE_DIR := $(OUTPUT)/fixtures
ELF_FIXTURES := $(addprefix $(ELF_FIXTURE_DIR)/,elf_fixture_nopie elf_fixture_pie \
	elf_fixture_stripped libelf_fixture.so elf_fixture_minidebug elf_fixture_debuglink \
	libelf_fixture_alias.so libelf_fixture_plt.so libelf_fixture_plt_ibt.so)
# target roots, each /bin/elf_fixture_debuglink (stripped, with a
# .gnu_debuglink) and its debug file where the test expects it:
#   buildid: /usr/lib/debug/.build-id/xx/yyyy.debug    (found by build id)
#   link:    /bin/.debug/elf_fixture_debuglink.debug   (found by debuglink)
#   wrongid: .build-id/xx/yyyy.debug of another build  (refused)
#   badcrc:  /bin/elf_fixture_debuglink.debug, a byte longer (refused: CRC)
DEBUG_ROOTS := $(addprefix $(ELF_FIXTURE_DIR)/debugroot_,buildid link wrongid badcrc)
DEBUG_ROOT_STAMPS := $(addsuffix /.stamp,$(DEBUG_ROOTS))
CXX_FIXTURE := $(ELF_FIXTURE_DIR)/libcxx_fixture.so
# fixed flags, not $(CFLAGS): a sanitizer or -O0 build must not change the fixtures
ELF_FIXTURE_CFLAGS := -O1 -fno-inline -fno-omit-frame-pointer -std=gnu11 -Wall -Werror
ELF_FIXTURE_LDFLAGS := -Wl,--build-id=sha1

UNIT_EXTRA += $(ELF_FIXTURES) $(DEBUG_ROOT_STAMPS) $(CXX_FIXTURE)
ELF_SYMS_TESTS := $(OUTPUT)/tests/test_elf_syms_lookup $(OUTPUT)/tests/test_elf_syms_hostile
$(ELF_SYMS_TESTS) $(OUTPUT)/tests/test_symbolizer: $(ELF_FIXTURES)
# the fixtures and checks both elf_syms tests use, compiled once
$(OUTPUT)/tests/elf_syms_check.o: tests/unit/elf_syms_check.c tests/unit/elf_syms_check.h \
		| $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -c $< -o $@
$(ELF_SYMS_TESTS): $(OUTPUT)/tests/elf_syms_check.o tests/unit/elf_syms_check.h
$(OUTPUT)/tests/test_debug_file: $(DEBUG_ROOT_STAMPS)
$(OUTPUT)/tests/test_elf_file: $(ELF_FIXTURES) $(ELF_FIXTURE_DIR)/elf_fixture_debuglink.debug
$(OUTPUT)/tests/test_export: $(CXX_FIXTURE) $(ELF_FIXTURE_DIR)/libelf_fixture_alias.so

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

# calls through the PLT: lazy binding (.plt, and .plt.got for strcmp, whose
# address is also taken), and IBT's .plt.sec (-z ibtplt, bound at load)
$(ELF_FIXTURE_DIR)/libelf_fixture_plt.so: tests/unit/fixtures/elf_fixture_plt.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared -Wl,-z,lazy $(ELF_FIXTURE_LDFLAGS) $< -o $@

$(ELF_FIXTURE_DIR)/libelf_fixture_plt_ibt.so: tests/unit/fixtures/elf_fixture_plt.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared -fcf-protection=full -Wl,-z,ibtplt \
		-Wl,-z,now $(ELF_FIXTURE_LDFLAGS) $< -o $@

# the same for AArch64 with Debian's cross compiler (make deps installs it):
# lazy 16-byte stubs, and BTI + PAC-PLT's 24-byte ones (autia1716 before br)
ELF_FIXTURES_A64 := $(addprefix $(ELF_FIXTURE_DIR)/,libelf_fixture_plt_a64.so \
	libelf_fixture_plt_a64_pac.so)
ifneq ($(shell command -v $(A64_CC)),)
UNIT_EXTRA += $(ELF_FIXTURES_A64)
$(OUTPUT)/tests/test_elf_syms_lookup: $(ELF_FIXTURES_A64)
endif
$(ELF_FIXTURE_DIR)/libelf_fixture_plt_a64.so: tests/unit/fixtures/elf_fixture_plt.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(A64_CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared -Wl,-z,lazy $(ELF_FIXTURE_LDFLAGS) $< -o $@

$(ELF_FIXTURE_DIR)/libelf_fixture_plt_a64_pac.so: tests/unit/fixtures/elf_fixture_plt.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(A64_CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared -mbranch-protection=standard \
		-Wl,-z,force-bti -Wl,-z,pac-plt -Wl,-z,lazy $(ELF_FIXTURE_LDFLAGS) $< -o $@ 2>/dev/null

# aliases at one address and a function with two versions, exported by a
# version script as glibc exports its own: .symtab names the versioned one
# "fx_sem_post@@FX_2" and "fx_sem_post@FX_1"
$(ELF_FIXTURE_DIR)/libelf_fixture_alias.so: tests/unit/fixtures/elf_fixture_alias.c \
		tests/unit/fixtures/elf_fixture_alias.map | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) $(ELF_FIXTURE_CFLAGS) -fPIC -shared $(ELF_FIXTURE_LDFLAGS) \
		-Wl,--version-script=tests/unit/fixtures/elf_fixture_alias.map $< -o $@

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

# the debug file of another build (another build id)
$(ELF_FIXTURE_DIR)/elf_fixture_other.debug: $(ELF_FIXTURE_DIR)/libelf_fixture.so
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@

# the root's /bin/elf_fixture_debuglink and its debug file; $(1): root,
# $(2): debug file, $(3): its path in the root, "BUILDID" replaced by xx/yyyy
define debug_root
	$(call msg,FIXTURE,$(1))
	$(Q)rm -rf $(1) && mkdir -p $(1)/bin
	$(Q)cp $(ELF_FIXTURE_DIR)/elf_fixture_debuglink $(1)/bin/
	$(Q)id=$$(readelf -n $(ELF_FIXTURE_DIR)/elf_fixture_debuglink | \
		sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'); \
		[ -n "$$id" ] || { echo "no build id in elf_fixture_debuglink" >&2; exit 1; }; \
		dst=$(1)$$(echo "$(3)" | sed "s|BUILDID|$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-)|"); \
		mkdir -p $$(dirname $$dst) && cp $(2) $$dst
endef

$(ELF_FIXTURE_DIR)/debugroot_buildid/.stamp: $(ELF_FIXTURE_DIR)/elf_fixture_debuglink
	$(call debug_root,$(@D),$(<).debug,/usr/lib/debug/.build-id/BUILDID.debug)
	$(Q)touch $@

$(ELF_FIXTURE_DIR)/debugroot_link/.stamp: $(ELF_FIXTURE_DIR)/elf_fixture_debuglink
	$(call debug_root,$(@D),$(<).debug,/bin/.debug/elf_fixture_debuglink.debug)
	$(Q)touch $@

$(ELF_FIXTURE_DIR)/debugroot_wrongid/.stamp: $(ELF_FIXTURE_DIR)/elf_fixture_debuglink \
		$(ELF_FIXTURE_DIR)/elf_fixture_other.debug
	$(call debug_root,$(@D),$(ELF_FIXTURE_DIR)/elf_fixture_other.debug,/usr/lib/debug/.build-id/BUILDID.debug)
	$(Q)touch $@

$(ELF_FIXTURE_DIR)/debugroot_badcrc/.stamp: $(ELF_FIXTURE_DIR)/elf_fixture_debuglink
	$(call debug_root,$(@D),$(<).debug,/bin/elf_fixture_debuglink.debug)
	$(Q)printf x >> $(@D)/bin/elf_fixture_debuglink.debug
	$(Q)touch $@

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

$(CXX_FIXTURE): tests/unit/fixtures/cxx_fixture.cpp | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CXX) -O1 -fno-inline -fPIC -shared -Wall -Werror $(ELF_FIXTURE_LDFLAGS) $< -o $@

$(ELF_FIXTURE_DIR):
	$(Q)mkdir -p $@
