// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the kubelet log link name parser and the link target
 * check, on hostile names.  Beyond "no crash", it checks what the labels rely
 * on: accepted names are non-empty DNS names (lowercase, digits, '-', and
 * '.' in a pod name) that rebuild the input exactly, with a 64-hex id.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "processes/pod_meta.h"

static void check_name(const char *s, int dots)
{
	if (!*s)
		abort();
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      (dots && *s == '.')))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[POD_META_ID_LEN + 1], again[512], *text;
	struct pod_meta m;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (pod_meta_parse_link(text, &m, id)) {
		check_name(m.pod, 1);
		check_name(m.ns, 0);
		check_name(m.container, 0);
		if (strlen(id) != POD_META_ID_LEN)
			abort();
		snprintf(again, sizeof(again), "%s_%s_%s-%s.log", m.pod, m.ns, m.container, id);
		if (strcmp(again, text))
			abort();
	}
	/* the target check against fixed names: no read past the string */
	m = (struct pod_meta){.pod = "web", .ns = "shop", .container = "nginx"};
	pod_meta_target_agrees(text, &m);
	free(text);
	return 0;
}
