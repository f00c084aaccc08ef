/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi_source - the section-loading stage of an unwind table build
 * (unwind_table.h): one CFI section of an ELF file, copied into a private
 * ELF image that holds only that section, and libdw opened on that image.
 *
 * Why a private image rather than libdw on the file: libdw then sees no
 * .eh_frame_hdr (a hostile search table could point lookups at other FDEs
 * than the ones we enumerate), never reads the whole file (its
 * no-section-header path does), never sees the target's fd or bytes (the
 * file is read through elf/elf_file.h), and its few reads past the end of a
 * truncated operand land in our padding (CFI_SECTION_PAD).
 *
 * A cfi_src is its builder's: no locking.
 */
#ifndef CTXPROF_CFI_SOURCE_H
#define CTXPROF_CFI_SOURCE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"
#include "unwind/cfi_check.h"
#include "util/mem_budget.h"

/*
 * What libdw keeps for each CIE and FDE it meets (its FDE and CIE records
 * and their search tree nodes): it interns every entry it walks past while
 * searching a section without .eh_frame_hdr, so a build ends up holding all
 * of them.  Measured: about 78 bytes an entry (bench/README.md).
 */
#define CFI_LIBDW_ENTRY_BYTES 96
/* what the FDE collection keeps for each (struct fde_range) */
#define CFI_FDE_RANGE_BYTES 40

struct cfi_src {
	struct cfi_section sec; /* the section, in image */
	uint8_t *image;
	size_t image_size;
	size_t libdw_charged; /* bytes charged for libdw's records */
	Elf *elf;
	Dwarf *dwarf;
	Dwarf_CFI *cfi;
};

/**
 * cfi_src__load() - copy @ef's .eh_frame (@eh) or .debug_frame (or
 * .zdebug_frame; SHF_COMPRESSED zlib accepted) into @src's private image,
 * and check it (cfi_check()).
 * @b: the build's budget, charged for the image before it is allocated,
 *	then, from the count of entries the check found, for what libdw will
 *	keep of them (CFI_LIBDW_ENTRY_BYTES each), with room left for their
 *	FDE ranges (CFI_FDE_RANGE_BYTES each)
 * Return: 0; 1 when @ef has no such section; -E2BIG past
 * UNWIND_TABLE_MAX_CFI_SIZE or the budget; -EINVAL, -ENOTSUP for a section
 * refused (a reason in @err); -ENOMEM.  @src is released by the caller
 * either way (cfi_src__release()).
 */
int cfi_src__load(struct cfi_src *src, const struct elf_file *ef, bool eh, struct mem_budget *b,
		  char *err, size_t err_len);

/**
 * cfi_src__open_libdw() - hand the checked image to libdw.
 * Return: 0, -EINVAL when libdw refuses it.
 */
int cfi_src__open_libdw(struct cfi_src *src, char *err, size_t err_len);

/** cfi_src__release() - close libdw, free the image, give back its charges. */
void cfi_src__release(struct cfi_src *src, struct mem_budget *b);

#endif /* CTXPROF_CFI_SOURCE_H */
