// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "processes/pod_meta.h"
#include "fixtures.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_C "00000000000000000000000000000000000000000000000000000000000000c0"

static void pod_meta_parse_link__kubelet_name__split(void **state)
{
	struct pod_meta m;
	char id[POD_META_ID_LEN + 1];

	assert_true(pod_meta_parse_link("web-7d4b9c-x2x_shop_nginx-" ID_A ".log", &m, id));
	assert_string_equal(m.pod, "web-7d4b9c-x2x");
	assert_string_equal(m.ns, "shop");
	assert_string_equal(m.container, "nginx");
	assert_string_equal(id, ID_A);
	/* a pod name may hold dots */
	assert_true(pod_meta_parse_link("etcd-n1.example_kube-system_etcd-" ID_B ".log", &m, id));
	assert_string_equal(m.pod, "etcd-n1.example");
	assert_string_equal(m.ns, "kube-system");
	assert_string_equal(m.container, "etcd");
}

static void pod_meta_parse_link__malformed__refused(void **state)
{
	static const char *const bad[] = {
		"",
		"web_shop_nginx-" ID_A,		/* no .log */
		"web_shop_nginx-" ID_A ".txt",	/* not .log */
		"web_shop_nginx_" ID_A ".log",	/* no '-' before the id */
		"web_shop_nginx-0123.log",	/* short id */
		"web_shop_nginx-" ID_A "0.log", /* long id */
		"web_shop_nginx-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
		".log",				 /* upper-case hex */
		"web_shop-" ID_A ".log",	 /* two parts */
		"web_shop_a_b-" ID_A ".log",	 /* four parts */
		"_shop_nginx-" ID_A ".log",	 /* empty pod */
		"web__nginx-" ID_A ".log",	 /* empty namespace */
		"web_shop_-" ID_A ".log",	 /* empty container */
		"Web_shop_nginx-" ID_A ".log",	 /* upper case */
		"web_sh.op_nginx-" ID_A ".log",	 /* dot in a namespace */
		"web_shop_ng\"inx-" ID_A ".log", /* quote */
		"../x_shop_nginx-" ID_A ".log",	 /* path */
		"web_shop_a123456789012345678901234567890123456789012345678901234567890123-" ID_A
		".log", /* 64-byte container */
	};
	struct pod_meta m;
	char id[POD_META_ID_LEN + 1];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (pod_meta_parse_link(bad[i], &m, id))
			fail_msg("accepted '%s'", bad[i]);
	}
}

static void pod_meta_target_agrees__kubelet_target__checked(void **state)
{
	struct pod_meta m = {.pod = "web", .ns = "shop", .container = "nginx"};

	assert_true(pod_meta_target_agrees("/var/log/pods/shop_web_1234-uid/nginx/0.log", &m));
	assert_true(pod_meta_target_agrees("../pods/shop_web_1234/nginx/3.log", &m));
	assert_false(pod_meta_target_agrees("/var/log/pods/shop_web_1234/redis/0.log", &m));
	assert_false(pod_meta_target_agrees("/var/log/pods/shop_webx_1234/nginx/0.log", &m));
	assert_false(pod_meta_target_agrees("/var/log/pods/other_web_1234/nginx/0.log", &m));
	assert_false(pod_meta_target_agrees("/var/log/pods/shop_web_/nginx/0.log", &m));
	assert_false(pod_meta_target_agrees("/var/log/other/shop_web_1/nginx/0.log", &m));
	assert_false(pod_meta_target_agrees("/etc/passwd", &m));
	assert_false(pod_meta_target_agrees("nginx", &m));
	assert_false(pod_meta_target_agrees("/nginx/0.log", &m)); /* found by fuzz_pod_meta */
	assert_false(pod_meta_target_agrees("", &m));
}

/* a kubelet-like layout: pods/<ns>_<pod>_<uid>/<container>/0.log and its link */
static void add_container(const char *root, const char *ns, const char *pod, const char *c,
			  const char *id, bool with_pod_dir)
{
	char dir[512], link[512], target[512];

	snprintf(dir, sizeof(dir), "%s/pods/%s_%s_uid-%s", root, ns, pod, c);
	mkdir(dir, 0755);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", c);
	if (with_pod_dir)
		assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(target, sizeof(target), "/var/log/pods/%s_%s_uid-%s/%s/0.log", ns, pod, c, c);
	snprintf(link, sizeof(link), "%s/containers/%s_%s_%s-%s.log", root, pod, ns, c, id);
	assert_int_equal(symlink(target, link), 0);
}

static void pod_index__lookup__layout__names_and_misses(void **state)
{
	char *root = fixture_tmpdir("pod_meta");
	char path[512];
	struct pod_index *pi;
	struct pod_meta m;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pods", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/containers", root);
	assert_int_equal(mkdir(path, 0755), 0);
	add_container(root, "shop", "web-1", "nginx", ID_A, true);
	/* a pod gone from the node: its link stays a while, its directory not */
	add_container(root, "shop", "old-1", "nginx", ID_B, false);
	/* a regular file named like a link names nothing */
	snprintf(path, sizeof(path), "%s/containers/fake_shop_x-%s.log", root,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);

	pi = pod_index__new(root);
	assert_non_null(pi);
	assert_true(pod_index__lookup(pi, ID_A, &m));
	assert_string_equal(m.pod, "web-1");
	assert_string_equal(m.ns, "shop");
	assert_string_equal(m.container, "nginx");
	assert_int_equal(pod_index__size(pi), 1);
	assert_false(pod_index__lookup(pi, ID_B, &m));
	assert_false(pod_index__lookup(
		pi, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &m));
	assert_false(pod_index__lookup(pi, "short", &m));
	assert_false(pod_index__lookup(pi, NULL, &m));
	/* a container started since is found after the rescan delay */
	add_container(root, "db", "pg-0", "postgres", ID_C, true);
	assert_false(pod_index__lookup(pi, ID_C, &m)); /* read less than a second ago */
	sleep(1);
	assert_true(pod_index__lookup(pi, ID_C, &m));
	assert_string_equal(m.pod, "pg-0");
	assert_string_equal(m.ns, "db");
	assert_string_equal(m.container, "postgres");
	pod_index__free(pi);
	pod_index__free(NULL);
	fixture_tmpdir_remove(root);
}

static void pod_index__lookup__no_directories__nothing(void **state)
{
	struct pod_index *pi = pod_index__new("/nonexistent/ctxprof");
	struct pod_meta m;

	assert_non_null(pi);
	assert_false(pod_index__lookup(pi, ID_A, &m));
	assert_int_equal(pod_index__size(pi), 0);
	pod_index__free(pi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pod_meta_parse_link__kubelet_name__split),
		cmocka_unit_test(pod_meta_parse_link__malformed__refused),
		cmocka_unit_test(pod_meta_target_agrees__kubelet_target__checked),
		cmocka_unit_test(pod_index__lookup__layout__names_and_misses),
		cmocka_unit_test(pod_index__lookup__no_directories__nothing),
	};

	return cmocka_run_group_tests_name("pod_meta", tests, NULL, NULL);
}
