// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * push - profiles uploaded to Pyroscope through a bounded spool, from a
 * thread of their own.  See push.h.
 */
#include <ctype.h>
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include "export/output.h"
#include "export/push.h"
#include "util/clock.h"
#include "util/hash.h"

#define SPOOL_MAGIC	 "ctxprof-push 1\n"
#define SPOOL_SUFFIX	 ".push"
#define SPOOL_NAME_LEN	 (16 + sizeof(SPOOL_SUFFIX) - 1) /* 16 hex digits, the suffix */
#define SPOOL_HEADER_MAX 4096
#define REJECT_LOG_EVERY 60000000000ull /* a refusal is said at most once a minute */
#define ANSWER_KEEP	 256		/* bytes of an answer's body kept for messages */

struct push_entry {
	struct push_entry *next;
	uint64_t seq; /* the spool file's name */
	char *name;
	int64_t from, until;
	uint8_t *gz;
	size_t len;
	uint64_t samples;
	unsigned int failures;
	uint64_t next_try_ns; /* CLOCK_MONOTONIC */
	bool busy;	      /* the thread uploads or writes it: not to be dropped */
	bool on_disk;	      /* its file is in the spool directory */
};

/* a token or password file, read again when it changes */
struct secret {
	const char *path; /* NULL: none */
	char value[PUSH_SECRET_MAX];
	struct timespec mtime;
	ino_t ino;
};

struct push {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* the list, @bytes, @st, @closed, @last_error */
	pthread_cond_t cond;  /* a profile queued, the stop asked */
	struct push_entry *head, *tail;
	uint64_t next_seq;
	size_t bytes, limit;
	bool closed;   /* push__stop() began: nothing more is taken */
	bool stopping; /* ... and the thread is to end by @flush_end_ns */
	uint64_t flush_end_ns;
	_Atomic uint64_t cut_at_ns; /* an upload under way is cut past it */
	struct push_stats st;
	char last_error[PUSH_URL_MAX + 512];
	uint64_t last_reject_log_ns;
	/* set at start; the thread's from then on */
	CURL *curl;
	char url[PUSH_URL_MAX];	  /* the ingest endpoint, credentials and all */
	char shown[PUSH_URL_MAX]; /* ... redacted, for messages */
	struct secret token, password;
	const char *user, *tenant, *ca_file;
	char *spool_path; /* NULL: no spool directory */
	int spool_fd;
	unsigned int timeout_s, sample_rate;
	const char *types_json;
	uint64_t rnd;
	/* the answer of the upload under way */
	char answer[ANSWER_KEEP];
	size_t answer_len;
	char retry_after[64];
};

/* --- the pure parts */

void push_redact_url(const char *url, char *out, size_t len)
{
	const char *scheme_end = strstr(url, "://"), *auth, *auth_end, *at, *path_end;

	if (!scheme_end || scheme_end == url) {
		snprintf(out, len, "(not a URL)");
		return;
	}
	auth = scheme_end + 3;
	auth_end = auth + strcspn(auth, "/?#");
	/* the user and password end at the authority's last '@' */
	for (at = auth_end; at > auth && at[-1] != '@'; at--)
		;
	if (at == auth && *auth != '@')
		at = auth;
	path_end = auth_end + strcspn(auth_end, "?#");
	snprintf(out, len, "%.*s%.*s%.*s", (int)(auth - url), url, (int)(auth_end - at), at,
		 (int)(path_end - auth_end), auth_end);
}

int push_ingest_url(const char *base, char *out, size_t len)
{
	size_t n = strlen(base);
	static const char ingest[] = "/ingest";

	if (strncasecmp(base, "http://", 7) && strncasecmp(base, "https://", 8))
		return -EINVAL;
	if (strpbrk(base, "?# \t\r\n") || n >= PUSH_URL_MAX || len < sizeof(ingest))
		return -EINVAL;
	while (n > 0 && base[n - 1] == '/')
		n--;
	/* nothing after the scheme but slashes: no host */
	if (n <= (size_t)(strstr(base, "://") - base) + 3)
		return -EINVAL;
	if (n >= sizeof(ingest) - 1 &&
	    !strncmp(base + n - (sizeof(ingest) - 1), ingest, sizeof(ingest) - 1))
		return snprintf(out, len, "%.*s", (int)n, base) < (int)len ? 0 : -EINVAL;
	return snprintf(out, len, "%.*s%s", (int)n, base, ingest) < (int)len ? 0 : -EINVAL;
}

