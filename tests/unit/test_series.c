// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * series: a process's series in a profile store, by the rule series.h
 * states, and its name in Pyroscope's syntax, which must parse back to what
 * was meant whatever the process called itself.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "export/series.h"

static void name_of(const struct process_state *ps, const char *node, char *buf, size_t len,
		    enum series_source *src)
{
	struct series s;

	series__of(ps, node, &s);
	assert_true(series__name(&s, buf, len) > 0);
	*src = s.source;
}

static void series__rule__kubernetes_then_container_then_comm(void **state)
{
	struct process_state ps;
	enum series_source src;
	char name[SERIES_NAME_MAX];

	memset(&ps, 0, sizeof(ps));
	snprintf(ps.comm, sizeof(ps.comm), "nginx");
	name_of(&ps, "node-1", name, sizeof(name), &src);
	assert_string_equal(name, "nginx{node=node-1}");
	assert_int_equal(src, SERIES_FROM_COMM);

	snprintf(ps.container_id, sizeof(ps.container_id), "%s",
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	name_of(&ps, "node-1", name, sizeof(name), &src);
	assert_string_equal(name, "0123456789ab{node=node-1}");
	assert_int_equal(src, SERIES_FROM_CONTAINER);

	snprintf(ps.kube.pod, sizeof(ps.kube.pod), "web-7c9f");
	snprintf(ps.kube.ns, sizeof(ps.kube.ns), "shop");
	snprintf(ps.kube.container, sizeof(ps.kube.container), "web");
	name_of(&ps, "node-1", name, sizeof(name), &src);
	assert_string_equal(name,
			    "shop/web{pod=web-7c9f,namespace=shop,container=web,node=node-1}");
	assert_int_equal(src, SERIES_FROM_KUBERNETES);

	name_of(NULL, NULL, name, sizeof(name), &src);
	assert_string_equal(name, "unknown{}");
	assert_int_equal(src, SERIES_FROM_NOTHING);
}

static void series__hostile_names__cannot_break_the_syntax(void **state)
{
	struct process_state ps;
	enum series_source src;
	char name[SERIES_NAME_MAX];

	memset(&ps, 0, sizeof(ps));
	/* prctl() lets a process call itself anything */
	snprintf(ps.comm, sizeof(ps.comm), "a{b=c},d\xff");
	snprintf(ps.kube.pod, sizeof(ps.kube.pod), "p,x=1}");
	snprintf(ps.kube.ns, sizeof(ps.kube.ns), "n s");
	snprintf(ps.kube.container, sizeof(ps.kube.container), "c\"");
	name_of(&ps, "no}de", name, sizeof(name), &src);
	assert_string_equal(name, "n_s/c_{pod=p_x=1_,namespace=n_s,container=c_,node=no_de}");
	memset(&ps.kube, 0, sizeof(ps.kube));
	name_of(&ps, NULL, name, sizeof(name), &src);
	assert_string_equal(name, "a_b_c__d_{}");
}

static void series__name__too_small__refused(void **state)
{
	struct series s;
	char small[8];

	series__of(NULL, "a-long-node-name", &s);
	assert_int_equal(series__name(&s, small, sizeof(small)), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(series__rule__kubernetes_then_container_then_comm),
		cmocka_unit_test(series__hostile_names__cannot_break_the_syntax),
		cmocka_unit_test(series__name__too_small__refused),
	};

	return cmocka_run_group_tests_name("series", tests, NULL, NULL);
}
