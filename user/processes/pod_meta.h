/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pod_meta - the Kubernetes pod, namespace and container name of a container
 * id, from the kubelet's log directories on the node, without the API server.
 *
 * The kubelet keeps, for every container it runs,
 *   <logs>/containers/<pod>_<namespace>_<container>-<64-hex id>.log
 * a symbolic link to
 *   <logs>/pods/<namespace>_<pod>_<pod uid>/<container>/<restart>.log
 * (<logs> is /var/log; the DaemonSet mounts both directories read-only).  A
 * link's name gives the names for an id; its target must agree with them and
 * its container directory must exist, so a link whose pod is gone (or a file
 * that only looks like a link) names nothing.  Pod, namespace and container
 * names are DNS names (no '_'), which makes the split unambiguous; a name
 * with any other byte is refused.
 *
 * The index is read again, at most once a second, when an id is not in it.
 *
 * Threads: pod_index__lookup() and pod_index__size() from any thread (one
 * internal mutex, held across a rescan of the log directories, at most once
 * a second); pod_index__new() and __free() on the main thread while no
 * lookup runs; pod_meta_parse_link() and the other parsers are pure.
 */
#ifndef CTXPROF_POD_META_H
#define CTXPROF_POD_META_H

#include <stdbool.h>

#define POD_META_POD_LEN      254 /* a DNS subdomain: 253 bytes, NUL */
#define POD_META_NAME_LEN     64  /* namespace and container: DNS labels, 63 bytes */
#define POD_META_ID_LEN	      64
#define POD_META_DEFAULT_LOGS "/var/log"

struct pod_meta {
	char pod[POD_META_POD_LEN];
	char ns[POD_META_NAME_LEN];
	char container[POD_META_NAME_LEN];
};

/**
 * pod_meta_parse_link() - split a /var/log/containers entry name
 * ("<pod>_<namespace>_<container>-<id>.log").
 * @id: receives the 64 lowercase hex digits, NUL-terminated
 * Return: true when @name has that form with valid names.
 */
bool pod_meta_parse_link(const char *name, struct pod_meta *out, char id[POD_META_ID_LEN + 1]);

/**
 * pod_meta_target_agrees() - whether a link's target
 * ".../pods/<namespace>_<pod>_<uid>/<container>/<file>" names @m's pod,
 * namespace and container.
 */
bool pod_meta_target_agrees(const char *target, const struct pod_meta *m);

struct pod_index;

/**
 * pod_index__new() - an index of the containers under @logs_dir (its
 * containers/ and pods/ directories), read lazily.
 * Return: NULL with errno set.  Pair with pod_index__free().
 */
struct pod_index *pod_index__new(const char *logs_dir);

/**
 * pod_index__lookup() - the names of container @id (64 lowercase hex).
 * Any thread; takes the index's lock (never call it in an RCU read-side
 * section), and may read the directories (at most once a second).
 * Return: true and @out filled when found.
 */
bool pod_index__lookup(struct pod_index *pi, const char *id, struct pod_meta *out);

/** pod_index__size() - containers in the index after its last read. */
unsigned int pod_index__size(struct pod_index *pi);

/** pod_index__free() - accepts NULL. */
void pod_index__free(struct pod_index *pi);

#endif /* CTXPROF_POD_META_H */