enum push_verdict push_classify(long status)
{
	if (status >= 200 && status < 300)
		return PUSH_SENT;
	/* no answer, a timeout, too many requests, the store's own trouble */
	if (status == 0 || status == 408 || status == 429 || status >= 500)
		return PUSH_RETRY;
	return PUSH_REJECT;
}

uint64_t push_backoff_ms(unsigned int failures, uint32_t rnd)
{
	uint64_t base = PUSH_BACKOFF_MIN_MS;

	while (failures-- > 1 && base < PUSH_BACKOFF_MAX_MS)
		base *= 2;
	if (base > PUSH_BACKOFF_MAX_MS)
		base = PUSH_BACKOFF_MAX_MS;
	/* half fixed, half random: agents that failed together retry apart */
	return base / 2 + rnd % (base / 2 + 1);
}

long push_retry_after_s(const char *value, time_t now)
{
	const char *p = value;
	long s = 0;
	time_t when;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p >= '0' && *p <= '9') {
		for (; *p >= '0' && *p <= '9'; p++)
			s = s < PUSH_RETRY_AFTER_MAX_S ? s * 10 + (*p - '0') : s;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p)
			return -1;
	} else {
		when = curl_getdate(p, NULL);
		if (when < 0)
			return -1;
		s = when > now ? (long)(when - now) : 0;
	}
	return s > PUSH_RETRY_AFTER_MAX_S ? PUSH_RETRY_AFTER_MAX_S : s;
}

int push_secret_parse(const char *buf, size_t len, char *out, size_t out_len)
{
	size_t i;

	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
			   buf[len - 1] == '\t'))
		len--;
	if (!len || len >= out_len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
			return -EINVAL;
	memcpy(out, buf, len);
	out[len] = '\0';
	return 0;
}

const char *push_sample_type_config(bool off_cpu)
{
	/* cpu and samples sampled at -F; waits and wall time recorded whole */
	static const char cpu[] =
		"{\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\","
		"\"display-name\":\"cpu_samples\",\"sampled\":true},"
		"\"cpu\":{\"aggregation\":\"sum\",\"display-name\":\"cpu\",\"sampled\":true}}";
	static const char all[] =
		"{\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\","
		"\"display-name\":\"cpu_samples\",\"sampled\":true},"
		"\"cpu\":{\"aggregation\":\"sum\",\"display-name\":\"cpu\",\"sampled\":true},"
		"\"off_cpu\":{\"aggregation\":\"sum\",\"display-name\":\"off_cpu\","
		"\"sampled\":false},"
		"\"wall\":{\"aggregation\":\"sum\",\"display-name\":\"wall\",\"sampled\":false}}";

	return off_cpu ? all : cpu;
}

/* --- a configuration directory */

/* @dir/@name into @path when it is there: 1; 0 when it is not; -errno */
static int config_file(const char *dir, const char *name, char *path, size_t len)
{
	struct stat st;

	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len)
		return -ENAMETOOLONG;
	if (stat(path, &st)) {
		path[0] = '\0';
		return errno == ENOENT ? 0 : -errno;
	}
	return 1;
}

/* one line of @path into @out (push_secret_parse()'s rules) */
static int config_line(const char *path, char *out, size_t len)
{
	char buf[PUSH_URL_MAX + 1];
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		err = -errno;
	else if ((size_t)n >= sizeof(buf) || push_secret_parse(buf, (size_t)n, out, len))
		err = -EINVAL;
	close(fd);
	return err;
}

int push_config_read(const char *dir, struct push_config *pc, char *err, size_t err_len)
{
	static const struct {
		const char *name;
		size_t offset, size;
		bool read; /* its content, else its path */
	} files[] = {
		{"url", offsetof(struct push_config, url), PUSH_URL_MAX, true},
		{"username", offsetof(struct push_config, user), 256, true},
		{"tenant", offsetof(struct push_config, tenant), 256, true},
		{"token", offsetof(struct push_config, token_file), PATH_MAX, false},
		{"password", offsetof(struct push_config, password_file), PATH_MAX, false},
		{"ca.crt", offsetof(struct push_config, ca_file), PATH_MAX, false},
	};
	char path[PATH_MAX];
	int r;

	memset(pc, 0, sizeof(*pc));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *field = (char *)pc + files[i].offset;

		r = config_file(dir, files[i].name, path, sizeof(path));
		if (r > 0 && files[i].read)
			r = config_line(path, field, files[i].size);
		else if (r > 0)
			snprintf(field, files[i].size, "%s", path);
		if (r < 0) {
			snprintf(err, err_len, "--push-config %s: %s: %s", dir, files[i].name,
				 r == -EINVAL ? "not one line of printable text" : strerror(-r));
			return r;
		}
	}
	return 0;
}

