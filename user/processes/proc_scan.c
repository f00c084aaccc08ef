// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc_scan - the /proc scan at start.  Contracts are in proc_scan.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "processes/proc_scan.h"

/* read all of @name under @dirfd into @buf (no NUL added); -EFBIG past @cap */
static int read_at(int dirfd, const char *name, char *buf, size_t cap, size_t *len)
{
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (got == cap) {
			/* one byte more says whether the file went on */
			char extra;

			n = read(fd, &extra, 1);
			if (n > 0)
				err = -EFBIG;
			else if (n < 0)
				err = -errno;
			break;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	*len = got;
	return err;
}

/* a /proc directory name that is a pid: plain decimal, no sign, fits */
static bool parse_pid_name(const char *s, uint32_t *pid)
{
	uint64_t v = 0;

	if (*s < '1' || *s > '9')
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*pid = v;
	return true;
}

/* one decimal field of [*p, end) up to the next ' ' or '\n'; moves *p past it */
static int parse_u64(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (max - (*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	if (s < end && *s != ' ' && *s != '\n')
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

/* skip one field we do not use; it must exist (signed decimal) */
static int skip_field(const char **p, const char *end)
{
	const char *s = *p;

	if (s < end && *s == '-')
		s++;
	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9')
		s++;
	if (s < end && *s != ' ' && *s != '\n')
		return -EINVAL;
	*p = s;
	return 0;
}

int proc_scan__parse_stat(const char *buf, size_t len, struct proc_stat *out)
{
	const char *end = buf + len, *p = buf, *open, *close;
	uint64_t v;
	size_t n;
	int field;

	memset(out, 0, sizeof(*out));
	if (parse_u64(&p, end, UINT32_MAX, &v) || v == 0)
		return -EINVAL;
	out->pid = v;
	if (end - p < 2 || p[0] != ' ' || p[1] != '(')
		return -EINVAL;
	open = p + 1;
	/* the name may hold ')': the fields after it never do */
	close = memrchr(open + 1, ')', end - open - 1);
	if (!close || close - open - 1 > PROC_SCAN_MAX_NAME ||
	    memchr(open + 1, '\0', close - open - 1))
		return -EINVAL;
	/* a workqueue worker's name comes with its queue's: keep the comm */
	n = close - open - 1;
	if (n >= THREAD_REGISTRY_COMM_LEN)
		n = THREAD_REGISTRY_COMM_LEN - 1;
	memcpy(out->comm, open + 1, n);

	p = close + 1;
	for (field = 3; field <= 22; field++) {
		if (p == end || *p != ' ')
			return -EINVAL;
		p++;
		switch (field) {
		case 3:
			if (p == end || *p == ' ' || *p == '\n' || (p + 1 < end && p[1] != ' '))
				return -EINVAL;
			out->state = *p++;
			break;
		case 4:
			if (parse_u64(&p, end, UINT32_MAX, &v))
				return -EINVAL;
			out->ppid = v;
			break;
		case 22:
			if (parse_u64(&p, end, UINT64_MAX, &out->starttime))
				return -EINVAL;
			break;
		default:
			if (skip_field(&p, end))
				return -EINVAL;
		}
	}
	return 0;
}

int proc_scan__parse_cgroup(const char *buf, size_t len, char *path, size_t path_len)
{
	const char *end = buf + len, *line, *eol, *c1, *c2, *best = NULL, *best_end = NULL;
	char id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1], tmp[THREAD_REGISTRY_MAX_PATH];
	int best_rank = 0, rank;
	size_t n;

	for (line = buf; line < end; line = eol + 1) {
		eol = memchr(line, '\n', end - line);
		if (!eol)
			eol = end;
		/* hierarchy-id ':' controllers ':' path; the path may hold ':' */
		c1 = memchr(line, ':', eol - line);
		c2 = c1 ? memchr(c1 + 1, ':', eol - c1 - 1) : NULL;
		if (!c1 || c1 == line || !c2 || c2 + 1 == eol || c2[1] != '/' ||
		    memchr(line, '\0', eol - line))
			continue;
		n = eol - c2 - 1;
		rank = 1;
		if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
			rank = 3; /* the v2 line */
		} else if (n < sizeof(tmp)) {
			memcpy(tmp, c2 + 1, n);
			tmp[n] = '\0';
			if (thread_registry_parse_container_id(tmp, id))
				rank = 2;
		}
		if (rank > best_rank) {
			best_rank = rank;
			best = c2 + 1;
			best_end = eol;
		}
	}
	if (!best)
		return -EINVAL;
	n = best_end - best;
	if (n >= path_len)
		return -ENAMETOOLONG;
	memcpy(path, best, n);
	path[n] = '\0';
	return 0;
}

/* stat, exe and (if @cgroup) cgroup of the process whose /proc directory is @pfd */
static int read_process_at(int pfd, struct proc_process *out, char *buf, size_t cap, bool cgroup)
{
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int err;

	err = read_at(pfd, "stat", buf, PROC_SCAN_MAX_STAT, &len);
	if (err)
		return err == -ENOENT ? -ESRCH : err == -EFBIG ? -EINVAL : err;
	err = proc_scan__parse_stat(buf, len, &out->stat);
	if (err)
		return err;

	/* kernel threads have no exe; a process may be gone meanwhile */
	n = readlinkat(pfd, "exe", out->exe, sizeof(out->exe) - 1);
	out->exe[n > 0 ? n : 0] = '\0';
	out->exe_dev = out->exe_ino = 0;
	if (n > 0 && !fstatat(pfd, "exe", &st, 0)) {
		out->exe_dev = st.st_dev;
		out->exe_ino = st.st_ino;
	}

	out->cgroup[0] = '\0';
	if (cgroup && !read_at(pfd, "cgroup", buf, cap, &len))
		proc_scan__parse_cgroup(buf, len, out->cgroup, sizeof(out->cgroup));
	return 0;
}

int proc_scan__read_process(const char *proc_root, uint32_t pid, struct proc_process *out,
			    bool cgroup)
{
	char name[64], *buf;
	int pfd, err;

	snprintf(name, sizeof(name), "%s/%u", proc_root ? proc_root : "/proc", pid);
	pfd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(PROC_SCAN_MAX_CGROUP);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	err = read_process_at(pfd, out, buf, PROC_SCAN_MAX_CGROUP, cgroup);
	if (!err && out->stat.pid != pid)
		err = -EINVAL;
	free(buf);
out:
	close(pfd);
	return err;
}

static void count_insert(struct proc_scan_stats *st, int err)
{
	switch (err) {
	case 0:
		st->threads++;
		break;
	case -EEXIST:
		st->known++;
		break;
	case -ESTALE:
		st->stale++;
		break;
	default:
		st->refused++;
	}
}

/* the threads of the process in @pfd, with the writer lock held */
static void scan_tasks(struct thread_registry *r, int pfd, const struct process_desc *pd, char *buf,
		       struct proc_scan_stats *st)
{
	struct thread_desc td;
	struct proc_stat ts;
	struct dirent *de;
	char name[32];
	uint32_t tid;
	size_t len = 0;
	DIR *tasks;
	int tfd, err;

	tfd = openat(pfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0 || !(tasks = fdopendir(tfd))) {
		if (tfd >= 0)
			close(tfd);
		st->vanished++;
		return;
	}
	while ((de = readdir(tasks))) {
		if (!parse_pid_name(de->d_name, &tid))
			continue;
		snprintf(name, sizeof(name), "%u/stat", tid);
		err = read_at(dirfd(tasks), name, buf, PROC_SCAN_MAX_STAT, &len);
		if (err == -ENOENT || err == -ESRCH) {
			st->vanished++;
			continue;
		}
		if (err || proc_scan__parse_stat(buf, len, &ts) || ts.pid != tid) {
			st->malformed++;
			continue;
		}
		/* dead, waiting to be reaped: its exit event may be gone already */
		if (ts.state == 'Z' || ts.state == 'X') {
			st->zombies++;
			continue;
		}
		td = (struct thread_desc){
			.tid = tid,
			.pid = pd->pid,
			.ppid = ts.ppid,
			.start = ts.starttime,
		};
		memcpy(td.comm, ts.comm, sizeof(td.comm));
		count_insert(st,
			     thread_registry__insert_locked(r, &td, pd, THREAD_REGISTRY_F_SCAN));
	}
	closedir(tasks);
}

/* one /proc/PID: read it and insert its threads, as one writer section */
static void scan_process(struct thread_registry *r, int rootfd, const char *name, uint32_t pid,
			 struct proc_process *proc, char *buf, struct proc_scan_stats *st)
{
	struct process_desc pd;
	int pfd, err;

	pfd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		st->vanished++;
		return;
	}
	/* no event can be applied between what we read and what we insert */
	thread_registry__lock_writer(r);
	err = read_process_at(pfd, proc, buf, PROC_SCAN_MAX_CGROUP, true);
	if (err == -ESRCH || err == -ENOENT) {
		st->vanished++;
		goto out;
	}
	if (err || proc->stat.pid != pid) {
		st->malformed++;
		goto out;
	}
	pd = (struct process_desc){
		.pid = pid,
		.ppid = proc->stat.ppid,
		.start = proc->stat.starttime,
		.exe = proc->exe,
		.cgroup = proc->cgroup,
	};
	memcpy(pd.comm, proc->stat.comm, sizeof(pd.comm));
	scan_tasks(r, pfd, &pd, buf, st);
	st->processes++;
out:
	thread_registry__unlock_writer(r);
	close(pfd);
}

int proc_scan__run(struct thread_registry *r, const struct proc_scan_opts *opts,
		   struct proc_scan_stats *stats)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : "/proc";
	unsigned int every = opts && opts->tick_every ? opts->tick_every : 64, n = 0;
	struct proc_scan_stats st = {0};
	struct proc_process *proc;
	struct dirent *de;
	char *buf = NULL;
	uint32_t pid;
	DIR *dir;
	int err = 0;

	dir = opendir(root);
	if (!dir)
		return -errno;
	proc = malloc(sizeof(*proc));
	buf = malloc(PROC_SCAN_MAX_CGROUP);
	if (!proc || !buf) {
		err = -ENOMEM;
		goto out;
	}
	while ((de = readdir(dir))) {
		if (!parse_pid_name(de->d_name, &pid))
			continue;
		if (opts && opts->only_pid && pid != opts->only_pid)
			continue;
		scan_process(r, dirfd(dir), de->d_name, pid, proc, buf, &st);
		if (opts && opts->tick && ++n % every == 0)
			opts->tick(opts->tick_ctx);
	}
	/* children listed before their parents get their place now */
	st.relinked = thread_registry__relink(r);
out:
	free(buf);
	free(proc);
	closedir(dir);
	if (stats)
		*stats = st;
	return err;
}
