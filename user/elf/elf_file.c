// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_file - headers, sections, segments, notes and symbol tables of a
 * hostile ELF file, read in bounded pieces into private memory.
 *
 * What opening costs: the headers (at most ELF_FILE_MAX_SECTIONS section and
 * ELF_FILE_MAX_SEGMENTS program headers), the section names and the notes;
 * a 1 GiB library costs a few KiB.  Everything else is read when asked for,
 * through windows of a fixed size or into a buffer the caller sized (and
 * capped) from the header.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/elf_file.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELF_FILE_HOST_DATA ELFDATA2LSB
#else
#define ELF_FILE_HOST_DATA ELFDATA2MSB
#endif

#define SYMTAB_WINDOW  2048	   /* entries read at once: 48 KiB */
#define STRTAB_WINDOW  (64u << 10) /* string bytes read at once */
#define NAME_MAX_LEN   4096	   /* the longest name elf_symtab__name() copies */
#define INFLATE_WINDOW (64u << 10) /* compressed bytes read at once */
#define PREAD_CHUNK    (1u << 30)

struct elf_file {
	int fd; /* -1: the image is in memory */
	const uint8_t *mem;
	uint64_t size;
	Elf64_Ehdr ehdr;
	Elf64_Shdr *shdrs;
	size_t shnum;
	Elf64_Phdr *phdrs;
	size_t phnum;
	char *names; /* .shstrtab, its last byte a NUL; NULL when unusable */
	uint64_t names_size;
	struct elf_load *loads;
	size_t nr_loads;
	uint8_t build_id[ELF_FILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool has_debuglink;
	uint32_t debuglink_crc;
	char debuglink[ELF_FILE_DEBUGLINK_MAX + 1];
};

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

int elf_file__read(const struct elf_file *ef, uint64_t off, void *dst, uint64_t len)
{
	uint8_t *p = dst;

	if (!range_ok(off, len, ef->size))
		return -EINVAL;
	if (ef->mem) {
		memcpy(dst, ef->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(ef->fd, p, len > PREAD_CHUNK ? PREAD_CHUNK : len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* the file shrank since fstat(): its headers no longer hold */
		if (n == 0)
			return -EINVAL;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* a table of @nr entries of @entsize bytes at @off, read whole (callers cap @nr) */
static int read_table(struct elf_file *ef, uint64_t off, uint64_t nr, size_t entsize, void **out)
{
	void *buf;
	int err;

	if (!range_ok(off, nr * entsize, ef->size))
		return -EINVAL;
	buf = malloc(nr * entsize);
	if (!buf)
		return -ENOMEM;
	err = elf_file__read(ef, off, buf, nr * entsize);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

static int read_headers(struct elf_file *ef)
{
	const Elf64_Ehdr *eh = &ef->ehdr;
	Elf64_Shdr sh0 = {};
	uint64_t shnum, phnum;
	int err;

	err = elf_file__read(ef, 0, &ef->ehdr, sizeof(ef->ehdr));
	if (err)
		return err;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELF_FILE_HOST_DATA || eh->e_ident[EI_VERSION] != EV_CURRENT)
		return -EINVAL;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -EINVAL;

	shnum = eh->e_shnum;
	if (eh->e_shoff) {
		if (eh->e_shentsize != sizeof(Elf64_Shdr))
			return -EINVAL;
		err = elf_file__read(ef, eh->e_shoff, &sh0, sizeof(sh0));
		if (err)
			return err;
		/* more than SHN_LORESERVE sections: the count is in section 0 */
		if (shnum == 0)
			shnum = sh0.sh_size;
		if (shnum > ELF_FILE_MAX_SECTIONS)
			return -EINVAL;
		err = read_table(ef, eh->e_shoff, shnum, sizeof(Elf64_Shdr), (void **)&ef->shdrs);
		if (err)
			return err;
		ef->shnum = shnum;
	} else if (shnum) {
		return -EINVAL;
	}

	phnum = eh->e_phnum;
	if (phnum == PN_XNUM) {
		if (!ef->shnum)
			return -EINVAL;
		phnum = sh0.sh_info;
	}
	if (phnum) {
		if (!eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr))
			return -EINVAL;
		if (phnum > ELF_FILE_MAX_SEGMENTS)
			return -EINVAL;
		err = read_table(ef, eh->e_phoff, phnum, sizeof(Elf64_Phdr), (void **)&ef->phdrs);
		if (err)
			return err;
		ef->phnum = phnum;
	}
	return 0;
}

/* section names are optional: missing, cut or too many, and no section is found by name */
static int read_names(struct elf_file *ef)
{
	size_t idx = ef->ehdr.e_shstrndx;
	const Elf64_Shdr *sh;
	int err;

	/* SHN_XINDEX: the index is in section 0 */
	if (idx == SHN_XINDEX && ef->shnum)
		idx = ef->shdrs[0].sh_link;
	sh = elf_file__section(ef, idx);
	if (!sh || sh->sh_type != SHT_STRTAB || !sh->sh_size || sh->sh_size > ELF_FILE_MAX_NAMES)
		return 0;
	err = read_table(ef, sh->sh_offset, sh->sh_size, 1, (void **)&ef->names);
	if (err)
		return err == -EINVAL ? 0 : err;
	ef->names_size = sh->sh_size;
	/* the last byte must end the last name, so every name ends */
	if (ef->names[ef->names_size - 1] != '\0') {
		free(ef->names);
		ef->names = NULL;
		ef->names_size = 0;
	}
	return 0;
}

static int read_loads(struct elf_file *ef)
{
	size_t i, n = 0;

	for (i = 0; i < ef->phnum; i++)
		n += ef->phdrs[i].p_type == PT_LOAD;
	if (!n)
		return 0;
	ef->loads = calloc(n, sizeof(*ef->loads));
	if (!ef->loads)
		return -ENOMEM;
	for (i = 0; i < ef->phnum; i++) {
		const Elf64_Phdr *ph = &ef->phdrs[i];

		if (ph->p_type != PT_LOAD)
			continue;
		ef->loads[ef->nr_loads++] = (struct elf_load){
			.offset = ph->p_offset,
			.vaddr = ph->p_vaddr,
			.filesz = ph->p_filesz,
			.memsz = ph->p_memsz,
			.flags = ph->p_flags,
			.in_file = ph->p_filesz && range_ok(ph->p_offset, ph->p_filesz, ef->size) &&
				   ph->p_vaddr <= UINT64_MAX - ph->p_filesz,
		};
	}
	return 0;
}

static bool note_align(uint64_t *pos, uint64_t align, uint64_t len)
{
	uint64_t aligned = (*pos + align - 1) & ~(align - 1);

	if (aligned < *pos || aligned > len)
		return false;
	*pos = aligned;
	return true;
}

/*
 * Walk the notes for NT_GNU_BUILD_ID.  Name and descriptor start
 * @align-aligned from the notes' start, as libelf reads them; every step
 * moves forward by at least a header, so the walk ends.
 */
size_t elf_notes__build_id(const void *notes, size_t len, size_t align,
			   uint8_t id[ELF_FILE_BUILD_ID_MAX])
{
	const uint8_t *p = notes;
	uint64_t pos = 0;
	Elf64_Nhdr nh;

	if (!notes || (align != 4 && align != 8))
		return 0;
	while (len - pos >= sizeof(nh)) {
		const uint8_t *name, *desc;

		memcpy(&nh, p + pos, sizeof(nh));
		pos += sizeof(nh);
		if (nh.n_namesz > len - pos)
			return 0;
		name = p + pos;
		pos += nh.n_namesz;
		if (!note_align(&pos, align, len) || nh.n_descsz > len - pos)
			return 0;
		desc = p + pos;
		pos += nh.n_descsz;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELF_FILE_BUILD_ID_MAX) {
			memcpy(id, desc, nh.n_descsz);
			return nh.n_descsz;
		}
		/* padding after the last note may be cut off: stop, not fail */
		if (!note_align(&pos, align, len))
			return 0;
	}
	return 0;
}

void elf_build_id__hex(const uint8_t *id, size_t len, char hex[ELF_FILE_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len && i < ELF_FILE_BUILD_ID_MAX; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * i] = '\0';
}

/* notes are optional: ones out of the file or too large are skipped */
static int read_note(struct elf_file *ef, uint64_t off, uint64_t len, uint64_t align)
{
	uint8_t *buf;
	int err;

	if (ef->build_id_len || !len || len > ELF_FILE_MAX_NOTE || !range_ok(off, len, ef->size))
		return 0;
	err = read_table(ef, off, len, 1, (void **)&buf);
	if (err)
		return err;
	ef->build_id_len = elf_notes__build_id(buf, len, align == 8 ? 8 : 4, ef->build_id);
	free(buf);
	return 0;
}

/* the loader's view (PT_NOTE) first, then note sections */
static int read_build_id(struct elf_file *ef)
{
	size_t i;
	int err;

	for (i = 0; i < ef->phnum; i++) {
		const Elf64_Phdr *ph = &ef->phdrs[i];

		if (ph->p_type != PT_NOTE)
			continue;
		err = read_note(ef, ph->p_offset, ph->p_filesz, ph->p_align);
		if (err)
			return err;
	}
	for (i = 1; i < ef->shnum; i++) {
		const Elf64_Shdr *sh = &ef->shdrs[i];

		if (sh->sh_type != SHT_NOTE)
			continue;
		err = read_note(ef, sh->sh_offset, sh->sh_size, sh->sh_addralign);
		if (err)
			return err;
	}
	return 0;
}

/*
 * .gnu_debuglink: the debug file's name, NUL, padding to 4, its CRC32.  The
 * name is a file name, looked up in a few directories (elf/debug_file.h):
 * one with a '/' or that is "." or ".." is ignored, as is a malformed section.
 */
static int read_debuglink(struct elf_file *ef)
{
	char buf[ELF_FILE_DEBUGLINK_MAX + 1 + 8];
	const Elf64_Shdr *sh;
	size_t len, crc_off;
	int err;

	sh = elf_file__section(ef, elf_file__find_section(ef, ".gnu_debuglink"));
	if (!sh || sh->sh_size < 8 || sh->sh_size > sizeof(buf) ||
	    !range_ok(sh->sh_offset, sh->sh_size, ef->size))
		return 0;
	err = elf_file__read(ef, sh->sh_offset, buf, sh->sh_size);
	if (err)
		return err;
	len = strnlen(buf, sh->sh_size - 4);
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (!len || len > ELF_FILE_DEBUGLINK_MAX || crc_off + 4 > sh->sh_size ||
	    memchr(buf, '/', len) || !strcmp(buf, ".") || !strcmp(buf, ".."))
		return 0;
	memcpy(ef->debuglink, buf, len);
	ef->debuglink[len] = '\0';
	memcpy(&ef->debuglink_crc, buf + crc_off, sizeof(ef->debuglink_crc));
	ef->has_debuglink = true;
	return 0;
}

static struct elf_file *elf_file__open(struct elf_file *ef)
{
	int err;

	err = -EINVAL;
	if (ef->size < sizeof(Elf64_Ehdr))
		goto err_free;
	err = -EFBIG;
	if (ef->size > ELF_FILE_MAX_SIZE)
		goto err_free;
	err = read_headers(ef);
	if (!err)
		err = read_names(ef);
	if (!err)
		err = read_loads(ef);
	if (!err)
		err = read_build_id(ef);
	if (!err)
		err = read_debuglink(ef);
	if (err)
		goto err_free;
	return ef;

err_free:
	elf_file__free(ef);
	errno = -err;
	return NULL;
}

struct elf_file *elf_file__open_fd(int fd)
{
	struct elf_file *ef;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->size = st.st_size;
	ef->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ef->fd < 0) {
		free(ef);
		return NULL;
	}
	return elf_file__open(ef);
}

struct elf_file *elf_file__open_mem(const void *buf, size_t len)
{
	struct elf_file *ef;

	if (!buf) {
		errno = EINVAL;
		return NULL;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->fd = -1;
	ef->mem = buf;
	ef->size = len;
	return elf_file__open(ef);
}

void elf_file__free(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->shdrs);
	free(ef->phdrs);
	free(ef->names);
	free(ef->loads);
	free(ef);
}

const Elf64_Ehdr *elf_file__ehdr(const struct elf_file *ef)
{
	return &ef->ehdr;
}

uint64_t elf_file__size(const struct elf_file *ef)
{
	return ef->size;
}

/* --- sections ---------------------------------------------------------- */

size_t elf_file__nr_sections(const struct elf_file *ef)
{
	return ef->shnum;
}

const Elf64_Shdr *elf_file__section(const struct elf_file *ef, size_t idx)
{
	return idx && idx < ef->shnum ? &ef->shdrs[idx] : NULL;
}

const char *elf_file__section_name(const struct elf_file *ef, size_t idx)
{
	const Elf64_Shdr *sh = elf_file__section(ef, idx);

	if (!sh || !ef->names || sh->sh_name >= ef->names_size)
		return NULL;
	return ef->names + sh->sh_name;
}

size_t elf_file__find_section(const struct elf_file *ef, const char *name)
{
	size_t i;

	for (i = 1; i < ef->shnum; i++) {
		const char *n = elf_file__section_name(ef, i);

		if (n && ef->shdrs[i].sh_type != SHT_NOBITS && !strcmp(n, name))
			return i;
	}
	return 0;
}

size_t elf_file__find_section_type(const struct elf_file *ef, uint32_t type)
{
	size_t i;

	for (i = 1; i < ef->shnum; i++)
		if (ef->shdrs[i].sh_type == type)
			return i;
	return 0;
}

/* where section @idx's stored bytes are, and how large they inflate */
struct sec_layout {
	uint64_t off;  /* of the data (past a compression header) */
	uint64_t len;  /* stored bytes */
	uint64_t size; /* bytes once decompressed */
	bool zlib;
};

static int section_layout(const struct elf_file *ef, size_t idx, struct sec_layout *l)
{
	const Elf64_Shdr *sh = elf_file__section(ef, idx);
	const char *name = elf_file__section_name(ef, idx);
	uint8_t hdr[12];
	int err;

	if (!sh || sh->sh_type == SHT_NOBITS || !range_ok(sh->sh_offset, sh->sh_size, ef->size))
		return -EINVAL;
	*l = (struct sec_layout){.off = sh->sh_offset, .len = sh->sh_size, .size = sh->sh_size};
	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		if (sh->sh_size < sizeof(ch))
			return -EINVAL;
		err = elf_file__read(ef, sh->sh_offset, &ch, sizeof(ch));
		if (err)
			return err;
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return -ENOTSUP;
		l->off += sizeof(ch);
		l->len -= sizeof(ch);
		l->size = ch.ch_size;
		l->zlib = true;
	} else if (name && !strncmp(name, ".zdebug", 7)) {
		/* the GNU format: "ZLIB", then the size in 8 big-endian bytes */
		if (sh->sh_size < sizeof(hdr))
			return -EINVAL;
		err = elf_file__read(ef, sh->sh_offset, hdr, sizeof(hdr));
		if (err)
			return err;
		if (memcmp(hdr, "ZLIB", 4) != 0)
			return -EINVAL;
		l->size = 0;
		for (int i = 4; i < 12; i++)
			l->size = l->size << 8 | hdr[i];
		l->off += sizeof(hdr);
		l->len -= sizeof(hdr);
		l->zlib = true;
	}
	return 0;
}

int elf_file__section_size(const struct elf_file *ef, size_t idx, uint64_t max, uint64_t *size)
{
	struct sec_layout l;
	int err = section_layout(ef, idx, &l);

	if (err)
		return err;
	/* the stored bytes too: a stream of empty blocks inflates to nothing, slowly */
	if (l.size > max || l.len > max)
		return -E2BIG;
	*size = l.size;
	return 0;
}

static int inflate_section(const struct elf_file *ef, const struct sec_layout *l, uint8_t *dst)
{
	uint64_t pos = 0, n;
	z_stream zs = {0};
	uint8_t *win;
	int ret, err = -EINVAL;

	win = malloc(INFLATE_WINDOW);
	if (!win)
		return -ENOMEM;
	if (inflateInit(&zs) != Z_OK) {
		free(win);
		return -ENOMEM;
	}
	for (;;) {
		uint64_t out_left = l->size - zs.total_out;

		if (!zs.avail_in) {
			n = l->len - pos < INFLATE_WINDOW ? l->len - pos : INFLATE_WINDOW;
			if (!n)
				break; /* the stored bytes end before the stream does */
			ret = elf_file__read(ef, l->off + pos, win, n);
			if (ret) {
				err = ret;
				break;
			}
			pos += n;
			zs.next_in = win;
			zs.avail_in = (uInt)n;
		}
		/* what is left of @dst, in pieces zlib's uInt can count */
		zs.next_out = dst + zs.total_out;
		zs.avail_out = (uInt)(out_left > UINT32_MAX ? UINT32_MAX : out_left);
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			err = zs.total_out == l->size ? 0 : -EINVAL;
			break;
		}
		if (ret == Z_BUF_ERROR && zs.avail_in)
			break; /* @dst is full and the stream goes on: longer than claimed */
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			break;
	}
	inflateEnd(&zs);
	free(win);
	return err;
}