/* --- secrets */

/* @s's file read again if it changed since; Return: 0, 1 (read anew) or -errno */
static int secret_load(struct secret *s)
{
	char buf[PUSH_SECRET_MAX + 1], value[PUSH_SECRET_MAX];
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	if (!s->path)
		return 0;
	fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (s->value[0] && st.st_ino == s->ino && st.st_mtim.tv_sec == s->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == s->mtime.tv_nsec)
		goto out;
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		err = -errno;
		goto out;
	}
	if ((size_t)n > PUSH_SECRET_MAX ||
	    push_secret_parse(buf, (size_t)n, value, sizeof(value))) {
		err = -EINVAL;
		goto out;
	}
	memcpy(s->value, value, sizeof(value));
	s->mtime = st.st_mtim;
	s->ino = st.st_ino;
	err = 1;
out:
	close(fd);
	return err;
}

/* each secret file read again when it changed (a Secret rotated): the push thread */
static void secrets_refresh(struct push *p)
{
	struct secret *each[] = {&p->token, &p->password};
	int r;

	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		r = secret_load(each[i]);
		if (!r)
			continue;
		pthread_mutex_lock(&p->lock);
		if (r > 0)
			p->st.secret_reloads++;
		else
			p->st.secret_errors++;
		pthread_mutex_unlock(&p->lock);
	}
}

/* --- the spool directory */

struct spool_fill {
	const struct push_entry *e;
};

static int spool_fill(void *ctx, struct output_sink *s)
{
	const struct push_entry *e = ((struct spool_fill *)ctx)->e;
	char head[SPOOL_HEADER_MAX];
	int n;

	n = snprintf(head, sizeof(head),
		     SPOOL_MAGIC "name=%s\nfrom=%lld\nuntil=%lld\nsamples=%llu\n\n", e->name,
		     (long long)e->from, (long long)e->until, (unsigned long long)e->samples);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -ENAMETOOLONG;
	return output_sink__write(s, head, (size_t)n) ?: output_sink__write(s, e->gz, e->len);
}

static void spool_name(uint64_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx" SPOOL_SUFFIX, (unsigned long long)seq);
}

/*
 * @p's spool directory opened (made first when @make), checked to be a
 * directory of ours no one else can write.  Return: 1 open, 0 not there
 * (and not made), or -errno with a reason in @err.
 */
static int spool_dir_open(struct push *p, bool make, char *err, size_t err_len)
{
	struct stat st;
	int e;

	if (p->spool_fd >= 0)
		return 1;
	if (make && mkdir(p->spool_path, 0700) && errno != EEXIST) {
		e = errno;
		snprintf(err, err_len, "--push: cannot make %s: %s", p->spool_path, strerror(e));
		return -e;
	}
	p->spool_fd = open(p->spool_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->spool_fd < 0 && errno == ENOENT && !make)
		return 0;
	if (p->spool_fd < 0 || fstat(p->spool_fd, &st) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		snprintf(err, err_len,
			 "--push: %s must be a directory of ours that no one else can write",
			 p->spool_path);
		if (p->spool_fd >= 0)
			close(p->spool_fd);
		p->spool_fd = -1;
		return -EPERM;
	}
	return 1;
}

