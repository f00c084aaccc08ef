// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "appctx/go_binary.h"
#include "appctx/otel_tls.h"
#include "elf/elf_file.h"

/*
 * The versions whose layout is known, and how each was verified.  A line
 * is added only from the DWARF of a build by that version (readelf
 * --debug-dump=info: the members m and labels of runtime.g, curg of
 * runtime.m); tests/unit/golabels_fixture_expect.py derives them again from the
 * installed toolchain at each `make check`, and test_go_binary fails when
 * its version is missing here or differs.  Keyed by the minor version: Go
 * changes the runtime's structs between releases, not in patch releases.
 *
 * The label set's layout (enum go_labels_kind) from runtime/pprof/label.go
 * of each version's sources: a map[string]string to Go 1.23, a sorted
 * slice of key/value pairs since Go 1.24 (go_abi.h).
 *
 * go1.19: Debian 12's golang-1.19 (go1.19.8), linux/amd64.
 * go1.21, go1.22, go1.23: bookworm-backports' golang-1.21 (go1.21.13),
 *   golang-1.22 (go1.22.12), golang-1.23 (go1.23.5), linux/amd64; checked by
 *   test_go_labels.sh with GO_SUITE=bookworm-backports GO_MINOR=21 (22, 23).
 *   g.labels 344 in 1.21 (1.19's 360: runtime2.go dropped sysblocktraced,
 *   sysexitticks, traceseq, tracelastp and added parentGoid), 344 in 1.22
 *   (its new bools fill padding), 352 in 1.23 (g.syscallbp added); the label
 *   set still runtime/pprof's `type labelMap map[string]string`, in the hmap
 *   of runtime/map.go unchanged since 1.19 (8-slot buckets, minTopHash 5).
 * go1.24: Debian 13's golang-1.24 (go1.24.4), linux/amd64; checked by
 *   tests/integration/test_go_labels.sh with GO_SUITE=trixie.
 * go1.25: trixie-backports' golang-1.25 (go1.25.12), linux/amd64; checked
 *   with GO_SUITE=trixie-backports GO_MINOR=25.  gobuf lost ret, so g.sched
 *   is a word shorter: g.labels 344, m.curg 184, gobuf.bp 40.
 * go1.26, go1.27: Debian sid's golang-1.26 (go1.26.10) and golang-1.27
 *   (go1.27.3), linux/amd64 (DWARF 5); m.curg moved from 192 to 184;
 *   checked by test_go_labels.sh with GO_SUITE=sid GO_MINOR=26 or 27.
 * go1.20: in no Debian suite (bookworm, bookworm-backports, trixie,
 *   trixie-backports, sid): no build of it checked, so unsupported.
 *
 * The stack switch (go_abi.h: g.sched, a gobuf, whose sp, pc and bp the
 * native walk resumes from) from the same DWARF (the member sched of
 * runtime.g; sp, pc, bp of runtime.gobuf) and each version's
 * runtime/runtime2.go: gobuf is {sp, pc, g, ctxt, ret, lr, bp} to Go 1.24,
 * {sp, pc, g, ctxt, lr, bp} since 1.25; and
 * m.vdsoSP, m.vdsoPC, which nanotime1 and time.now set before they call
 * the vDSO on g0's stack (sys_linux_amd64.s, time_linux_amd64.s), from the
 * same DWARF (the members vdsoSP, vdsoPC of runtime.m).
 */
