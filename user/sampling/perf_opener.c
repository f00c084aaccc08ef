// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perf_opener - the child that opens cpu-clock events for the sampler.  See
 * perf_opener.h.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sampling/perf_opener.h"

#define OPENER_TIMEOUT_MS 1000

struct perf_opener {
	pid_t pid;
	int sock; /* -1 once the child is gone or out of step */
};

/* CAP_PERFMON alone, else CAP_SYS_ADMIN alone (kernels without CAP_PERFMON
 * refuse it), else nothing: perf_event_paranoid may still allow the open */
static void keep_perfmon(void)
{
	cap_value_t keep[] = {CAP_PERFMON, CAP_SYS_ADMIN};
	cap_t caps = cap_init();
	unsigned int i;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	cap_reset_ambient();
	if (!caps)
		_exit(1);
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		cap_clear(caps);
		cap_set_flag(caps, CAP_EFFECTIVE, 1, &keep[i], CAP_SET);
		cap_set_flag(caps, CAP_PERMITTED, 1, &keep[i], CAP_SET);
		if (!cap_set_proc(caps))
			break;
	}
	if (i == sizeof(keep) / sizeof(keep[0])) {
		cap_clear(caps);
		if (cap_set_proc(caps))
			_exit(1);
	}
	cap_free(caps);
}

static void reply(int sock, int32_t err, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != sizeof(err))
		_exit(0);
}

static void __attribute__((noreturn))
serve(int sock, pid_t parent, const struct perf_event_attr *attr)
{
	struct perf_event_attr a;
	int32_t cpu;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent died before the line above */
	if (getppid() != parent)
		_exit(0);
	/* a terminal's Ctrl-C reaches the whole group: the parent ends us */
	signal(SIGINT, SIG_IGN);
	prctl(PR_SET_NAME, "ctxprof-perf");
	/* the parent's BPF objects, rings and files are not ours to hold */
	if (sock > 0)
		close_range(0, sock - 1, 0);
	close_range(sock + 1, ~0u, 0);
	keep_perfmon();
	for (;;) {
		if (recv(sock, &cpu, sizeof(cpu), 0) != sizeof(cpu))
			_exit(0);
		/* the kernel may write into it (size, on E2BIG) */
		a = *attr;
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		reply(sock, fd < 0 ? errno : 0, fd);
		if (fd >= 0)
			close(fd);
	}
}

struct perf_opener *perf_opener__start(const struct perf_event_attr *attr)
{
	struct perf_opener *o = calloc(1, sizeof(*o));
	pid_t parent = getpid();
	int sv[2], err;

	if (!o)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto err_free;
	}
	o->pid = fork();
	if (o->pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		goto err_free;
	}
	if (!o->pid)
		serve(sv[1], parent, attr);
	close(sv[1]);
	o->sock = sv[0];
	return o;

err_free:
	free(o);
	errno = -err;
	return NULL;
}

/* a late or malformed answer would be taken for the next one's: stop asking */
static int broken(struct perf_opener *o, int err)
{
	close(o->sock);
	o->sock = -1;
	return err;
}

int perf_opener__open(struct perf_opener *o, int cpu)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	int32_t req = cpu, err = 0;
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct pollfd p = {.events = POLLIN};
	struct cmsghdr *cm;
	int fd = -1, n;

	if (o->sock < 0)
		return -EPIPE;
	if (send(o->sock, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req))
		return broken(o, -EPIPE);
	p.fd = o->sock;
	do
		n = poll(&p, 1, OPENER_TIMEOUT_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return broken(o, n ? -errno : -ETIMEDOUT);
	if (recvmsg(o->sock, &msg, MSG_CMSG_CLOEXEC) != sizeof(err))
		return broken(o, -EPIPE);
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (err > 0 || fd < 0 || (msg.msg_flags & MSG_CTRUNC)) {
		if (fd >= 0)
			close(fd);
		return err > 0 ? -err : broken(o, -EPIPE);
	}
	return fd;
}

void perf_opener__stop(struct perf_opener *o)
{
	if (!o)
		return;
	if (o->sock >= 0)
		close(o->sock);
	kill(o->pid, SIGKILL);
	waitpid(o->pid, NULL, 0);
	free(o);
}