/* @e into its file (atomically: output_write()); Return: 0 or -errno */
static int spool_write(struct push *p, struct push_entry *e)
{
	char path[PATH_MAX], name[SPOOL_NAME_LEN + 1];
	struct spool_fill f = {e};

	char why[PATH_MAX + 80];
	int r = spool_dir_open(p, true, why, sizeof(why));

	if (r < 0)
		return r;
	spool_name(e->seq, name, sizeof(name));
	if (snprintf(path, sizeof(path), "%s/%s", p->spool_path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return output_write(path, spool_fill, &f, NULL);
}

static void spool_remove(struct push *p, const struct push_entry *e)
{
	char name[SPOOL_NAME_LEN + 1];

	if (!e->on_disk || p->spool_fd < 0)
		return;
	spool_name(e->seq, name, sizeof(name));
	unlinkat(p->spool_fd, name, 0);
}

/* one "key=value\n" line of a spool file's header at *@at into @out; false if not */
static bool header_line(const uint8_t *buf, size_t len, size_t *at, const char *key, char *out,
			size_t out_len)
{
	size_t klen = strlen(key), vlen;
	const uint8_t *line = buf + *at, *nl;

	nl = memchr(line, '\n', len - *at);
	if (!nl || (size_t)(nl - line) <= klen || memcmp(line, key, klen) || line[klen] != '=')
		return false;
	vlen = (size_t)(nl - line) - klen - 1;
	if (vlen >= out_len || memchr(line + klen + 1, '\0', vlen))
		return false;
	memcpy(out, line + klen + 1, vlen);
	out[vlen] = '\0';
	*at = (size_t)(nl - buf) + 1;
	return true;
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int push_spool_parse(const uint8_t *buf, size_t len, struct push_spool_header *h)
{
	char from[24], until[24], samples[24];
	int64_t n;
	size_t at = sizeof(SPOOL_MAGIC) - 1, i;

	if (len < at || memcmp(buf, SPOOL_MAGIC, at) ||
	    !header_line(buf, len, &at, "name", h->name, sizeof(h->name)) ||
	    !header_line(buf, len, &at, "from", from, sizeof(from)) ||
	    !header_line(buf, len, &at, "until", until, sizeof(until)) ||
	    !header_line(buf, len, &at, "samples", samples, sizeof(samples)) || at >= len ||
	    buf[at] != '\n' || !parse_i64(from, &h->from) || !parse_i64(until, &h->until) ||
	    !parse_i64(samples, &n) || n < 0 || !h->name[0])
		return -EINVAL;
	/* what push_secret_parse() would take: no control character in a name */
	for (i = 0; h->name[i]; i++)
		if ((unsigned char)h->name[i] < ' ' || h->name[i] == 0x7f)
			return -EINVAL;
	h->samples = (uint64_t)n;
	h->body = at + 1;
	return 0;
}

/*
 * A spool file's profile, as spool_fill() wrote it (hostile all the same: a
 * directory's content can be anyone's doing).  Return: the entry, or NULL.
 */
static struct push_entry *spool_parse(const uint8_t *buf, size_t len, uint64_t seq)
{
	struct push_spool_header h;
	struct push_entry *e;

	if (push_spool_parse(buf, len, &h))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->seq = seq;
	e->name = strdup(h.name);
	e->len = len - h.body;
	e->gz = malloc(e->len ? e->len : 1);
	if (!e->name || !e->gz) {
		free(e->name);
		free(e->gz);
		free(e);
		return NULL;
	}
	memcpy(e->gz, buf + h.body, e->len);
	e->from = h.from;
	e->until = h.until;
	e->samples = h.samples;
	e->on_disk = true;
	return e;
}

static int seq_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* whether @name is ours (16 hex digits, the suffix); its number in *@seq */
static bool spool_entry_name(const char *name, uint64_t *seq)
{
	char *end;

	if (strlen(name) != SPOOL_NAME_LEN || strcmp(name + 16, SPOOL_SUFFIX))
		return false;
	for (int i = 0; i < 16; i++)
		if (!isxdigit((unsigned char)name[i]) || isupper((unsigned char)name[i]))
			return false;
	*seq = strtoull(name, &end, 16);
	return true;
}

/* one spool file into the queue's tail; a bad one removed and counted */
static void spool_load_one(struct push *p, uint64_t seq)
{
	char name[SPOOL_NAME_LEN + 1];
	struct push_entry *e = NULL;
	struct stat st;
	uint8_t *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd;

	spool_name(seq, name, sizeof(name));
	fd = openat(p->spool_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size > p->limit + SPOOL_HEADER_MAX)
		goto bad;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		goto out;
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	e = got == (size_t)st.st_size ? spool_parse(buf, got, seq) : NULL;
	if (!e)
		goto bad;
	p->st.restored++;
	p->st.restored_samples += e->samples;
	p->bytes += e->len;
	if (p->tail)
		p->tail->next = e;
	else
		p->head = e;
	p->tail = e;
	goto out;
bad:
	p->st.spool_bad++;
	unlinkat(p->spool_fd, name, 0);
out:
	free(buf);
	close(fd);
}

/*
 * The spool directory under @dir: its profiles queued, oldest first, when it
 * is there; made at the first profile it has to keep (spool_dir_make()), so
 * a store that always answers leaves no trace in @dir.
 */
static int spool_open(struct push *p, const char *dir, char *err, size_t err_len)
{
	uint64_t *seqs = NULL, seq;
	size_t nr = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int r;

	if (asprintf(&p->spool_path, "%s/%s", dir, PUSH_SPOOL_DIR) < 0) {
		p->spool_path = NULL;
		return -ENOMEM;
	}
	r = spool_dir_open(p, false, err, err_len);
	if (r <= 0)
		return r;
	d = fdopendir(dup(p->spool_fd));
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!spool_entry_name(de->d_name, &seq))
			continue;
		if (nr == cap) {
			uint64_t *more = realloc(seqs, (cap ? cap * 2 : 64) * sizeof(*seqs));

			if (!more)
				break;
			seqs = more;
			cap = cap ? cap * 2 : 64;
		}
		seqs[nr++] = seq;
	}
	closedir(d);
	if (nr)
		qsort(seqs, nr, sizeof(*seqs), seq_cmp);
	for (i = 0; i < nr; i++)
		spool_load_one(p, seqs[i]);
	p->next_seq = nr ? seqs[nr - 1] + 1 : 0;
	free(seqs);
	return 0;
}

/* --- the queue (under the lock) */

static void entry_free(struct push_entry *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->gz);
	free(e);
}

