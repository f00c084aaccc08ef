// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fd_opener - the child that opens one kind of fd with a capability the
 * collector dropped.  See fd_opener.h.
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
#include <sys/wait.h>
#include <unistd.h>
#include "util/fd_opener.h"

#define OPENER_TIMEOUT_MS 1000

struct fd_opener {
	pid_t pid;
	int sock; /* -1 once the child is gone or out of step */
};

/* the first of @caps the kernel lets us keep, alone; else nothing */
static void keep_one(const int *caps, size_t nr)
{
	cap_t set = cap_init();
	cap_value_t v;
	size_t i;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	cap_reset_ambient();
	if (!set)
		_exit(1);
	for (i = 0; i < nr; i++) {
		v = caps[i];
		cap_clear(set);
		cap_set_flag(set, CAP_EFFECTIVE, 1, &v, CAP_SET);
		cap_set_flag(set, CAP_PERMITTED, 1, &v, CAP_SET);
		if (!cap_set_proc(set))
			break;
	}
	if (i == nr) {
		cap_clear(set);
		if (cap_set_proc(set))
			_exit(1);
	}
	cap_free(set);
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
serve(int sock, pid_t parent, const char *name, const int *caps, size_t nr_caps, fd_opener_fn fn,
      void *ctx)
{
	int32_t arg;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent died before the line above */
	if (getppid() != parent)
		_exit(0);
	/* a terminal's Ctrl-C reaches the whole group: the parent ends us */
	signal(SIGINT, SIG_IGN);
	prctl(PR_SET_NAME, name);
	/* the parent's BPF objects, rings and files are not ours to hold */
	if (sock > 0)
		close_range(0, sock - 1, 0);
	close_range(sock + 1, ~0u, 0);
	keep_one(caps, nr_caps);
	for (;;) {
		if (recv(sock, &arg, sizeof(arg), 0) != sizeof(arg))
			_exit(0);
		fd = fn(ctx, arg);
		reply(sock, fd < 0 ? -fd : 0, fd);
		if (fd >= 0)
			close(fd);
	}
}

struct fd_opener *fd_opener__start(const char *name, const int *caps, size_t nr_caps,
				   fd_opener_fn fn, const void *ctx, size_t ctx_size)
{
	struct fd_opener *o = calloc(1, sizeof(*o));
	pid_t parent = getpid();
	void *copy = NULL;
	int sv[2], err;

	if (!o)
		return NULL;
	/* the child's own copy: it lives in the child's memory from the fork on */
	copy = ctx_size ? malloc(ctx_size) : NULL;
	if (ctx_size && !copy) {
		err = -ENOMEM;
		goto err_free;
	}
	if (ctx_size)
		memcpy(copy, ctx, ctx_size);
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
		serve(sv[1], parent, name, caps, nr_caps, fn, copy);
	free(copy);
	close(sv[1]);
	o->sock = sv[0];
	return o;

err_free:
	free(copy);
	free(o);
	errno = -err;
	return NULL;
}

/* a late or malformed answer would be taken for the next one's: stop asking */
static int broken(struct fd_opener *o, int err)
{
	close(o->sock);
	o->sock = -1;
	return err;
}

int fd_opener__open(struct fd_opener *o, int32_t arg)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	int32_t err = 0;
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
	if (send(o->sock, &arg, sizeof(arg), MSG_NOSIGNAL) != sizeof(arg))
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

void fd_opener__stop(struct fd_opener *o)
{
	if (!o)
		return;
	if (o->sock >= 0)
		close(o->sock);
	kill(o->pid, SIGKILL);
	waitpid(o->pid, NULL, 0);
	free(o);
}
