// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <bpf/bpf.h>
#include "collector/privileges.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40 /* Linux 5.9 */
#endif

/* what the rest of the run needs: see privileges.h */
static const cap_value_t runtime_caps[] = {
	CAP_SYS_PTRACE,
	CAP_DAC_READ_SEARCH,
	CAP_CHECKPOINT_RESTORE,
};

static bool has(cap_t caps, cap_value_t c, cap_flag_t set)
{
	cap_flag_value_t v = CAP_CLEAR;

	return cap_get_flag(caps, c, set, &v) == 0 && v == CAP_SET;
}

static bool effective(cap_value_t c)
{
	cap_t caps = cap_get_proc();
	bool ret = caps && has(caps, c, CAP_EFFECTIVE);

	cap_free(caps);
	return ret;
}

int privileges__check(bool need_kernel, struct privileges_start *out)
{
	bool bpf = effective(CAP_BPF), perfmon = effective(CAP_PERFMON);

	out->kallsyms = effective(CAP_SYSLOG);
	out->ptrace = effective(CAP_SYS_PTRACE);
	out->setpcap = effective(CAP_SETPCAP);
	if (!effective(CAP_SYS_ADMIN) && !(bpf && perfmon)) {
		fprintf(stderr,
			"collector: missing capability %s: run as root (sudo) or grant "
			"CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)\n",
			!bpf && !perfmon ? "CAP_BPF and CAP_PERFMON"
			: !bpf		 ? "CAP_BPF"
					 : "CAP_PERFMON");
		return -EPERM;
	}
	/* not fatal: one's own processes stay readable */
	if (!out->ptrace)
		fprintf(stderr, "ctxprof: missing CAP_SYS_PTRACE: the mappings and files of other "
				"users' processes cannot be read, so their frames stay unnamed and "
				"their stacks unwound by frame pointers\n");
	if (need_kernel && !out->kallsyms)
		fprintf(stderr, "ctxprof: missing CAP_SYSLOG: /proc/kallsyms shows no addresses, "
				"so kernel frames stay unnamed\n");
	return 0;
}

/* the process's threads, from /proc/self/task; -errno when unreadable */
static int nr_threads(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * Whether a bpf() call on a map we hold needs CAP_BPF: try one with CAP_BPF
 * and CAP_SYS_ADMIN out of the effective set (still permitted, so they can
 * come back).  Linux 6.5 moved the "unprivileged BPF disabled" check from
 * every command to map and program creation.
 */
static int probe_bpf_need(cap_t cur, int map_fd, bool *need)
{
	const cap_value_t off[] = {CAP_BPF, CAP_SYS_ADMIN};
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	cap_t probe = cap_dup(cur);
	int err;

	if (!probe)
		return -errno;
	err = cap_set_flag(probe, CAP_EFFECTIVE, 2, off, CAP_CLEAR) ? -errno : 0;
	if (!err && cap_set_proc(probe))
		err = -errno;
	if (!err) {
		*need = bpf_obj_get_info_by_fd(map_fd, &info, &len) && errno == EPERM;
		if (cap_set_proc(cur))
			err = -errno;
	}
	cap_free(probe);
	return err;
}

static void add_name(char *buf, size_t len, cap_value_t c)
{
	char *name = cap_to_name(c);
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? "," : "", name ? name : "?");
	cap_free(name);
}

int privileges__drop(int probe_map_fd, struct privileges_kept *kept, char *err, size_t err_len)
{
	cap_value_t keep[sizeof(runtime_caps) / sizeof(runtime_caps[0]) + 1];
	cap_value_t c, max = cap_max_bits();
	cap_t cur, next = NULL;
	int n = 0, ret = 0;
	size_t i, k;
	bool need_bpf = false;

	memset(kept, 0, sizeof(*kept));
	ret = nr_threads();
	if (ret != 1) {
		snprintf(err, err_len, "cannot drop capabilities: %s",
			 ret < 0 ? strerror(-ret) : "other threads already run");
		return ret < 0 ? ret : -EBUSY;
	}
	cur = cap_get_proc();
	if (!cur) {
		ret = -errno;
		snprintf(err, err_len, "cannot read capabilities: %s", strerror(errno));
		return ret;
	}
	if (probe_map_fd >= 0 && has(cur, CAP_BPF, CAP_PERMITTED)) {
		ret = probe_bpf_need(cur, probe_map_fd, &need_bpf);
		if (ret) {
			snprintf(err, err_len, "cannot probe bpf() without CAP_BPF: %s",
				 strerror(-ret));
			goto out;
		}
	}
	for (i = 0; i < sizeof(runtime_caps) / sizeof(runtime_caps[0]); i++)
		if (runtime_caps[i] < max && has(cur, runtime_caps[i], CAP_PERMITTED))
			keep[n++] = runtime_caps[i];
	if (need_bpf)
		keep[n++] = CAP_BPF;

	/* the bounding set first: dropping from it needs CAP_SETPCAP, which goes next */
	if (has(cur, CAP_SETPCAP, CAP_EFFECTIVE)) {
		for (c = 0; c < max; c++) {
			for (k = 0; k < (size_t)n && keep[k] != c; k++)
				;
			if (k == (size_t)n && cap_get_bound(c) == 1 && cap_drop_bound(c)) {
				ret = -errno;
				snprintf(err, err_len,
					 "cannot drop capability %d from the bounding set: %s",
					 (int)c, strerror(errno));
				goto out;
			}
		}
		kept->bounding_dropped = true;
	}
	/* the ambient set may only hold what stays permitted and inheritable: empty it */
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient()) {
		ret = -errno;
		snprintf(err, err_len, "cannot empty the ambient set: %s", strerror(errno));
		goto out;
	}
	next = cap_init();
	if (!next ||
	    (n && (cap_set_flag(next, CAP_PERMITTED, n, keep, CAP_SET) ||
		   cap_set_flag(next, CAP_EFFECTIVE, n, keep, CAP_SET))) ||
	    cap_set_proc(next)) {
		ret = -errno;
		snprintf(err, err_len, "cannot drop capabilities: %s", strerror(errno));
		goto out;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		ret = -errno;
		snprintf(err, err_len, "cannot set no_new_privs: %s", strerror(errno));
		goto out;
	}
	for (k = 0; k < (size_t)n; k++)
		add_name(kept->names, sizeof(kept->names), keep[k]);
	if (!n)
		snprintf(kept->names, sizeof(kept->names), "none");
	kept->bpf = need_bpf;
out:
	cap_free(next);
	cap_free(cur);
	return ret;
}