int elf_file__section_read(const struct elf_file *ef, size_t idx, void *dst, uint64_t size)
{
	struct sec_layout l;
	int err = section_layout(ef, idx, &l);

	if (err)
		return err;
	if (l.size != size)
		return -EINVAL;
	if (!l.zlib)
		return elf_file__read(ef, l.off, dst, size);
	return inflate_section(ef, &l, dst);
}

int elf_file__section_copy(const struct elf_file *ef, size_t idx, uint64_t max, void **out,
			   size_t *len)
{
	uint64_t size;
	void *buf;
	int err;

	err = elf_file__section_size(ef, idx, max, &size);
	if (err)
		return err;
	if (size > SIZE_MAX - 1)
		return -E2BIG;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	err = elf_file__section_read(ef, idx, buf, size);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = size;
	return 0;
}

/* --- segments ---------------------------------------------------------- */

size_t elf_file__nr_segments(const struct elf_file *ef)
{
	return ef->phnum;
}

const Elf64_Phdr *elf_file__segment(const struct elf_file *ef, size_t idx)
{
	return idx < ef->phnum ? &ef->phdrs[idx] : NULL;
}

const struct elf_load *elf_file__loads(const struct elf_file *ef, size_t *nr)
{
	*nr = ef->nr_loads;
	return ef->loads;
}

