// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "collector/cli.h"
#include "export/push.h"

static char out_buf[32768], err_buf[1024];

/* parse a NULL-terminated argument list; stdout/stderr captured in buffers */
static int parse(struct collector_opts *o, ...)
{
	char *argv[32] = {"collector"};
	FILE *out = fmemopen(out_buf, sizeof(out_buf), "w");
	FILE *err = fmemopen(err_buf, sizeof(err_buf), "w");
	int argc = 1, rc;
	va_list ap;

	memset(out_buf, 0, sizeof(out_buf));
	memset(err_buf, 0, sizeof(err_buf));
	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	rc = cli__parse(argc, argv, o, out, err);
	fclose(out);
	fclose(err);
	return rc;
}

static void cli__parse__pid_only__defaults(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--pid", "42", NULL), 0);
	assert_int_equal(o.pid, 42);
	assert_int_equal(o.frequency, CLI_DEFAULT_FREQUENCY);
	assert_true(o.kernel);
	assert_null(o.output);
	assert_true(o.duration == 0);
	/* 2 s of 2 KiB records at 99 Hz: 396 KiB, a power of two */
	assert_int_equal(o.ring_kib, 512);
	assert_int_equal(o.status, -1);
	/* by the rate: 999 Hz, 10 Hz, and --off-cpu's 2000 waits a second */
	assert_int_equal(parse(&o, "--pid", "42", "-F", "999", NULL), 0);
	assert_int_equal(o.ring_kib, 4096);
	assert_int_equal(parse(&o, "--pid", "42", "-F", "10", NULL), 0);
	assert_int_equal(o.ring_kib, CLI_RING_AUTO_MIN_KIB);
	assert_int_equal(parse(&o, "--pid", "42", "--off-cpu", NULL), 0);
	assert_int_equal(o.ring_kib, CLI_RING_AUTO_MAX_KIB);
	/* given, as given */
	assert_int_equal(parse(&o, "--pid", "42", "-F", "999", "--ring-size", "64", NULL), 0);
	assert_int_equal(o.ring_kib, 64);
}

static void cli__parse__all_options__set(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "-p", "7", "-F", "999", "-d", "2.5", "-o", "x.pb.gz",
			       "--no-kernel", "--ring-size", "1024", "--max-stacks", "1000", "-v",
			       "-v", "--no-status", NULL),
			 0);
	assert_int_equal(o.pid, 7);
	assert_int_equal(o.frequency, 999);
	assert_true(o.duration == 2.5);
	assert_string_equal(o.output, "x.pb.gz");
	assert_false(o.kernel);
	assert_int_equal(o.ring_kib, 1024);
	assert_int_equal(o.max_stacks, 1000);
	assert_int_equal(o.verbose, 2);
	assert_int_equal(o.status, 0);
}

static void cli__parse__bad_values__one_line_error(void **state)
{
	static const char *const cases[][3] = {
		{"--pid", "abc", "'abc' is not a process id"},
		{"--pid", "0", "'0' is not a process id"},
		{"--pid", "-3", "'-3' is not a process id"},
		{"--pid", "12x", "'12x' is not a process id"},
		{"--pid", "99999999999", "is not a process id"},
		{"--frequency", "0", "'0' is not a whole number of Hz"},
		{"--frequency", "100001", "'100001' is not"},
		{"--frequency", "1.5", "'1.5' is not"},
		{"--duration", "0", "'0' is not a number of seconds"},
		{"--duration", "-1", "'-1' is not"},
		{"--duration", "nan", "'nan' is not"},
		{"--duration", "1e12", "'1e12' is not"},
		{"--ring-size", "100", "'100' is not a power of two"},
		{"--ring-size", "32", "'32' is not"},
		{"--max-stacks", "1", "'1' is not"},
		{"--output", "", "'' is not a file name"},
	};
	struct collector_opts o;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *arg1 = (char *)cases[i][0], *arg2 = (char *)cases[i][1];
		int rc = strcmp(arg1, "--pid") ? parse(&o, "--pid", "1", arg1, arg2, NULL)
					       : parse(&o, arg1, arg2, NULL);

		assert_int_equal(rc, -EINVAL);
		if (!strstr(err_buf, cases[i][2]))
			fail_msg("%s %s: error '%s' lacks '%s'", arg1, arg2, err_buf, cases[i][2]);
		/* exactly one line */
		assert_non_null(strchr(err_buf, '\n'));
		assert_null(strchr(strchr(err_buf, '\n') + 1, '\n'));
	}
}

