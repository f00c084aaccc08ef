/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * privileges - what the collector may do, checked before start-up and
 * narrowed after it.
 *
 * Start-up needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to load the BPF
 * programs and open the perf events, CAP_SYSLOG for real addresses in
 * /proc/kallsyms, and CAP_SETPCAP to empty the bounding set afterwards.
 * Once that is done, privileges__drop() keeps only what reading other
 * processes needs for the rest of the run:
 *   CAP_SYS_PTRACE         /proc/PID/maps, /proc/PID/root of processes with
 *                          other credentials (ptrace_may_access)
 *   CAP_DAC_READ_SEARCH    their ELF files and directories, whatever the modes
 *   CAP_CHECKPOINT_RESTORE /proc/PID/map_files: the very file mapped, and a
 *                          libctxprof region (a memfd, which has no path)
 * plus CAP_BPF on kernels where every bpf() call on a map the collector
 * already holds still wants it (before Linux 6.5, with unprivileged BPF
 * disabled), found by trying one.  Effective, permitted and inheritable sets
 * are set to that, the ambient set emptied, the bounding set narrowed to it
 * (with CAP_SETPCAP) and no_new_privs set: an exec can gain nothing back.
 *
 * Capabilities belong to each thread: privileges__drop() refuses to run
 * while the process has more than one, and every thread started after it
 * inherits the narrowed sets.
 */
#ifndef CTXPROF_PRIVILEGES_H
#define CTXPROF_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>

/* what privileges__check() found: each false is a warning, not an error */
struct privileges_start {
	bool kallsyms; /* CAP_SYSLOG: kernel frames get names */
	bool ptrace;   /* CAP_SYS_PTRACE: other users' processes are readable */
	bool setpcap;  /* CAP_SETPCAP: the bounding set can be emptied */
};

/**
 * privileges__check() - whether start-up can load BPF and open perf events.
 * Prints the error (the missing capability named) or the warnings.
 * @need_kernel: kernel frames are wanted (CAP_SYSLOG matters)
 * Return: 0, or -EPERM with the reason printed.
 */
int privileges__check(bool need_kernel, struct privileges_start *out);

struct privileges_kept {
	char names[160];       /* "cap_sys_ptrace,cap_dac_read_search,..." or "none" */
	bool bpf;	       /* CAP_BPF kept: bpf() on held fds wants it here */
	bool bounding_dropped; /* the bounding set is narrowed too */
};

/**
 * privileges__drop() - narrow the capability sets as described above and
 * set no_new_privs.  Call once, from the only thread of the process, after
 * every step that needs a capability.
 * @probe_map_fd: a BPF map the collector holds, to learn whether bpf() on
 *	it needs CAP_BPF (an info query); -1: keep no CAP_BPF
 * Return: 0, or -errno with a one-line reason in @err (-EBUSY: other
 * threads exist).
 */
int privileges__drop(int probe_map_fd, struct privileges_kept *kept, char *err, size_t err_len);

#endif /* CTXPROF_PRIVILEGES_H */