/* take @e, after @prev (NULL: the head), out of the list */
static void unlink_entry(struct push *p, struct push_entry *prev, struct push_entry *e)
{
	if (prev)
		prev->next = e->next;
	else
		p->head = e->next;
	if (p->tail == e)
		p->tail = prev;
	p->bytes -= e->len;
}

static void drop(struct push *p, struct push_entry *prev, struct push_entry *e, enum push_drop why)
{
	unlink_entry(p, prev, e);
	p->st.dropped[why]++;
	p->st.dropped_samples[why] += e->samples;
	spool_remove(p, e);
	entry_free(e);
}

/* room for @len bytes more: the oldest profiles not being sent dropped */
static void make_room(struct push *p, size_t len)
{
	struct push_entry *prev = NULL, *e = p->head, *next;

	while (e && p->bytes + len > p->limit) {
		next = e->next;
		if (e->busy) {
			prev = e;
		} else {
			drop(p, prev, e, PUSH_DROP_SPOOL_FULL);
		}
		e = next;
	}
}

void push__enqueue(struct push *p, const char *name, int64_t from_s, int64_t until_s, uint8_t *gz,
		   size_t len, uint64_t samples)
{
	struct push_entry *e = calloc(1, sizeof(*e));

	pthread_mutex_lock(&p->lock);
	p->st.queued++;
	p->st.queued_samples += samples;
	if (e)
		e->name = strdup(name);
	if (!e || !e->name || p->closed || len > p->limit) {
		/* no room at all, or the stop began: this one goes */
		enum push_drop why = p->closed ? PUSH_DROP_STOPPING : PUSH_DROP_SPOOL_FULL;

		p->st.dropped[why]++;
		p->st.dropped_samples[why] += samples;
		pthread_mutex_unlock(&p->lock);
		if (e)
			free(e->name);
		free(e);
		free(gz);
		return;
	}
	e->seq = p->next_seq++;
	e->from = from_s;
	e->until = until_s;
	e->gz = gz;
	e->len = len;
	e->samples = samples;
	make_room(p, len);
	p->bytes += len;
	if (p->tail)
		p->tail->next = e;
	else
		p->head = e;
	p->tail = e;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* --- the upload */

static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
	struct push *p = ctx;
	size_t len = size * n, v;

	if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		v = len - 12 < sizeof(p->retry_after) - 1 ? len - 12 : sizeof(p->retry_after) - 1;
		memcpy(p->retry_after, buf + 12, v);
		p->retry_after[v] = '\0';
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *ctx)
{
	struct push *p = ctx;
	size_t len = size * n, room = sizeof(p->answer) - 1 - p->answer_len;

	if (room) {
		memcpy(p->answer + p->answer_len, buf, len < room ? len : room);
		p->answer_len += len < room ? len : room;
		p->answer[p->answer_len] = '\0';
	}
	return len;
}

