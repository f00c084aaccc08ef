# Workloads for the DWARF (.eh_frame) unwinder: programs whose call chains
# are known by construction but that frame pointers cannot walk (glibc
# callbacks, deep recursion, signal frames, PLT stubs into a shared library,
# frameless leaves).  Sources in tests/workloads/unwind/ (a folder of their
# own: the Makefile's generic workload rule builds every tests/workloads/*.c
# with frame pointers); binaries in $(OUTPUT)/workloads/ next to the others.
#
# Targets: unwind-workloads (also added to all), unwind-verify (objdump
# checks that gcc kept every unw_* frame and the promised frame layout),
# stacks-selftest (the stack checkers of tests/integration/stacks.sh on
# hand-written input; no root).  tests/integration/test_unwind.sh uses all
# three and runs under make integration.

UNWIND_SRC := tests/workloads/unwind
UNWIND_OUT := $(OUTPUT)/workloads
UNWIND_OMIT_FP := unw_qsort unw_deep unw_signal unw_plt
UNWIND_WITH_FP := unw_fp_leaf
UNWIND_LIB := $(UNWIND_OUT)/libunw_lib.so
UNWIND_WORKLOADS := $(addprefix $(UNWIND_OUT)/,$(UNWIND_OMIT_FP) $(UNWIND_WITH_FP)) $(UNWIND_LIB) \
	$(UNWIND_OUT)/unw_debugframe $(UNWIND_OUT)/unw_cfi_gap
# fixed flags, not $(CFLAGS): the frame layout is what these programs test;
# -Wl,-z,lazy because the PLT stubs must stay lazily bound
UNWIND_CFLAGS := -g -O2 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(UNWIND_SRC) -MMD -MP
UNWIND_LDFLAGS := -Wl,--build-id=sha1 -Wl,-z,lazy

.PHONY: unwind-workloads unwind-verify stacks-selftest
all: $(UNWIND_WORKLOADS)
unwind-workloads: $(UNWIND_WORKLOADS)

unwind-verify: $(UNWIND_WORKLOADS)
	$(Q)$(UNWIND_SRC)/verify.sh $(UNWIND_OUT)

stacks-selftest:
	$(Q)bash tests/integration/stacks.sh --selftest

$(addprefix $(UNWIND_OUT)/,$(UNWIND_OMIT_FP)): UNWIND_FP := -fomit-frame-pointer
$(addprefix $(UNWIND_OUT)/,$(UNWIND_WITH_FP)): UNWIND_FP := -fno-omit-frame-pointer

$(UNWIND_OUT)/unw_%: $(UNWIND_SRC)/unw_%.c | $(UNWIND_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(UNWIND_CFLAGS) $(UNWIND_FP) $< $(UNWIND_LDFLAGS) $(UNWIND_LINK) -o $@

$(UNWIND_LIB): $(UNWIND_SRC)/unw_lib.c | $(UNWIND_OUT)
	$(call msg,LIB,$@)
	$(Q)$(CC) $(UNWIND_CFLAGS) -fomit-frame-pointer -fPIC -shared $< $(UNWIND_LDFLAGS) \
		-Wl,-soname,libunw_lib.so -o $@

# unw_deep without .eh_frame: its CFI only in .debug_frame, split off into
# unw_debugframe.debug beside it (found through .gnu_debuglink), as a
# distribution ships a program built without unwind tables
$(UNWIND_OUT)/unw_debugframe: $(UNWIND_SRC)/unw_deep.c | $(UNWIND_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(UNWIND_CFLAGS) -fomit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables $< $(UNWIND_LDFLAGS) -o $@.full
	$(Q)$(OBJCOPY) --only-keep-debug $@.full $@.debug
	$(Q)$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $@.full $@
	$(Q)rm -f $@.full

# unw_cfi_gap: CFI everywhere but in unw_gap_nocfi, whose object has a
# frame pointer and no unwind tables of any kind (-g0: no .debug_frame either)
$(UNWIND_OUT)/unw_gap_nocfi.o: $(UNWIND_SRC)/unw_gap_nocfi.c | $(UNWIND_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNWIND_CFLAGS) -g0 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -c $< -o $@

$(UNWIND_OUT)/unw_cfi_gap: $(UNWIND_SRC)/unw_cfi_gap.c $(UNWIND_OUT)/unw_gap_nocfi.o | $(UNWIND_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(UNWIND_CFLAGS) -fomit-frame-pointer $^ $(UNWIND_LDFLAGS) -o $@

# unw_plt finds libunw_lib.so beside itself
$(UNWIND_OUT)/unw_plt: $(UNWIND_LIB)
$(UNWIND_OUT)/unw_plt: UNWIND_LINK = -L$(UNWIND_OUT) -lunw_lib '-Wl,-rpath,$$ORIGIN'

-include $(wildcard $(UNWIND_OUT)/unw_*.d $(UNWIND_OUT)/libunw_lib.d)
