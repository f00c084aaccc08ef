# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fixtures for test_mmap_events: one small library built as two variants,
# each with its own build id.

MMAP_FIXTURE_DIR := $(OUTPUT)/fixtures/mmap
MMAP_FIXTURES := $(MMAP_FIXTURE_DIR)/libmmap_fixture_1.so $(MMAP_FIXTURE_DIR)/libmmap_fixture_2.so

UNIT_EXTRA += $(MMAP_FIXTURES)
$(OUTPUT)/tests/test_mmap_events: $(MMAP_FIXTURES)

$(MMAP_FIXTURE_DIR)/libmmap_fixture_%.so: tests/unit/fixtures/mmap_fixture_lib.c | $(MMAP_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O1 -std=gnu11 -Wall -Werror -fPIC -shared -Wl,--build-id=sha1 \
		-DMMAP_FIXTURE_VARIANT=$* $< -o $@

$(MMAP_FIXTURE_DIR):
	$(Q)mkdir -p $@
