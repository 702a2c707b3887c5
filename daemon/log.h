/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Leveled, printf-checked logging with a subsystem tag. Each .c file sets
 * LOG_SUBSYS before including this header. Anything that can fire per frame
 * must use the *_rl variants: a flood of malformed frames must not become a
 * flood of log lines.
 */
#ifndef L2CC_LOG_H
#define L2CC_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

#ifndef LOG_SUBSYS
#define LOG_SUBSYS "l2cc"
#endif

/* Set the program name (prefix) and verbosity; route libbpf and libxdp into us. */
void log_init(const char *ident, int level);
void log_set_level(int level);
/* The calling thread's lines carry ident instead (NULL: the process's again):
 * l2ccd sets the name of the daemon it is about to run. */
void log_set_thread_ident(const char *ident);
int log_get_level(void);

void log_msg(int level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Token bucket for rate-limited messages: a burst of 10, then 1 per second. */
struct log_ratelimit {
	uint64_t last_ns;
	uint32_t tokens;
	uint32_t suppressed;
	bool init;
};
bool log_ratelimit_ok(struct log_ratelimit *rl);

#define pr_err(fmt, ...)   log_msg(LOG_LVL_ERR, LOG_SUBSYS, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)  log_msg(LOG_LVL_WARN, LOG_SUBSYS, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  log_msg(LOG_LVL_INFO, LOG_SUBSYS, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_msg(LOG_LVL_DEBUG, LOG_SUBSYS, fmt, ##__VA_ARGS__)

#define pr_rl(lvl, fmt, ...) do {                                      \
	static struct log_ratelimit _rl;                                \
	if (log_get_level() >= (lvl) && log_ratelimit_ok(&_rl))         \
		log_msg(lvl, LOG_SUBSYS, fmt, ##__VA_ARGS__);           \
} while (0)
#define pr_warn_rl(fmt, ...)  pr_rl(LOG_LVL_WARN, fmt, ##__VA_ARGS__)
#define pr_info_rl(fmt, ...)  pr_rl(LOG_LVL_INFO, fmt, ##__VA_ARGS__)
#define pr_debug_rl(fmt, ...) pr_rl(LOG_LVL_DEBUG, fmt, ##__VA_ARGS__)

#endif
