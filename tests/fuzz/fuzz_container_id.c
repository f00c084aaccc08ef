// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the container id parser and the /proc/PID/cgroup line
 * picker on hostile text.  Beyond "no crash", it checks what callers rely
 * on: an id is 64 lowercase hex digits that stand alone in the input, and a
 * picked path is a whole "/..." path of one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "processes/proc_scan.h"
#include "processes/thread_registry.h"

static int is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void check_id(const char *text)
{
	char id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1];
	const char *at;
	int i;

	if (!thread_registry_parse_container_id(text, id)) {
		if (id[0])
			abort();
		return;
	}
	if (strlen(id) != THREAD_REGISTRY_CONTAINER_ID_LEN)
		abort();
	for (i = 0; i < THREAD_REGISTRY_CONTAINER_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			abort();
	/* the parser's rule: a whole run, no letter or digit on either side */
	for (at = strstr(text, id); at; at = strstr(at + 1, id))
		if ((at == text || !is_alnum(at[-1])) &&
		    !is_alnum(at[THREAD_REGISTRY_CONTAINER_ID_LEN]))
			return;
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[256], *text;

	/* the cgroup picker reads raw bytes: ASan catches a read past them */
	if (!proc_scan__parse_cgroup((const char *)data, size, path, sizeof(path))) {
		if (path[0] != '/' || strchr(path, '\n') || strlen(path) >= size)
			abort();
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_id(text);
	free(text);
	return 0;
}
