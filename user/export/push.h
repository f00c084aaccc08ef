/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * push - profiles uploaded to a Grafana Pyroscope store (--push URL), from a
 * thread of their own, through a bounded spool: sampling and exports never
 * wait for the network.
 *
 * The request is Pyroscope's HTTP ingest: POST BASE/ingest?name=SERIES&
 * from=S&until=S&spyName=ctxprof&sampleRate=HZ with a multipart/form-data
 * body of two file parts, `profile` (the gzipped pprof) and
 * `sample_type_config` (JSON: our sample types' units and aggregation).
 * There is no `format=pprof`: Pyroscope's handler takes a body as a
 * multipart form only without it (with it, the whole body is read as one
 * pprof and refused; grafana/pyroscope pkg/ingester/pyroscope, and what
 * pyroscope-go and Pyroscope's own examples send).  Authentication: a
 * bearer token read from a file (re-read when the file changes: a rotated
 * Kubernetes Secret), or basic auth (a user and a password file, or
 * user:password in the URL); the tenant in X-Scope-OrgID; TLS with the
 * system's CAs or a given file.  No redirect is followed.  A URL is shown
 * only redacted (push_redact_url()): never its user, password or query.
 *
 * Each profile is queued whole (push__enqueue()); the thread uploads them
 * one at a time, oldest first, so the store gets them in order.  An answer:
 *   2xx                 sent;
 *   408, 429, 5xx, or no answer (refused, reset, timed out)
 *                       tried again after a backoff (1 s doubling to 30 s,
 *                       with jitter), or after the store's Retry-After (at
 *                       most PUSH_RETRY_AFTER_MAX_S), the profiles behind it
 *                       waiting (order kept);
 *   any other 4xx       refused for good: dropped, counted, said once a minute.
 * The spool holds at most @spool_bytes of pending profiles; one more makes
 * room by dropping the oldest not being sent (counted: spool_full).  With
 * a spool directory, a profile whose upload failed is also written there
 * (one file each, written atomically), so that a restart sends it; at
 * start the directory's profiles are queued first, in order.  At the stop,
 * the thread goes on sending for the flush time given, then what is left
 * stays in the directory (kept) or, without one, is dropped (stopping).
 * Every profile and its samples end in exactly one count: sent, dropped by
 * reason, kept, or still pending.
 *
 * Threads: push__enqueue(), push__stats() from any thread (one mutex,
 * held for list operations); the uploads on the push thread.
 */
#ifndef CTXPROF_PUSH_H
#define CTXPROF_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <time.h>

#define PUSH_DEFAULT_SPOOL_MIB 64
#define PUSH_DEFAULT_TIMEOUT_S 30
#define PUSH_CONNECT_TIMEOUT_S 10
#define PUSH_BACKOFF_MIN_MS    1000
#define PUSH_BACKOFF_MAX_MS    30000
#define PUSH_RETRY_AFTER_MAX_S 300
#define PUSH_SECRET_MAX	       4096		    /* a token or password file's bytes */
#define PUSH_SPOOL_DIR	       "ctxprof-push-spool" /* under the spool directory given */
#define PUSH_URL_MAX	       2048
#define PUSH_MAX_PROFILE_BYTES (64u << 20) /* one series' gzipped profile, at most */

/* why a queued profile was dropped */
enum push_drop {
	PUSH_DROP_SPOOL_FULL, /* room was made for a newer one */
	PUSH_DROP_REJECTED,   /* the store refused it (4xx): not tried again */
	PUSH_DROP_STOPPING,   /* still pending at the stop, no spool directory */
	PUSH_DROP_MAX,
};

/* what an upload's outcome calls for (push_classify()) */
enum push_verdict {
	PUSH_SENT,
	PUSH_RETRY,
	PUSH_REJECT,
};

struct push_opts {
	const char *url;	   /* http(s)://[user:password@]host[:port][/prefix] */
	const char *token_file;	   /* Authorization: Bearer; NULL: none */
	const char *user;	   /* basic auth, its password from @password_file */
	const char *password_file; /* NULL with @user: an empty password */
	const char *tenant;	   /* X-Scope-OrgID; NULL: none */
	const char *ca_file;	   /* NULL: the system's CAs */
	const char *spool_dir;	   /* NULL: the spool is in memory only */
	size_t spool_bytes;	   /* the spool's bound */
	unsigned int timeout_s;	   /* one upload's, whole */
	unsigned int sample_rate;  /* Hz: sampleRate */
	bool off_cpu;		   /* profiles carry off_cpu and wall types too */
};

struct push_stats {
	uint64_t queued, queued_samples;     /* push__enqueue()d */
	uint64_t restored, restored_samples; /* read back from the spool directory at start */
	uint64_t sent, sent_samples, sent_bytes;
	uint64_t attempts;	   /* uploads begun */
	uint64_t retries;	   /* ... of a profile tried before */
	uint64_t failed_no_answer; /* attempts with no answer (refused, reset, timed out) */
	uint64_t failed_status;	   /* attempts answered 408, 429 or 5xx */
	uint64_t dropped[PUSH_DROP_MAX], dropped_samples[PUSH_DROP_MAX];
	uint64_t kept, kept_samples; /* left in the spool directory at the stop */
	uint64_t pending, pending_samples, pending_bytes; /* now */
	uint64_t spool_limit;				  /* bytes */
	uint64_t spool_written;	 /* profiles written to the spool directory */
	uint64_t spool_errors;	 /* ... that could not be (it stays in memory) */
	uint64_t spool_bad;	 /* files there that were not ours or not whole: removed */
	uint64_t secret_reloads; /* token or password file read again after a change */
	uint64_t secret_errors;	 /* ... that could not be (the old one kept) */
	uint64_t failing;	 /* 1 while the latest attempt failed */
	uint64_t last_status;	 /* the store's latest HTTP status; 0: none yet */
};

struct push;

/**
 * push__start() - check @o (URL, secret files, spool directory, whose
 * profiles are queued), then start the push thread.  Main thread, at start.
 * Return: the pusher, or NULL with errno set and a one-line reason in @err.
 * Pair with push__stop() and push__free().
 */
struct push *push__start(const struct push_opts *o, char *err, size_t err_len);

/**
 * push_check() - what push__start() checks first (URL, secret files,
 * tenant), without starting anything: for an error before profiling
 * begins.  Return: 0, or -errno with a one-line reason in @err.
 */
int push_check(const struct push_opts *o, char *err, size_t err_len);

/**
 * push__enqueue() - queue the gzipped profile @gz (@len bytes; the queue
 * owns it from now, freed whatever happens) of series @name (series.h)
 * over [@from_s, @until_s] (Unix seconds) holding @samples CPU samples.
 * Never blocks on the network.  Any thread.
 */
void push__enqueue(struct push *p, const char *name, int64_t from_s, int64_t until_s, uint8_t *gz,
		   size_t len, uint64_t samples);

/**
 * push__stop() - take no more, send what is pending for up to @flush_ms
 * (an upload under way then is cut), keep the rest in the spool directory
 * or drop it, and join the thread.  Main thread; accepts NULL.
 */
void push__stop(struct push *p, unsigned int flush_ms);

/** push__stats() - counts now; any thread; zeros for NULL. */
void push__stats(struct push *p, struct push_stats *out);

/**
 * push__last_error() - why the latest attempt failed, one line (empty
 * when it did not), and the store's URL redacted in @url.  Any thread.
 */
void push__last_error(struct push *p, char *why, size_t why_len, char *url, size_t url_len);

/** push__free() - after push__stop(); accepts NULL. */
void push__free(struct push *p);

/* --- the pure parts, exposed for tests */

/**
 * push_redact_url() - @url without its user, password, query and fragment:
 * scheme://host[:port]/path, for messages.  Something that is no URL reads
 * "(not a URL)".
 */
void push_redact_url(const char *url, char *out, size_t len);

/**
 * push_ingest_url() - @base's ingest endpoint: /ingest appended unless its
 * path ends so already (a trailing '/' dropped first).
 * Return: 0, or -EINVAL (not http:// or https://, a query or fragment in
 * it, or longer than PUSH_URL_MAX).
 */
int push_ingest_url(const char *base, char *out, size_t len);

/** push_classify() - what an attempt calls for: @status 0 when no answer came. */
enum push_verdict push_classify(long status);

/**
 * push_backoff_ms() - the wait before attempt @failures + 1 (@failures >= 1),
 * from PUSH_BACKOFF_MIN_MS doubling to PUSH_BACKOFF_MAX_MS, half of it
 * jittered by @rnd.
 */
uint64_t push_backoff_ms(unsigned int failures, uint32_t rnd);

/**
 * push_retry_after_s() - a Retry-After value (delta-seconds or an HTTP date)
 * as seconds from @now, capped at PUSH_RETRY_AFTER_MAX_S.
 * Return: the seconds, or -1 when it is neither.
 */
long push_retry_after_s(const char *value, time_t now);

/**
 * push_secret_parse() - a token or password file's content: one line, its
 * trailing newline and blanks dropped; refused when empty or when it holds
 * a control character (a header could be forged with one).
 * Return: 0, or -EINVAL.
 */
int push_secret_parse(const char *buf, size_t len, char *out, size_t out_len);

/*
 * A push configuration directory (--push-config DIR), the shape of a
 * mounted Kubernetes Secret: one file per setting, each optional but url.
 *   url       the store's URL (may hold user:password: it is read, never shown)
 *   token     a bearer token (re-read when it changes)
 *   username, password   basic auth (password re-read when it changes)
 *   tenant    X-Scope-OrgID
 *   ca.crt    CA certificates for https
 * A directory without url (an optional Secret not created) means no push.
 */
struct push_config {
	char url[PUSH_URL_MAX];
	char user[256];
	char tenant[256];
	char token_file[PATH_MAX];    /* "": none */
	char password_file[PATH_MAX]; /* "": none */
	char ca_file[PATH_MAX];	      /* "": none */
};

/**
 * push_config_read() - @dir's settings into @pc (url empty: no push).
 * Return: 0, or -errno with a one-line reason in @err (a file that is there
 * but cannot be read, or is not one line of printable text).
 */
int push_config_read(const char *dir, struct push_config *pc, char *err, size_t err_len);

/* what a spool file's header says (push_spool_parse()) */
struct push_spool_header {
	char name[1024];
	int64_t from, until;
	uint64_t samples;
	size_t body; /* the profile's offset in the file */
};

/**
 * push_spool_parse() - a spool file's @len bytes (hostile: anyone able to
 * write the directory): its header, the profile after it.
 * Return: 0, or -EINVAL.
 */
int push_spool_parse(const uint8_t *buf, size_t len, struct push_spool_header *h);

/** push_sample_type_config() - the sample_type_config JSON of our sample types. */
const char *push_sample_type_config(bool off_cpu);

#endif /* CTXPROF_PUSH_H */
