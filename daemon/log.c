// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "log"
#include "log.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <xdp/libxdp.h>

static const char *log_ident = "l2cc";
/* l2ccd: the daemon this thread is running right now, which tags its lines. */
static __thread const char *log_thread_ident;
static int log_level = LOG_LVL_INFO;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

static void log_vmsg(int level, const char *subsys, const char *fmt, va_list ap)
{
	struct timespec ts;
	char line[1024];
	int n;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "%s[%lld.%03ld] %s %s: ",
		     log_thread_ident ? log_thread_ident : log_ident,
		     (long long)ts.tv_sec, ts.tv_nsec / 1000000,
		     level_names[level < 0 ? 0 : level > 3 ? 3 : level], subsys);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	/* One write per line keeps lines whole when several daemons share a log. */
	n = strlen(line);
	if (n && line[n - 1] != '\n' && (size_t)n < sizeof(line) - 1) {
		line[n++] = '\n';
		line[n] = '\0';
	}
	fputs(line, stderr);
}

void log_msg(int level, const char *subsys, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, subsys, fmt, ap);
	va_end(ap);
}

/* libbpf and libxdp are noisy while probing features; their warnings only
 * show with -v, their debug output only with -vv. Our own errors say what failed. */
static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	int level = lvl == LIBBPF_WARN ? LOG_LVL_INFO : LOG_LVL_DEBUG;

	if (level > log_level)
		return 0;
	log_vmsg(level, "libbpf", fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level lvl, const char *fmt, va_list ap)
{
	int level = lvl == LIBXDP_WARN ? LOG_LVL_INFO : LOG_LVL_DEBUG;

	if (level > log_level)
		return 0;
	log_vmsg(level, "libxdp", fmt, ap);
	return 0;
}

void log_init(const char *ident, int level)
{
	if (ident)
		log_ident = ident;
	log_level = level;
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
	setvbuf(stderr, NULL, _IOLBF, 0);
}

void log_set_level(int level) { log_level = level; }
void log_set_thread_ident(const char *ident) { log_thread_ident = ident; }
int log_get_level(void) { return log_level; }

bool log_ratelimit_ok(struct log_ratelimit *rl)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (!rl->init) {
		rl->init = true;
		rl->tokens = 10;
		rl->last_ns = now;
	}
	if (now - rl->last_ns >= 1000000000ull) {
		uint64_t add = (now - rl->last_ns) / 1000000000ull;

		rl->tokens = rl->tokens + add > 10 ? 10 : rl->tokens + add;
		rl->last_ns = now;
		if (rl->suppressed) {
			log_msg(LOG_LVL_WARN, "log", "%u messages suppressed\n", rl->suppressed);
			rl->suppressed = 0;
		}
	}
	if (!rl->tokens) {
		rl->suppressed++;
		return false;
	}
	rl->tokens--;
	return true;
}
