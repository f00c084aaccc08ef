// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_source.h"
#include "unwind/table.h"
#include "util/errmsg.h"

#define SHT_X86_64_UNWIND_ 0x70000001 /* what some linkers give .eh_frame */

static const unsigned char elf64_lsb_ident[EI_NIDENT] = {
	ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
};

/* the image's section names */
static const char image_strtab[] = "\0.eh_frame\0.debug_frame\0.shstrtab";

/* the image's layout for a section of @len bytes: offsets of its names and headers */
static size_t image_size(size_t len, size_t *off_str, size_t *off_sh)
{
	*off_str = sizeof(Elf64_Ehdr) + len + CFI_SECTION_PAD;
	*off_sh = (*off_str + sizeof(image_strtab) + 7) & ~(size_t)7;
	return *off_sh + 3 * sizeof(Elf64_Shdr);
}

/*
 * Allocate the private image: ELF header, the section's @len bytes at
 * offset 64 then CFI_SECTION_PAD zeros, .shstrtab, three section headers.
 * The caller fills the section's bytes.  The @machine is the file's, so that
 * libdw applies that ABI's initial rules.
 */
static int cfi_src__alloc(struct cfi_src *src, size_t len, uint16_t machine)
{
	size_t off_str, off_sh;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;

	src->image_size = image_size(len, &off_str, &off_sh);
	src->image = calloc(1, src->image_size);
	if (!src->image)
		return -ENOMEM;
	eh = (Elf64_Ehdr *)src->image;
	memcpy(eh->e_ident, elf64_lsb_ident, sizeof(elf64_lsb_ident));
	eh->e_type = ET_DYN;
	eh->e_machine = machine;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = off_sh;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(src->image + off_str, image_strtab, sizeof(image_strtab));
	sh = (Elf64_Shdr *)(src->image + off_sh);
	sh[1].sh_name = src->sec.eh ? 1 : 11;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = src->sec.eh ? SHF_ALLOC : 0;
	sh[1].sh_addr = src->sec.addr;
	sh[1].sh_offset = sizeof(Elf64_Ehdr);
	sh[1].sh_size = len;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 24;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = off_str;
	sh[2].sh_size = sizeof(image_strtab);
	sh[2].sh_addralign = 1;
	src->sec.data = src->image + sizeof(Elf64_Ehdr);
	src->sec.size = len;
	return 0;
}

static const char *load_error(int err)
{
	switch (err) {
	case -ENOTSUP:
		return "compression type not supported";
	case -ENOMEM:
		return "out of memory";
	default:
		return "cannot read or inflate the section";
	}
}

int cfi_src__load(struct cfi_src *src, const struct elf_file *ef, bool eh, struct mem_budget *b,
		  char *err, size_t err_len)
{
	const Elf64_Shdr *sh;
	size_t idx, off_str, off_sh;
	uint64_t len;
	int ret;

	src->sec.eh = eh;
	src->sec.name = eh ? ".eh_frame" : ".debug_frame";
	idx = elf_file__find_section(ef, src->sec.name);
	if (!idx && !eh)
		idx = elf_file__find_section(ef, ".zdebug_frame");
	sh = elf_file__section(ef, idx);
	if (!sh)
		return 1;
	if (eh && sh->sh_type != SHT_PROGBITS && sh->sh_type != SHT_X86_64_UNWIND_) {
		set_err(err, err_len, "%s: unexpected section type %u", src->sec.name, sh->sh_type);
		return -EINVAL;
	}
	if (eh && (sh->sh_flags & SHF_COMPRESSED)) {
		set_err(err, err_len, "%s: compressed", src->sec.name);
		return -EINVAL;
	}
	src->sec.addr = eh ? sh->sh_addr : 0;
	ret = elf_file__section_size(ef, idx, UNWIND_TABLE_MAX_CFI_SIZE, &len);
	if (ret == -E2BIG) {
		set_err(err, err_len, "%s: larger than %u bytes", src->sec.name,
			UNWIND_TABLE_MAX_CFI_SIZE);
		return ret;
	}
	if (ret) {
		set_err(err, err_len, "%s: %s", src->sec.name, load_error(ret));
		return ret;
	}
	if (mem_budget__take(b, image_size(len, &off_str, &off_sh))) {
		set_err(err, err_len, "%s: %lu bytes past the memory budget", src->sec.name,
			(unsigned long)len);
		return -E2BIG;
	}
	ret = cfi_src__alloc(src, len, elf_file__ehdr(ef)->e_machine);
	if (!ret)
		ret = elf_file__section_read(ef, idx, src->image + sizeof(Elf64_Ehdr), len);
	if (ret) {
		set_err(err, err_len, "%s: %s", src->sec.name, load_error(ret));
		return ret;
	}
	ret = cfi_check(&src->sec, b, err, err_len);
	if (ret)
		return ret;
	/*
	 * Up front, from the count: what libdw will keep for its entries, and
	 * room for as many FDE ranges (charged as that array grows).
	 */
	src->libdw_charged = src->sec.nr_entries * CFI_LIBDW_ENTRY_BYTES;
	if (mem_budget__take(b, src->libdw_charged) ||
	    mem_budget__left(b) < src->sec.nr_entries * CFI_FDE_RANGE_BYTES) {
		mem_budget__give(b, src->libdw_charged);
		src->libdw_charged = 0;
		set_err(err, err_len, "%s: %zu entries need more than the memory budget (%zu MiB)",
			src->sec.name, src->sec.nr_entries, b->limit >> 20);
		return -E2BIG;
	}
	return 0;
}

int cfi_src__open_libdw(struct cfi_src *src, char *err, size_t err_len)
{
	src->elf = elf_memory((char *)src->image, src->image_size);
	if (src->elf && src->sec.eh) {
		src->cfi = dwarf_getcfi_elf(src->elf);
	} else if (src->elf) {
		src->dwarf = dwarf_begin_elf(src->elf, DWARF_C_READ, NULL);
		src->cfi = src->dwarf ? dwarf_getcfi(src->dwarf) : NULL;
	}
	if (!src->cfi) {
		set_err(err, err_len, "%s: libdw: %s", src->sec.name, dwarf_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

void cfi_src__release(struct cfi_src *src, struct mem_budget *b)
{
	if (src->cfi && src->sec.eh)
		dwarf_cfi_end(src->cfi);
	if (src->dwarf)
		dwarf_end(src->dwarf);
	if (src->elf)
		elf_end(src->elf);
	mem_budget__give(b, src->image_size + src->sec.cap_cies * sizeof(*src->sec.cies) +
				    src->libdw_charged);
	free(src->image);
	free(src->sec.cies);
	memset(src, 0, sizeof(*src));
}
