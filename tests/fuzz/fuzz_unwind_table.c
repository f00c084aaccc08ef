// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for user/unwind/unwind_table.c and its stages: any bytes
 * may come from a hostile target's file.  Building, in slices as the
 * unwinder builds, must fail cleanly or give a table that keeps every
 * invariant the BPF unwinder relies on, within its budgets; ASan/UBSan catch
 * the rest (in our code: the system's libdw is not instrumented, which is
 * why cfi_check.c checks what libdw would read before libdw reads it).
 *
 * Seeds in tests/fuzz/corpus/unwind_table/ are tiny real files, made with
 * F="-nostdlib -Wl,-z,noseparate-code -Wl,--build-id=none" and
 *   t.c: leaf(), an alloca user, a force_align_arg_pointer function and _start
 *   p.c: a force_align_arg_pointer function with 8 arguments calling extern ext()
 *   gcc -O2 $F -static -fno-pie -no-pie t.c -o tiny_eh            (.eh_frame)
 *   gcc -O2 $F -shared -fPIC -Wl,-z,lazy p.c -o tiny_plt.so       (.plt, DRAP)
 *   gcc -O2 $F -static -fno-pie -no-pie -g -fno-asynchronous-unwind-tables \
 *	-fno-unwind-tables -Wl,--no-ld-generated-unwind-info t.c     (then every
 *	.debug_* section but .debug_frame removed: tiny_debug_frame)
 *   objcopy --compress-debug-sections=zlib / =zlib-gnu: tiny_debug_frame_zlib / _zgnu
 *   gcc -Os $F -static ... -fno-asynchronous-unwind-tables ... t.c -o tiny_nocfi
 * and two inputs that hurt libdw 0.188 when cfi_check.c is off:
 *   cie_aug_overread   a CIE "zPPP...": dwarf_next_cfi() reads past the section
 *   cfa_huge_register  DW_CFA_* on register 2^27: libdw reallocs a 2 GB frame
 *   cfi_slow, cfi_big  the budgets' bombs, small: tests/hostile_elf.py cfi-slow
 *	--bytes 256 --pairs 20 and cfi-big --fdes 50
 * and a regression case:
 *   slow_unit_tiny_eh_mutant  the slow-unit artifact a smoke run once left at
 *	the repository's root: tiny_eh mutated (code alignment 4, a PT_LOAD
 *	moved, advance_loc past its FDE's end).  It builds in 0.2 ms under ASan
 *	and 120 s of fuzzing from it found no unit over 1 s: that run was slow
 *	for the machine's sake, not the input's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "unwind/unwind_table.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

static void check_table(const struct unwind_table *t, const uint8_t *data, size_t size)
{
	size_t i, sum = 0;
	uint64_t probe;

	check(t->nr_rows >= 2 && t->nr_rows <= UNWIND_TABLE_MAX_ROWS);
	check(t->nr_rules >= 1 && t->nr_rules <= t->nr_rows);
	check(t->source && (!strcmp(t->source, ".eh_frame") || !strcmp(t->source, ".debug_frame")));
	check(t->sources && t->sources < 1u << UNWIND_TABLE_SOURCES &&
	      t->stats.covered_bytes <= t->stats.text_bytes);
	for (i = 0; i < t->nr_rules; i++) {
		const struct unwind_rule *r = &t->rules[i];

		check(r->cmd < UNWIND_CMD_MAX && r->cmd != UNWIND_CMD_FP &&
		      r->rbp < UNWIND_RBP_MAX);
		check(r->ra < UNWIND_RA_MAX && (r->ra == UNWIND_RA_CFA || !r->ra_off));
		/* a stack switch is a Go function's, and only such a rule names one */
		check(r->go_switch < UNWIND_GO_SWITCH_MAX &&
		      (r->cmd == UNWIND_CMD_GO_SYSTEM_STACK || !r->go_switch));
		check(!i || memcmp(r, &t->rules[i - 1], sizeof(*r)) != 0);
	}
	for (i = 0; i < t->nr_rows; i++) {
		const struct unwind_row *row = &t->rows[i];

		check(row->rule < t->nr_rules);
		check(!i || (row->pc > row[-1].pc && row->rule != row[-1].rule));
		/* the lookup BPF does finds this row at its first byte and its last */
		check(unwind_table__find(t, t->base + row->pc) == &t->rules[row->rule]);
		if (i)
			check(unwind_table__find(t, t->base + row->pc - 1) ==
			      &t->rules[row[-1].rule]);
	}
	for (i = 0; i < UNWIND_CMD_MAX; i++)
		sum += t->stats.cmd_rows[i];
	check(sum == t->nr_rows);
	check(t->rules[t->rows[t->nr_rows - 1].rule].cmd == UNWIND_CMD_INVALID);
	check(unwind_table__find(t, t->base - 1)->cmd == UNWIND_CMD_INVALID);
	check(unwind_table__find(t, UINT64_MAX)->cmd == UNWIND_CMD_INVALID);

	/* addresses taken from the input itself */
	for (i = 0; i + sizeof(probe) <= size && i < 512; i += sizeof(probe)) {
		memcpy(&probe, data + i, sizeof(probe));
		check(unwind_table__find(t, probe) != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 20 ms of CPU, not the collector's 2 s: a slow input costs the fuzzer less */
	struct unwind_table_limits lim = {.cpu_ns = UNWIND_TABLE_CPU_NS / 100};
	struct unwind_table *t = NULL;
	struct unwind_build *b = NULL;
	struct elf_file *ef;
	char err[256];
	int ret;

	err[0] = '\0';
	ef = elf_file__open_mem(data, size);
	if (!ef)
		return 0;
	/* AArch64 inputs are built with AArch64's rules, x86-64's with x86-64's */
	if (elf_file__ehdr(ef)->e_machine == EM_AARCH64)
		lim.machine = EM_AARCH64;
	/* built in slices, as the unwinder builds: the file is needed only to start */
	ret = unwind_build__start(ef, NULL, &lim, &b, err, sizeof(err));
	elf_file__free(ef);
	if (!ret)
		while ((ret = unwind_build__run(b, 1000 * 1000)) == -EAGAIN)
			check(unwind_build__bytes(b) <= UNWIND_TABLE_MEMORY);
	if (ret) {
		check(err[0]);
		check(ret == -EINVAL || ret == -ENODATA || ret == -ENOTSUP || ret == -EFBIG ||
		      ret == -E2BIG || ret == -ENOMEM || ret == -ETIME);
		unwind_build__free(b);
		return 0;
	}
	t = unwind_build__take(b);
	check(t != NULL && !unwind_build__take(b));
	unwind_build__free(b);
	check(t->stats.mem_peak <= UNWIND_TABLE_MEMORY);
	check_table(t, data, size);
	unwind_table__free(t);
	return 0;
}
