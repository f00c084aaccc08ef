# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The pprof unit tests (test_pprof_encode, test_pprof_write) share a decoder
# and fixtures (tests/unit/pprof_check.c), compiled once.
PPROF_CHECK_OBJ := $(OUTPUT)/tests/pprof_check.o

$(PPROF_CHECK_OBJ): tests/unit/pprof_check.c tests/unit/pprof_check.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -c $< -o $@
$(OUTPUT)/tests/test_pprof_encode $(OUTPUT)/tests/test_pprof_write: $(PPROF_CHECK_OBJ) \
	tests/unit/pprof_check.h
