/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control socket server shared by switchd and hostd.
 *
 * Unix socket protocol: the client sends one line "COMMAND [ARGS]\n" (at most
 * CTL_MAX_REQUEST bytes before the newline; EOF also ends the line), the
 * server writes one reply (a JSON document followed by '\n') and closes the
 * connection. The built-in command "help" lists the registered commands:
 * {"commands":[{"name":..,"help":..},...]}. Failures are {"error":"..."}.
 *
 * Optionally a TCP listener serves the output of one command (the Prometheus
 * metrics) as text/plain; version=0.0.4 for any GET path.
 *
 * Clients are served synchronously from the daemon's event loop, with short
 * deadlines so a slow or silent client costs at most a bounded stall
 * (CTL_READ_MS to read the request, CTL_WRITE_MS to write the reply). This is
 * a deliberately simple design for a low-rate control path; it would be the
 * wrong one for anything with many clients.
 */
#ifndef L2CC_CTL_H
#define L2CC_CTL_H

#include "json.h"

#define CTL_MAX_REQUEST 4096	/* bytes per request line, newline excluded */
#define CTL_READ_MS 100
#define CTL_WRITE_MS 1000

struct ctl;

/*
 * A command handler. args is the rest of the line after the command name and
 * its separating blanks ("" if none; trailing blanks and "\r" stripped).
 * out is empty on entry.
 *
 * Error convention: return 0 and the reply is whatever the handler wrote to
 * out ("{}" if nothing; {"error":"Cannot allocate memory"} if out->err was
 * set). Return a negative errno and whatever the handler wrote is discarded;
 * the reply is {"error":"<strerror(-ret)>"} -- unless the handler wrote its
 * own message with ctl_errorf(), which is then sent instead.
 */
typedef int (*ctl_handler_fn)(struct jw *out, const char *args, void *ctx);

/*
 * Replace anything in out with {"error":"<formatted message>"} and return
 * err, so a handler can write: return ctl_errorf(out, -ENOENT, "no port %s", a);
 */
int ctl_errorf(struct jw *out, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Listen on the unix stream socket at path (non-blocking, close-on-exec,
 * mode 0660). A missing parent directory is created (0755). A socket file
 * left behind by a killed daemon (nothing answers a connect()) is replaced;
 * returns -EADDRINUSE if a live daemon answers, -EEXIST if path exists and is
 * not a socket, another negative errno on other failures.
 */
int ctl_create(struct ctl **out, const char *path);

/*
 * Also listen on TCP addr_port: "127.0.0.1:9101", "[::1]:9101", "host:9101"
 * or ":9101" (all addresses, IPv6 and IPv4). Port 0 picks a free port, see
 * ctl_http_port(). Every GET (or HEAD) is answered with the output of the
 * registered command cmd, looked up at request time. At most one listener;
 * -EBUSY for a second one, -EINVAL for a malformed addr_port.
 */
int ctl_listen_http(struct ctl *c, const char *addr_port, const char *cmd);

/* The bound TCP port of the HTTP listener, or -ENOENT if there is none. */
int ctl_http_port(const struct ctl *c);

/*
 * Add a command. name is one word of printable characters (at most 63
 * bytes); help is a one-line description. Strings are copied. Returns
 * -EEXIST for a name already taken (including "help"), -EINVAL for a bad name.
 */
int ctl_register(struct ctl *c, const char *cmd, const char *help,
		 ctl_handler_fn fn, void *ctx);

/*
 * Store the listening fds (the unix socket, then the HTTP one if any) in fds
 * for the daemon's event loop. Returns how many were stored, or -ENOSPC if
 * max is too small to hold them all.
 */
int ctl_fds(struct ctl *c, int *fds, int max);

/* Serve the clients waiting on listening fd (call when it is readable).
 * Unknown fds are ignored. Never fails: client trouble is logged at debug. */
void ctl_handle(struct ctl *c, int fd);

/* Close everything and unlink the socket file if it is still ours. NULL is ok. */
void ctl_destroy(struct ctl *c);

#endif