static void cli__parse__missing_pid__error(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--frequency", "10", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--pid PID or --all is required"));
}

static void cli__parse__pid_twice__error_names_both(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--pid", "10", "-p", "20", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--pid given twice (10 and 20)"));
}

static void cli__parse__unwind__modes_and_memory(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--pid", "1", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_MODE_AUTO);
	assert_int_equal(o.unwind_mib, CLI_DEFAULT_UNWIND_MIB);
	assert_int_equal(parse(&o, "--pid", "1", "--unwind", "dwarf", "--unwind-memory", "8", NULL),
			 0);
	assert_int_equal(o.unwind, UNWIND_MODE_DWARF);
	assert_int_equal(o.unwind_mib, 8);
	assert_int_equal(parse(&o, "--pid", "1", "--unwind", "fp", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_MODE_FP);
	assert_int_equal(parse(&o, "--pid", "1", "--unwind", "lbr", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--unwind: 'lbr' is not auto, dwarf or fp"));
	assert_int_equal(parse(&o, "--pid", "1", "--unwind-memory", "7", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--unwind-memory: '7'"));
}

static void cli__parse__unknown_and_extra__error(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--pid", "1", "--nope", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "unknown option '--nope'"));
	assert_int_equal(parse(&o, "--pid", "1", "stray", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "unexpected argument 'stray'"));
	assert_int_equal(parse(&o, "--pid", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "needs a value"));
}

static void cli__parse__help__explains_every_option(void **state)
{
	static const char *const opts[] = {
		"--pid",       "--frequency",	  "--duration", "--output",   "--no-kernel",
		"--ring-size", "--max-stacks",	  "--btf",	"--verbose",  "--status",
		"--unwind",    "--unwind-memory", "default 99", "--interval", "--output-dir",
		"--max-files", "--drain-threads"};
	struct collector_opts o;
	size_t i;

	assert_int_equal(parse(&o, "--help", NULL), CLI_EXIT_OK);
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strstr(out_buf, opts[i]))
			fail_msg("--help does not mention %s", opts[i]);
	assert_int_equal(parse(&o, "--version", NULL), CLI_EXIT_OK);
	assert_non_null(strstr(out_buf, "ctxprof collector"));
}

static void cli__parse__metrics_addr__host_port_or_error(void **state)
{
	static const char *const caps[] = {"CAP_BPF",
					   "CAP_PERFMON",
					   "CAP_SYSLOG",
					   "CAP_SETPCAP",
					   "CAP_SYS_PTRACE",
					   "CAP_DAC_READ_SEARCH",
					   "CAP_CHECKPOINT_RESTORE",
					   "--metrics-addr",
					   "--health-addr"};
	struct collector_opts o;
	size_t i;

	assert_int_equal(parse(&o, "--all", NULL), 0);
	assert_null(o.metrics_addr);
	assert_int_equal(parse(&o, "--all", "--metrics-addr", ":9464", NULL), 0);
	assert_string_equal(o.metrics_addr, ":9464");
	assert_int_equal(parse(&o, "--all", "--metrics-addr", "9464", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--metrics-addr: '9464' is not HOST:PORT or :PORT"));
	assert_null(o.health_addr);
	assert_int_equal(parse(&o, "--all", "--health-addr", ":9465", NULL), 0);
	assert_string_equal(o.health_addr, ":9465");
	assert_int_equal(parse(&o, "--all", "--health-addr", "x", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--health-addr: 'x' is not HOST:PORT or :PORT"));
	/* --help names what start-up needs and what is kept */
	assert_int_equal(parse(&o, "--help", NULL), CLI_EXIT_OK);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (!strstr(out_buf, caps[i]))
			fail_msg("--help does not mention %s", caps[i]);
}

static void cli__parse__continuous_mode__options_and_conflicts(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--pid", "1", "--interval", "5", "--output-dir", "/tmp",
			       "--max-files", "3", "--drain-threads", "2", NULL),
			 0);
	assert_true(o.interval == 5);
	assert_string_equal(o.output_dir, "/tmp");
	assert_int_equal(o.max_files, 3);
	assert_int_equal(o.drain_threads, 2);
	assert_int_equal(parse(&o, "--pid", "1", NULL), 0);
	assert_int_equal(o.max_files, CLI_DEFAULT_MAX_FILES);
	assert_int_equal(o.drain_threads, CLI_DEFAULT_DRAIN_THREADS);
	assert_int_equal(parse(&o, "--pid", "1", "--interval", "5", "-o", "x", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "with --interval use --output-dir"));
	assert_int_equal(parse(&o, "--pid", "1", "--output-dir", "/tmp", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--output-dir is for --interval"));
	assert_int_equal(parse(&o, "--pid", "1", "--interval", "0.5", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--pid", "1", "--drain-threads", "0", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--pid", "1", "--drain-threads", "65", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--pid", "1", "--max-files", "-1", NULL), -EINVAL);
}

static void cli__parse__push__options_defaults_and_conflicts(void **state)
{
	struct collector_opts o;

	assert_int_equal(parse(&o, "--all", "--push", "https://u:secret@store:4040", NULL), 0);
	assert_string_equal(o.push_url, "https://u:secret@store:4040");
	/* a push an interval: Pyroscope's agents send every 10-15 s */
	assert_true(o.interval == CLI_PUSH_INTERVAL);
	assert_int_equal(o.push_spool_mib, PUSH_DEFAULT_SPOOL_MIB);
	assert_int_equal(o.push_flush_s, CLI_PUSH_FLUSH_S);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--interval", "60",
			       "--push-token-file", "/t", "--push-tenant", "a", "--push-spool", "8",
			       "--push-timeout", "5", "--push-flush", "0", NULL),
			 0);
	assert_true(o.interval == 60);
	assert_int_equal(o.push_spool_mib, 8);
	assert_int_equal(o.push_timeout_s, 5);
	assert_int_equal(o.push_flush_s, 0);
	assert_int_equal(parse(&o, "--all", "--push-config", "/etc/ctxprof/push", NULL), 0);
	assert_string_equal(o.push_config, "/etc/ctxprof/push");

	/* a URL refused is not echoed: it may hold a password */
	assert_int_equal(parse(&o, "--all", "--push", "ftp://u:hunter2@h", NULL), -EINVAL);
	assert_null(strstr(err_buf, "hunter2"));
	assert_int_equal(parse(&o, "--all", "--push-token-file", "/t", NULL), -EINVAL);
	assert_non_null(strstr(err_buf, "--push-token-file is for --push"));
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--push-token-file", "/t",
			       "--push-user", "u", NULL),
			 -EINVAL);
	assert_int_equal(
		parse(&o, "--all", "--push", "http://h", "--push-password-file", "/p", NULL),
		-EINVAL);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--push-config", "/d", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "-o", "x.pb.gz", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--timelines", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--push-spool", "0", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, "--all", "--push", "http://h", "--push-timeout", "601", NULL),
			 -EINVAL);
}

static void cli__parse__max_stacks__by_the_rate_unless_given(void **state)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	size_t want = CLI_MIN_MAX_STACKS;
	struct collector_opts o;

	/* 2 x CPUs x 99 Hz x 30 s (1.5 intervals of 20 s), a power of two */
	while (want < (size_t)(2 * cpus * 99 * 30) && want < CLI_DEFAULT_MAX_STACKS)
		want *= 2;
	assert_int_equal(parse(&o, "--all", "--interval", "20", NULL), 0);
	assert_int_equal(o.max_stacks, want);
	assert_true(o.max_stacks < CLI_DEFAULT_MAX_STACKS || cpus > 32);
	/* an unbounded run: the most */
	assert_int_equal(parse(&o, "--pid", "42", NULL), 0);
	assert_int_equal(o.max_stacks, CLI_DEFAULT_MAX_STACKS);
	/* a short one: at least the floor */
	assert_int_equal(parse(&o, "--pid", "42", "--duration", "0.01", NULL), 0);
	assert_int_equal(o.max_stacks, CLI_MIN_MAX_STACKS);
	assert_int_equal(parse(&o, "--all", "--interval", "20", "--max-stacks", "1000", NULL), 0);
	assert_int_equal(o.max_stacks, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli__parse__pid_only__defaults),
		cmocka_unit_test(cli__parse__all_options__set),
		cmocka_unit_test(cli__parse__bad_values__one_line_error),
		cmocka_unit_test(cli__parse__missing_pid__error),
		cmocka_unit_test(cli__parse__pid_twice__error_names_both),
		cmocka_unit_test(cli__parse__unwind__modes_and_memory),
		cmocka_unit_test(cli__parse__unknown_and_extra__error),
		cmocka_unit_test(cli__parse__help__explains_every_option),
		cmocka_unit_test(cli__parse__continuous_mode__options_and_conflicts),
		cmocka_unit_test(cli__parse__push__options_defaults_and_conflicts),
		cmocka_unit_test(cli__parse__max_stacks__by_the_rate_unless_given),
		cmocka_unit_test(cli__parse__metrics_addr__host_port_or_error),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