/* the stop's flush time is over: an upload under way is cut */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct push *p = ctx;

	return mono_ns() >= atomic_load_explicit(&p->cut_at_ns, memory_order_relaxed);
}

/* the answer's first line, printable, for a message */
static void answer_line(const struct push *p, char *out, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && p->answer[i] && p->answer[i] != '\n' && p->answer[i] != '\r';
	     i++)
		out[i] = (unsigned char)p->answer[i] >= ' ' && p->answer[i] != 0x7f ? p->answer[i]
										    : '?';
	out[i] = '\0';
}

/*
 * One upload of @e.  Return: the store's HTTP status, 0 when none came
 * (@why then says what happened).
 */
static long upload(struct push *p, const struct push_entry *e, char *why, size_t why_len)
{
	char url[PUSH_URL_MAX + 1280], auth[PUSH_SECRET_MAX + 32], tenant[PUSH_SECRET_MAX + 32];
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL, *h;
	curl_mimepart *part;
	curl_mime *mime;
	char *name;
	long status = 0;
	CURLcode rc;

	why[0] = '\0';
	p->answer_len = 0;
	p->answer[0] = '\0';
	p->retry_after[0] = '\0';
	name = curl_easy_escape(p->curl, e->name, 0);
	if (!name) {
		snprintf(why, why_len, "out of memory");
		return 0;
	}
	snprintf(url, sizeof(url), "%s?name=%s&from=%lld&until=%lld&spyName=ctxprof&sampleRate=%u",
		 p->url, name, (long long)e->from, (long long)e->until, p->sample_rate);
	curl_free(name);
	/* a clean handle each time; its connection and TLS session stay cached */
	curl_easy_reset(p->curl);
	mime = curl_mime_init(p->curl);
	part = mime ? curl_mime_addpart(mime) : NULL;
	if (part) {
		curl_mime_name(part, "profile");
		curl_mime_filename(part, "profile.pprof");
		curl_mime_type(part, "application/octet-stream");
		curl_mime_data(part, (const char *)e->gz, e->len);
		part = curl_mime_addpart(mime);
	}
	if (part) {
		curl_mime_name(part, "sample_type_config");
		curl_mime_filename(part, "sample_type_config.json");
		curl_mime_type(part, "application/json");
		curl_mime_data(part, p->types_json, CURL_ZERO_TERMINATED);
	}
	/* no "Expect: 100-continue" round trip before each body */
	h = curl_slist_append(hdrs, "Expect:");
	hdrs = h ? h : hdrs;
	if (p->token.path) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", p->token.value);
		h = curl_slist_append(hdrs, auth);
		hdrs = h ? h : hdrs;
	}
	if (p->tenant) {
		snprintf(tenant, sizeof(tenant), "X-Scope-OrgID: %s", p->tenant);
		h = curl_slist_append(hdrs, tenant);
		hdrs = h ? h : hdrs;
	}
	if (!part || !hdrs) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(p->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT, (long)PUSH_CONNECT_TIMEOUT_S);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT, (long)p->timeout_s);
	curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "ctxprof");
	curl_easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(p->curl, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, errbuf);
	if (p->ca_file)
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, p->ca_file);
	if (p->user) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(p->curl, CURLOPT_USERNAME, p->user);
		curl_easy_setopt(p->curl, CURLOPT_PASSWORD, p->password.value);
	}
	rc = curl_easy_perform(p->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(why, why_len, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
out:
	curl_slist_free_all(hdrs);
	curl_mime_free(mime);
	return status;
}

/* a failed attempt said, and kept for /healthz and the summary (under the lock) */
static void note_failure(struct push *p, long status, const char *why, bool rejected)
{
	char line[ANSWER_KEEP];
	uint64_t now = mono_ns();
	int n;

	if (status) {
		answer_line(p, line, sizeof(line));
		n = snprintf(p->last_error, sizeof(p->last_error), "%s answered %ld%s%s", p->shown,
			     status, line[0] ? ": " : "", line);
	} else {
		n = snprintf(p->last_error, sizeof(p->last_error), "%s: %s", p->shown, why);
	}
	/* cut short, it still says who and how */
	(void)n;
	if (rejected && now - p->last_reject_log_ns >= REJECT_LOG_EVERY) {
		fprintf(stderr, "\nctxprof: push: a profile was refused for good: %s\n",
			p->last_error);
		p->last_reject_log_ns = now;
	}
}

/* after an attempt at the head @e (under the lock) */
static void settle(struct push *p, struct push_entry *e, long status, const char *why)
{
	enum push_verdict v = push_classify(status);
	long after;
	uint64_t wait_ms;

	p->st.last_status = (uint64_t)status;
	p->st.failing = v != PUSH_SENT;
	if (v == PUSH_SENT) {
		p->last_error[0] = '\0';
		p->st.sent++;
		p->st.sent_samples += e->samples;
		p->st.sent_bytes += e->len;
		unlink_entry(p, NULL, e);
		spool_remove(p, e);
		entry_free(e);
		return;
	}
	note_failure(p, status, why, v == PUSH_REJECT);
	if (v == PUSH_REJECT) {
		drop(p, NULL, e, PUSH_DROP_REJECTED);
		return;
	}
	if (status)
		p->st.failed_status++;
	else
		p->st.failed_no_answer++;
	e->failures++;
	p->rnd = hash_u64(p->rnd + mono_ns());
	wait_ms = push_backoff_ms(e->failures, (uint32_t)p->rnd);
	after = p->retry_after[0] ? push_retry_after_s(p->retry_after, time(NULL)) : -1;
	if (after >= 0)
		wait_ms = (uint64_t)after * 1000;
	e->next_try_ns = mono_ns() + wait_ms * 1000000;
}

/* wait on the condition until @until_ns (CLOCK_MONOTONIC), or a signal */
static void wait_until(struct push *p, uint64_t until_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(until_ns / 1000000000),
			      .tv_nsec = (long)(until_ns % 1000000000)};

	if (until_ns == UINT64_MAX)
		pthread_cond_wait(&p->cond, &p->lock);
	else
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

/* what the stop leaves: into the spool directory, or dropped (under the lock) */
static void leave(struct push *p)
{
	struct push_entry *e;

	while ((e = p->head)) {
		unlink_entry(p, NULL, e);
		if (p->spool_path && (e->on_disk || !spool_write(p, e))) {
			p->st.kept++;
			p->st.kept_samples += e->samples;
		} else {
			p->st.dropped[PUSH_DROP_STOPPING]++;
			p->st.dropped_samples[PUSH_DROP_STOPPING] += e->samples;
		}
		entry_free(e);
	}
}

static void *push_thread(void *arg)
{
	struct push *p = arg;
	struct push_entry *e;
	char why[CURL_ERROR_SIZE];
	uint64_t now, until;
	long status;
	int spooled;

	pthread_setname_np(pthread_self(), "ctxprof-push");
	pthread_mutex_lock(&p->lock);
	for (;;) {
		now = mono_ns();
		e = p->head;
		if (p->stopping && (!e || now >= p->flush_end_ns))
			break;
		until = p->stopping ? p->flush_end_ns : UINT64_MAX;
		if (!e || now < e->next_try_ns) {
			wait_until(p, e && e->next_try_ns < until ? e->next_try_ns : until);
			continue;
		}
		e->busy = true;
		p->st.attempts++;
		p->st.retries += e->failures > 0;
		pthread_mutex_unlock(&p->lock);
		secrets_refresh(p);
		status = upload(p, e, why, sizeof(why));
		/* a profile the store did not take is safe on disk before the next try */
		spooled = 0;
		if (push_classify(status) == PUSH_RETRY && p->spool_path && !e->on_disk)
			spooled = spool_write(p, e) ? -1 : 1;
		pthread_mutex_lock(&p->lock);
		e->on_disk |= spooled > 0;
		p->st.spool_written += spooled > 0;
		p->st.spool_errors += spooled < 0;
		e->busy = false;
		settle(p, e, status, why);
	}
	leave(p);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* --- life cycle */

static int check_secret(struct secret *s, const char *flag, char *err, size_t err_len)
{
	int r = secret_load(s);

	if (r >= 0)
		return 0;
	snprintf(err, err_len, "%s %s: %s", flag, s->path,
		 r == -EINVAL ? "not one line of printable text (at most 4 KiB), or not a "
				"regular file"
			      : strerror(-r));
	return r;
}

/* a header value must not end its line */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return false;
	return true;
}

/* push__start(), or with !@run its checks alone (no spool read, no thread) */
static struct push *push__start_checked(const struct push_opts *o, bool run, char *err,
					size_t err_len)
{
	pthread_condattr_t ca;
	struct push *p;
	int e = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->spool_fd = -1;
	p->limit = o->spool_bytes;
	p->st.spool_limit = o->spool_bytes;
	p->timeout_s = o->timeout_s ? o->timeout_s : PUSH_DEFAULT_TIMEOUT_S;
	p->sample_rate = o->sample_rate;
	p->types_json = push_sample_type_config(o->off_cpu);
	p->user = o->user;
	p->tenant = o->tenant;
	p->ca_file = o->ca_file;
	p->token.path = o->token_file;
	p->password.path = o->password_file;
	p->rnd = hash_u64(mono_ns() ^ (uint64_t)getpid());
	atomic_store(&p->cut_at_ns, UINT64_MAX);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	push_redact_url(o->url, p->shown, sizeof(p->shown));
	if (push_ingest_url(o->url, p->url, sizeof(p->url))) {
		snprintf(err, err_len,
			 "--push %s: not an http:// or https:// URL of a Pyroscope server (no "
			 "query, no spaces)",
			 p->shown);
		e = -EINVAL;
		goto err_free;
	}
	push_redact_url(p->url, p->shown, sizeof(p->shown));
	if (p->token.path && p->user) {
		snprintf(err, err_len,
			 "--push: a bearer token and a user for basic auth: give one");
		e = -EINVAL;
		goto err_free;
	}
	if ((p->tenant && !printable(p->tenant)) || (p->user && !printable(p->user))) {
		snprintf(err, err_len, "--push-tenant and --push-user take printable text");
		e = -EINVAL;
		goto err_free;
	}
	e = check_secret(&p->token, "--push-token-file", err, err_len);
	if (!e)
		e = check_secret(&p->password, "--push-password-file", err, err_len);
	if (e)
		goto err_free;
	if (!run)
		return p;
	if (o->spool_dir) {
		e = spool_open(p, o->spool_dir, err, err_len);
		if (e)
			goto err_free;
		make_room(p, 0);
	}
	/* once, before any other libcurl call; the only thread calling it */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	p->curl = curl_easy_init();
	if (!p->curl) {
		snprintf(err, err_len, "--push: libcurl could not start");
		e = -ENOMEM;
		goto err_free;
	}
	e = -pthread_create(&p->thread, NULL, push_thread, p);
	if (e) {
		snprintf(err, err_len, "--push: cannot start its thread: %s", strerror(-e));
		goto err_free;
	}
	p->started = true;
	return p;

err_free:
	push__free(p);
	errno = -e;
	return NULL;
}

int push_check(const struct push_opts *o, char *err, size_t err_len)
{
	struct push *p = push__start_checked(o, false, err, err_len);

	if (!p)
		return -errno;
	push__free(p);
	return 0;
}

struct push *push__start(const struct push_opts *o, char *err, size_t err_len)
{
	return push__start_checked(o, true, err, err_len);
}

void push__stop(struct push *p, unsigned int flush_ms)
{
	if (!p || !p->started)
		return;
	pthread_mutex_lock(&p->lock);
	p->closed = p->stopping = true;
	p->flush_end_ns = mono_ns() + (uint64_t)flush_ms * 1000000;
	atomic_store(&p->cut_at_ns, p->flush_end_ns);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->started = false;
}

void push__stats(struct push *p, struct push_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	out->pending = out->pending_samples = 0;
	for (const struct push_entry *e = p->head; e; e = e->next) {
		out->pending++;
		out->pending_samples += e->samples;
	}
	out->pending_bytes = p->bytes;
	pthread_mutex_unlock(&p->lock);
}

void push__last_error(struct push *p, char *why, size_t why_len, char *url, size_t url_len)
{
	pthread_mutex_lock(&p->lock);
	snprintf(why, why_len, "%s", p->last_error);
	snprintf(url, url_len, "%s", p->shown);
	pthread_mutex_unlock(&p->lock);
}

void push__free(struct push *p)
{
	struct push_entry *e;

	if (!p)
		return;
	push__stop(p, 0);
	while ((e = p->head)) {
		p->head = e->next;
		entry_free(e);
	}
	if (p->curl)
		curl_easy_cleanup(p->curl);
	if (p->spool_fd >= 0)
		close(p->spool_fd);
	free(p->spool_path);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