bool elf_loads__base(const struct elf_load *loads, size_t nr, uint64_t *base)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!i || loads[i].vaddr < *base)
			*base = loads[i].vaddr;
	return nr > 0;
}

int elf_loads__offset_to_vaddr(const struct elf_load *loads, size_t nr, uint64_t off,
			       uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct elf_load *l = &loads[i];

		if (l->in_file && off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = l->vaddr + (off - l->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int elf_loads__vaddr_to_offset(const struct elf_load *loads, size_t nr, uint64_t vaddr,
			       uint64_t len, uint64_t *off)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct elf_load *l = &loads[i];

		if (l->in_file && vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz &&
		    l->filesz - (vaddr - l->vaddr) >= len) {
			*off = l->offset + (vaddr - l->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_load *elf_loads__for_mapping(const struct elf_load *loads, size_t nr,
					      uint64_t pgoff)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct elf_load *l = &loads[i];

		if ((l->offset & ~4095ull) <= pgoff && l->offset <= UINT64_MAX - l->filesz &&
		    pgoff < l->offset + l->filesz)
			return l;
	}
	return NULL;
}

/* --- notes, build id, debug link ------------------------------------- */

const uint8_t *elf_file__build_id(const struct elf_file *ef, size_t *len)
{
	*len = ef->build_id_len;
	return ef->build_id_len ? ef->build_id : NULL;
}

const char *elf_file__debuglink(const struct elf_file *ef, uint32_t *crc)
{
	if (!ef->has_debuglink)
		return NULL;
	if (crc)
		*crc = ef->debuglink_crc;
	return ef->debuglink;
}

/* --- symbol tables ------------------------------------------------------ */

int elf_file__symtab(const struct elf_file *ef, uint32_t type, struct elf_symtab *st)
{
	const Elf64_Shdr *sh, *str;
	char last;
	int err;

	memset(st, 0, sizeof(*st));
	sh = elf_file__section(ef, elf_file__find_section_type(ef, type));
	if (!sh)
		return -ENOENT;
	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_size % sizeof(Elf64_Sym) != 0 ||
	    !range_ok(sh->sh_offset, sh->sh_size, ef->size))
		return -EINVAL;
	str = elf_file__section(ef, sh->sh_link);
	if (!str || str->sh_type != SHT_STRTAB || !str->sh_size ||
	    !range_ok(str->sh_offset, str->sh_size, ef->size))
		return -EINVAL;
	err = elf_file__read(ef, str->sh_offset + str->sh_size - 1, &last, 1);
	if (err)
		return err;
	if (last != '\0')
		return -EINVAL;
	st->ef = ef;
	st->type = type;
	st->nr = sh->sh_size / sizeof(Elf64_Sym);
	st->off = sh->sh_offset;
	st->str_off = str->sh_offset;
	st->str_size = str->sh_size;
	return 0;
}

int elf_symtab__get(struct elf_symtab *st, size_t idx, Elf64_Sym *sym)
{
	size_t n;
	int err;

	if (idx >= st->nr)
		return -EINVAL;
	if (idx < st->win_first || idx - st->win_first >= st->win_nr) {
		if (!st->win) {
			st->win = malloc(SYMTAB_WINDOW * sizeof(*st->win));
			if (!st->win)
				return -ENOMEM;
		}
		n = st->nr - idx < SYMTAB_WINDOW ? st->nr - idx : SYMTAB_WINDOW;
		st->win_nr = 0;
		err = elf_file__read(st->ef, st->off + idx * sizeof(Elf64_Sym), st->win,
				     n * sizeof(Elf64_Sym));
		if (err)
			return err;
		st->win_first = idx;
		st->win_nr = n;
	}
	*sym = st->win[idx - st->win_first];
	return 0;
}

int elf_symtab__name(struct elf_symtab *st, uint32_t name, char *buf, size_t len, size_t *name_len)
{
	bool in_window;
	uint64_t avail;
	const char *p;
	size_t n;
	int err;

	if (name >= st->str_size || !len || len > NAME_MAX_LEN)
		return -EINVAL;
	/* in the window, with room for the longest name wanted or up to the table's end */
	in_window = name >= st->strs_off && name - st->strs_off < st->strs_len;
	if (!in_window || (st->strs_off + st->strs_len - name < len &&
			   st->strs_off + st->strs_len < st->str_size)) {
		if (!st->strs) {
			st->strs = malloc(STRTAB_WINDOW);
			if (!st->strs)
				return -ENOMEM;
		}
		n = st->str_size - name < STRTAB_WINDOW ? st->str_size - name : STRTAB_WINDOW;
		st->strs_len = 0;
		err = elf_file__read(st->ef, st->str_off + name, st->strs, n);
		if (err)
			return err;
		st->strs_off = name;
		st->strs_len = n;
	}
	p = st->strs + (name - st->strs_off);
	avail = st->strs_off + st->strs_len - name;
	/* the table ends with a NUL: a name running to the window's end is cut */
	n = strnlen(p, avail < len - 1 ? avail : len - 1);
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (name_len)
		*name_len = n;
	return 0;
}

int elf_symtab__load_strings(struct elf_symtab *st, uint64_t max)
{
	char *strs;
	int err;

	if (st->str_size > max)
		return -E2BIG;
	strs = malloc(st->str_size);
	if (!strs)
		return -ENOMEM;
	err = elf_file__read(st->ef, st->str_off, strs, st->str_size);
	if (err) {
		free(strs);
		return err;
	}
	free(st->strs);
	st->strs = strs;
	st->strs_off = 0;
	st->strs_len = st->str_size;
	return 0;
}

void elf_symtab__release(struct elf_symtab *st)
{
	free(st->win);
	free(st->strs);
	memset(st, 0, sizeof(*st));
}
