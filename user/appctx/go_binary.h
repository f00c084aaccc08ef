/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go_binary - what one Go executable tells the reader of goroutine labels
 * (appctx/go_labels.h), learnt from the file alone:
 *  - its Go version, from the build info the Go linker writes at the start
 *    of .go.buildinfo ("\xff Go buildinf:"; stripping keeps it): inline
 *    since Go 1.18, through pointers to runtime.buildVersion before; where
 *    the section header is gone, the first writable segment's first 64 KiB
 *    are searched for it, as Go's debug/buildinfo does;
 *  - the runtime's layout for that version (offsets of g.m, m.curg,
 *    g.labels; the label set a map or a slice), from a table of the
 *    versions verified (go_binary.c says how each was); a version it
 *    lacks is unsupported, never guessed; one whose .gopclntab (when
 *    found by its section name) is of another era's linker is refused;
 *  - where the running goroutine's g lies from the thread pointer
 *    (x86-64): without PT_TLS (the Go linker alone, no cgo) the runtime
 *    sets fsbase itself, 8 bytes past g's slot, so at fsbase - 8; with
 *    PT_TLS (cgo, or an external link) g is runtime.tlsg in the
 *    executable's TLS block, which the C library places first below the
 *    thread pointer (otel_tls__static_offset()): runtime.tlsg's offset
 *    from .symtab, or, stripped, 0 when the runtime's 8 bytes are the
 *    block's only ones; a stripped block with other variables too is
 *    unsupported.
 * Hostile input: the file is a target's; every read is bounded (the
 * elf_file reader's caps, 64 KiB of build info search, 32 bytes of a
 * version).  Pure functions; any thread.
 */
#ifndef CTXPROF_GO_BINARY_H
#define CTXPROF_GO_BINARY_H

#include <stddef.h>
#include <stdint.h>
#include "go_abi.h"

struct elf_file;

/* the longest version string kept: "go1.19.8", "devel go1.23-abcdef01 ..." cut */
#define GO_BINARY_VERSION_MAX 48

enum go_binary_status {
	GO_BINARY_OK = 0,
	GO_BINARY_NOT_GO,      /* no Go build info: not a Go program */
	GO_BINARY_UNSUPPORTED, /* a Go program whose layout or TLS this reader does not know */
	GO_BINARY_UNREADABLE,  /* the file could not be read */
};

/* one Go version's runtime layout */
struct go_runtime_layout {
	unsigned int minor; /* go1.<minor>.x */
	uint16_t g_m;	    /* offsetof(runtime.g, m) */
	uint16_t m_curg;    /* offsetof(runtime.m, curg) */
	uint16_t g_labels;  /* offsetof(runtime.g, labels) */
	uint8_t kind;	    /* enum go_labels_kind: how the label set is held */
	uint16_t g_sched;   /* offsetof(runtime.g, sched) */
	uint8_t gobuf_sp;   /* offsetof(runtime.gobuf, sp) */
	uint8_t gobuf_pc;   /* offsetof(runtime.gobuf, pc) */
	uint8_t gobuf_bp;   /* offsetof(runtime.gobuf, bp) */
	uint16_t m_vdso_sp; /* offsetof(runtime.m, vdsoSP) */
	uint16_t m_vdso_pc; /* offsetof(runtime.m, vdsoPC) */
};

struct go_binary {
	char version[GO_BINARY_VERSION_MAX]; /* as the build info says it; "" when none */
	unsigned int minor;		     /* go1.<minor>; 0 when not a release's */
	int32_t tls_g;			     /* g at fsbase + tls_g */
	/* with GO_BINARY_OK: the sampler's ref (exec_id 0) */
	struct go_labels_ref ref;
};

/**
 * go_binary__inspect() - @ef's version, layout and TLS into @out.
 * @why: a short reason when the status is not GO_BINARY_OK (a static string)
 * Return: enum go_binary_status; @out->version is set whenever the build
 * info was read, whatever the status.
 */
enum go_binary_status go_binary__inspect(const struct elf_file *ef, struct go_binary *out,
					 const char **why);

/**
 * go_binary__version() - the Go version @ef's build info names, into
 * @buf[@len] (NUL-terminated, cut to fit).
 * Return: 0, -ENOENT when @ef has no Go build info, -EINVAL when it is
 * malformed, -errno of a read.
 */
int go_binary__version(const struct elf_file *ef, char *buf, size_t len);

/**
 * go_binary__minor() - N of a release's "go1.N", "go1.N.P" or "go1.NrcK";
 * 0 for anything else ("devel ...", "go2").
 */
unsigned int go_binary__minor(const char *version);

/** go_binary__layout() - the verified layout of go1.@minor; NULL when the table lacks it. */
const struct go_runtime_layout *go_binary__layout(unsigned int minor);

/**
 * go_binary__tls_g() - where @ef's running goroutine lies from fsbase.
 * Return: 0 and *@tls_g set; -ENOTSUP when it cannot be known (stripped,
 * with other TLS than the runtime's; @why says), -EINVAL when the TLS
 * segment is malformed.
 */
int go_binary__tls_g(const struct elf_file *ef, int32_t *tls_g, const char **why);

#endif /* CTXPROF_GO_BINARY_H */
