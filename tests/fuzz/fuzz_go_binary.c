// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the goroutine labels' readers of hostile bytes:
 * user/appctx/go_binary.c (a target's executable: its Go build info, TLS
 * segment and runtime.tlsg) and go_labels__from_sample() (a sample's
 * labels, as a ring holds them).  Every input goes down both paths: as an
 * ELF image, then as a sample record.  Results must stay inside what was
 * given; ASan/UBSan catch the rest.
 *
 * Seeds in tests/fuzz/corpus/go_binary/: tests/hostile_elf.py go (build
 * info of go1.19.8 and of a devel version, runtime.tlsg), and a sample
 * record with two labels.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "appctx/go_binary.h"
#include "appctx/go_labels.h"
#include "elf/elf_file.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

static void as_elf(const uint8_t *data, size_t size)
{
	struct elf_file *ef = elf_file__open_mem(data, size);
	struct go_binary b;
	const char *why = NULL;
	char v[8];
	int32_t tls;
	int err;

	if (!ef)
		return;
	if (go_binary__inspect(ef, &b, &why) == GO_BINARY_OK)
		check(go_binary__layout(b.minor) && b.ref.tls_g == b.tls_g);
	else
		check(why != NULL);
	check(memchr(b.version, '\0', sizeof(b.version)) != NULL);
	check(go_binary__minor(b.version) == b.minor);
	err = go_binary__version(ef, v, sizeof(v));
	check(memchr(v, '\0', sizeof(v)) != NULL);
	check(!err || !v[0]);
	go_binary__tls_g(ef, &tls, &why);
	elf_file__free(ef);
}

static void as_sample(const uint8_t *data, size_t size)
{
	const struct go_labels_record *r = NULL;
	struct go_label_str out[GO_LABELS_MAX];
	struct go_label_buf buf;
	struct sample_record *rec;
	size_t i, n;

	if (size < sizeof(*rec))
		return;
	/* the ring hands records 8-byte aligned */
	rec = malloc(size);
	if (!rec)
		return;
	memcpy(rec, data, size);
	if (go_labels__from_sample(rec, size, &r) == 1) {
		check((const uint8_t *)r >= (const uint8_t *)rec &&
		      (const uint8_t *)(r + 1) + r->size <= (const uint8_t *)rec + size);
		n = go_labels__labels(NULL, r, out, &buf);
		check(n <= r->nr);
		for (i = 0; i < n; i++)
			check(strlen(out[i].key) <= GO_LABEL_KEY_MAX &&
			      strlen(out[i].value) <= GO_LABEL_VALUE_MAX);
	}
	free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_elf(data, size);
	as_sample(data, size);
	return 0;
}