/* a version's entry as test_go_labels.sh reads it: not reflowed */
/* clang-format off */
static const struct go_runtime_layout layouts[] = {
	{.minor = 19, .g_m = 48, .m_curg = 192, .g_labels = 360, .kind = GO_LABELS_MAP,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48,
	 .m_vdso_sp = 800, .m_vdso_pc = 808},
	{.minor = 21, .g_m = 48, .m_curg = 192, .g_labels = 344, .kind = GO_LABELS_MAP,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48,
	 .m_vdso_sp = 808, .m_vdso_pc = 816},
	{.minor = 22, .g_m = 48, .m_curg = 192, .g_labels = 344, .kind = GO_LABELS_MAP,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48,
	 .m_vdso_sp = 1120, .m_vdso_pc = 1128},
	{.minor = 23, .g_m = 48, .m_curg = 192, .g_labels = 352, .kind = GO_LABELS_MAP,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48,
	 .m_vdso_sp = 856, .m_vdso_pc = 864},
	{.minor = 24, .g_m = 48, .m_curg = 192, .g_labels = 352, .kind = GO_LABELS_SLICE,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48,
	 .m_vdso_sp = 880, .m_vdso_pc = 888},
	{.minor = 25, .g_m = 48, .m_curg = 184, .g_labels = 344, .kind = GO_LABELS_SLICE,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 40,
	 .m_vdso_sp = 896, .m_vdso_pc = 904},
	{.minor = 26, .g_m = 48, .m_curg = 184, .g_labels = 352, .kind = GO_LABELS_SLICE,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 40,
	 .m_vdso_sp = 896, .m_vdso_pc = 904},
	{.minor = 27, .g_m = 48, .m_curg = 184, .g_labels = 352, .kind = GO_LABELS_SLICE,
	 .g_sched = 56, .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 40,
	 .m_vdso_sp = 896, .m_vdso_pc = 904},
};
/* clang-format on */

#define BUILDINFO_MAGIC	    "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_ALIGN	    16
#define BUILDINFO_HDR	    32
#define BUILDINFO_INLINE    0x2 /* flags: the version strings follow the header (Go 1.18+) */
#define BUILDINFO_BIG	    0x1 /* flags: big-endian pointers */
/* the section header gone: the first writable segment's bytes searched */
#define BUILDINFO_SEARCH (64u << 10)
/* a version string longer than this is no version */
#define VERSION_BYTES 64

const struct go_runtime_layout *go_binary__layout(unsigned int minor)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

unsigned int go_binary__minor(const char *v)
{
	unsigned long n = 0;
	const char *p;

	if (strncmp(v, "go1.", 4) || v[4] < '0' || v[4] > '9')
		return 0;
	for (p = v + 4; *p >= '0' && *p <= '9' && n < 100000; p++)
		n = n * 10 + (*p - '0');
	/* "go1.19", "go1.19.8", "go1.21rc2"; not "go1.19x" */
	if (*p && *p != '.' && strncmp(p, "rc", 2) && strncmp(p, "beta", 4) && *p != ' ')
		return 0;
	return n < 100000 ? (unsigned int)n : 0;
}

/* the file offset of the build info header: .go.buildinfo, else found in the data */
static int find_buildinfo(const struct elf_file *ef, uint64_t *at)
{
	const Elf64_Shdr *sh;
	const struct elf_load *loads;
	size_t idx, nr, i, n;
	uint8_t *buf;
	int err = -ENOENT;

	idx = elf_file__find_section(ef, ".go.buildinfo");
	sh = idx ? elf_file__section(ef, idx) : NULL;
	if (sh) {
		*at = sh->sh_offset;
		return 0;
	}
	loads = elf_file__loads(ef, &nr);
	for (i = 0; i < nr && !(loads[i].flags & PF_W && loads[i].in_file && loads[i].filesz); i++)
		;
	if (i == nr)
		return -ENOENT;
	n = loads[i].filesz < BUILDINFO_SEARCH ? loads[i].filesz : BUILDINFO_SEARCH;
	buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	err = elf_file__read(ef, loads[i].offset, buf, n);
	if (!err) {
		err = -ENOENT;
		for (idx = 0; idx + BUILDINFO_HDR <= n; idx += BUILDINFO_ALIGN)
			if (!memcmp(buf + idx, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN)) {
				*at = loads[i].offset + idx;
				err = 0;
				break;
			}
	}
	free(buf);
	return err;
}

