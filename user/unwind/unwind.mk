# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# user/unwind: the unwind table builder (libdw, libelf, zlib).
# The top Makefile only builds user/*.c into libcollector.a and includes
# tests/unit/*.mk; until it builds user/*/ and includes this file itself,
# tests/unit/unwind_fixtures.mk includes it.

UNWIND_SRCS := user/unwind/unwind_table.c
UNWIND_HDRS := user/unwind/unwind_table.h include/unwind.h
UNWIND_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(UNWIND_SRCS))
UNWIND_LIBS := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf) -lz

DEB_PKGS += libdw-dev

# a shorter stem than the Makefile's $(OUTPUT)/user/%.o, so make picks this one
$(OUTPUT)/user/unwind/%.o: user/unwind/%.c | $(OUTPUT)/user/unwind
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/user/unwind:
	$(Q)mkdir -p $@

-include $(wildcard $(OUTPUT)/user/unwind/*.d)
