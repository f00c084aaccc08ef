# ELF fixtures for test_elf_syms: real binaries, built here, whose symbols,
# build ids and segments the test checks against nm and readelf.

STRIP ?= strip
ELF_FIXTURE_DIR := $(OUTPUT)/fixtures
ELF_FIXTURES := $(addprefix $(ELF_FIXTURE_DIR)/,elf_fixture_nopie elf_fixture_pie \
	elf_fixture_stripped libelf_fixture.so)
# fixed flags, not $(CFLAGS): a sanitizer or -O0 build must not change the fixtures
ELF_FIXTURE_CFLAGS := -O1 -fno-inline -fno-omit-frame-pointer -std=gnu11 -Wall -Werror
ELF_FIXTURE_LDFLAGS := -Wl,--build-id=sha1

UNIT_EXTRA += $(ELF_FIXTURES)
$(OUTPUT)/tests/test_elf_syms: $(ELF_FIXTURES)

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

$(ELF_FIXTURE_DIR):
	$(Q)mkdir -p $@