/* a uvarint of at most two bytes (a version is short) at @p[0..@n); -1 when none */
static int uvarint(const uint8_t *p, size_t n, size_t *used)
{
	if (n >= 1 && p[0] < 0x80) {
		*used = 1;
		return p[0];
	}
	if (n >= 2 && p[1] < 0x80) {
		*used = 2;
		return (p[0] & 0x7f) | p[1] << 7;
	}
	return -1;
}

static int read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *dst, uint64_t len)
{
	const struct elf_load *loads;
	uint64_t off;
	size_t nr;

	loads = elf_file__loads(ef, &nr);
	if (elf_loads__vaddr_to_offset(loads, nr, vaddr, len, &off))
		return -EINVAL;
	return elf_file__read(ef, off, dst, len);
}

int go_binary__version(const struct elf_file *ef, char *buf, size_t len)
{
	uint8_t hdr[BUILDINFO_HDR + 2 + VERSION_BYTES], str[VERSION_BYTES];
	uint64_t at, addr, sh[2];
	size_t used = 0, n;
	int err, vlen;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	err = find_buildinfo(ef, &at);
	if (err)
		return err;
	/* the header and a version's bytes, or what the file holds of them */
	if (at >= elf_file__size(ef) || elf_file__size(ef) - at < BUILDINFO_HDR)
		return -EINVAL;
	n = elf_file__size(ef) - at < sizeof(hdr) ? elf_file__size(ef) - at : sizeof(hdr);
	if (elf_file__read(ef, at, hdr, n) || memcmp(hdr, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN))
		return -EINVAL;
	if (hdr[15] & BUILDINFO_INLINE) {
		vlen = uvarint(hdr + BUILDINFO_HDR, n - BUILDINFO_HDR, &used);
		if (vlen < 0 || vlen > VERSION_BYTES || BUILDINFO_HDR + used + vlen > n)
			return -EINVAL;
		memcpy(str, hdr + BUILDINFO_HDR + used, vlen);
	} else {
		/* before Go 1.18: a pointer to runtime.buildVersion, a string header */
		if (hdr[14] != 8 || (hdr[15] & BUILDINFO_BIG))
			return -EINVAL;
		memcpy(&addr, hdr + 16, sizeof(addr));
		err = read_vaddr(ef, addr, sh, sizeof(sh));
		if (err)
			return err;
		if (sh[1] > VERSION_BYTES)
			return -EINVAL;
		vlen = (int)sh[1];
		err = read_vaddr(ef, sh[0], str, vlen);
		if (err)
			return err;
	}
	if (memchr(str, '\0', vlen))
		return -EINVAL;
	n = (size_t)vlen < len - 1 ? (size_t)vlen : len - 1;
	memcpy(buf, str, n);
	buf[n] = '\0';
	return 0;
}

/* runtime.tlsg's offset in the TLS block, from .symtab */
static int find_tlsg(const struct elf_file *ef, uint64_t *value)
{
	struct elf_symtab st;
	char name[16];
	Elf64_Sym sym;
	size_t i;
	int err;

	err = elf_file__symtab(ef, SHT_SYMTAB, &st);
	if (err)
		return err;
	err = -ENOENT;
	for (i = 1; i < st.nr && !elf_symtab__get(&st, i, &sym); i++) {
		if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF ||
		    elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL) ||
		    strcmp(name, "runtime.tlsg"))
			continue;
		*value = sym.st_value;
		err = 0;
		break;
	}
	elf_symtab__release(&st);
	return err;
}

int go_binary__tls_g(const struct elf_file *ef, int32_t *tls_g, const char **why)
{
	const Elf64_Phdr *ph, *tls = NULL;
	uint64_t tlsg = 0, off;
	size_t i;

	for (i = 0; i < elf_file__nr_segments(ef) && !tls; i++) {
		ph = elf_file__segment(ef, i);
		if (ph && ph->p_type == PT_TLS)
			tls = ph;
	}
	/* the Go linker alone: runtime.settls points fsbase 8 bytes past m.tls[0], g's slot */
	if (!tls) {
		*tls_g = -8;
		return 0;
	}
	if (tls->p_memsz > 4096 || tls->p_align > 4096) {
		*why = "a TLS segment past 4 KiB";
		return -EINVAL;
	}
	/* the runtime's 8 bytes alone need no symbol; with others, runtime.tlsg says */
	if (tls->p_memsz > 8 && find_tlsg(ef, &tlsg)) {
		*why = "stripped, with TLS variables besides the runtime's (runtime.tlsg unknown)";
		return -ENOTSUP;
	}
	off = otel_tls__static_offset(tls->p_memsz, tls->p_align, tls->p_vaddr);
	if (tlsg + 8 > tls->p_memsz || off < tls->p_memsz) {
		*why = "runtime.tlsg outside the TLS segment";
		return -EINVAL;
	}
	*tls_g = (int32_t)((int64_t)tlsg - (int64_t)off);
	return 0;
}

/*
 * The .gopclntab header's magic says which linker wrote the table: 1.16-1.17,
 * 1.18-1.19, 1.20 on (elf/gopclntab.c).  A build info naming a version of
 * another era lies (or was patched): its layout would be read at made-up
 * offsets.  A table not found by its section name (PIE, external links)
 * is not checked here.
 */
static bool pclntab_agrees(const struct elf_file *ef, unsigned int minor)
{
	size_t idx = elf_file__find_section(ef, ".gopclntab");
	const Elf64_Shdr *sh = idx ? elf_file__section(ef, idx) : NULL;
	uint32_t magic, want;

	if (!sh || sh->sh_size < sizeof(magic) || elf_file__read(ef, sh->sh_offset, &magic, 4))
		return true;
	want = minor >= 20 ? 0xfffffff1u : minor >= 18 ? 0xfffffff0u : 0xfffffffau;
	return magic == want;
}

enum go_binary_status go_binary__inspect(const struct elf_file *ef, struct go_binary *out,
					 const char **why)
{
	const struct go_runtime_layout *l;
	int err;

	memset(out, 0, sizeof(*out));
	err = go_binary__version(ef, out->version, sizeof(out->version));
	if (err == -ENOENT) {
		*why = "no Go build info";
		return GO_BINARY_NOT_GO;
	}
	if (err) {
		*why = "Go build info unreadable";
		return err == -EINVAL ? GO_BINARY_UNSUPPORTED : GO_BINARY_UNREADABLE;
	}
	out->minor = go_binary__minor(out->version);
	if (elf_file__ehdr(ef)->e_machine != EM_X86_64) {
		*why = "not x86-64";
		return GO_BINARY_UNSUPPORTED;
	}
	l = go_binary__layout(out->minor);
	if (!l) {
		*why = "a Go version whose runtime layout is not in the table";
		return GO_BINARY_UNSUPPORTED;
	}
	if (!pclntab_agrees(ef, out->minor)) {
		*why = "the build info's version and the .gopclntab's disagree";
		return GO_BINARY_UNSUPPORTED;
	}
	err = go_binary__tls_g(ef, &out->tls_g, why);
	if (err)
		return GO_BINARY_UNSUPPORTED;
	out->ref = (struct go_labels_ref){
		.tls_g = out->tls_g,
		.g_m = l->g_m,
		.m_curg = l->m_curg,
		.g_labels = l->g_labels,
		.kind = l->kind,
		.g_sched = l->g_sched,
		.gobuf_sp = l->gobuf_sp,
		.gobuf_pc = l->gobuf_pc,
		.gobuf_bp = l->gobuf_bp,
		.m_vdso_sp = l->m_vdso_sp,
		.m_vdso_pc = l->m_vdso_pc,
	};
	return GO_BINARY_OK;
}
