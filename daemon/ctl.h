/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control socket server shared by switchd and hostd.
 *
 * Unix socket protocol: the client sends one line "COMMAND [ARGS]\n" (at most
 * CTL_MAX_REQUEST bytes before the newline; EOF also ends the line), the
 * server writes one reply (a JSON document followed by '\n') and closes the
 * connection. The built-in command "help" lists the registered commands:
 * {"commands":[{"name":..,"help":..,"access":"read"|"change"},...]}.
 * Failures are {"error":"..."}.
 *
 * Who may ask what (SO_PEERCRED, SO_PEERGROUPS of the unix peer, against
 * the socket file's owner and group as they are at connect time):
 * root and the socket's owner may run every command; a member of the
 * socket's group (primary or supplementary) only the read-only ones
 * (CTL_READS); anyone else nothing, not even help (only a socket whose
 * mode was opened up lets them connect at all). A state-changing command
 * that runs is logged with the peer's uid and pid; a refusal is logged
 * (rate-limited). The HTTP listener serves its one read-only command to
 * whoever reaches the address: bind it to loopback (the default) or a
 * management address.
 *
 * Optionally a TCP listener serves the output of one command (the Prometheus
 * metrics) as text/plain; version=0.0.4 for any GET path.
 *
 * Clients never make the daemon wait. Each is a small state machine driven
 * by the daemon's event loop (ctl_attach): its request is read as it
 * arrives, in as many pieces as it comes in; when the line (or the HTTP
 * header) is complete the handler builds the whole reply in one call; the
 * reply goes out as fast as the client takes it, and whatever the socket
 * does not accept at once is copied aside and sent when the socket is
 * writable again. A client that moves no byte for the idle timeout is
 * closed by a loop timer. The number of clients and the reply bytes held
 * for slow readers are capped; a client over either cap gets a short
 * "busy" error at once.
 */
#ifndef L2CC_CTL_H
#define L2CC_CTL_H

#include "json.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_MAX_REQUEST 4096	/* bytes per request line, newline excluded */
/* Defaults of struct ctl_limits. */
#define CTL_MAX_CLIENTS 64
#define CTL_IDLE_MS 2000
#define CTL_MAX_INFLIGHT (16u << 20)

struct ctl;
struct loop;

struct ctl_limits {
	unsigned max_clients;	/* connected at once, unix and HTTP together */
	unsigned idle_ms;	/* a client that moves no byte for this long is closed */
	/* Reply bytes held for clients that have not taken them yet. While
	 * at least this much is held, new requests get a "busy" error; so
	 * the most ever held is this plus one reply. */
	size_t max_inflight;
};

struct ctl_stats {
	unsigned clients;	/* connected now */
	size_t inflight;	/* reply bytes held for slow readers */
	uint64_t accepted;	/* connections taken on (rejected ones included) */
	uint64_t replies;	/* replies written out in full */
	uint64_t rejected;	/* turned away: too many clients, or too much held */
	uint64_t timeouts;	/* closed after idle_ms without progress */
};

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
 * Also listen on TCP addr_port: "127.0.0.1:9101", "[::1]:9101", "host:9101",
 * ":9101" or "9101" (loopback: 127.0.0.1), or "*:9101" (all addresses, IPv6
 * and IPv4): what it serves is open to whoever reaches the address, so
 * every address takes the explicit "*". Port 0 picks a free port, see
 * ctl_http_port(). Every GET (or HEAD) is answered with the output of the
 * registered command cmd, looked up at request time. At most one listener;
 * -EBUSY for a second one, -EINVAL for a malformed addr_port.
 */
int ctl_listen_http(struct ctl *c, const char *addr_port, const char *cmd);

/* The bound TCP port of the HTTP listener, or -ENOENT if there is none. */
int ctl_http_port(const struct ctl *c);

/* The bound address of the HTTP listener, "127.0.0.1:9101" or "[::]:9101",
 * in buf; -ENOENT if there is none. */
int ctl_http_addr(const struct ctl *c, char *buf, size_t len);

/* What a command does to the daemon, for who may run it (above). */
enum ctl_access {
	CTL_CHANGES = 0,	/* changes state (mark, set-rate, reload, cp): owner/root */
	CTL_READS,		/* only reads: also the socket's group */
};

/*
 * Add a command. name is one word of printable characters (at most 63
 * bytes); help is a one-line description. Strings are copied. Returns
 * -EEXIST for a name already taken (including "help"), -EINVAL for a bad name.
 * ctl_register() adds a state-changing one (the safe default).
 */
int ctl_register_access(struct ctl *c, const char *cmd, const char *help,
			enum ctl_access access, ctl_handler_fn fn, void *ctx);
int ctl_register(struct ctl *c, const char *cmd, const char *help,
		 ctl_handler_fn fn, void *ctx);

/*
 * Serve from the event loop l: the listening sockets (and an HTTP listener
 * added later), every client and the idle timer live in it from now on.
 * Once only (-EBUSY); ctl_destroy() before loop_destroy(). Client trouble
 * never fails anything: the client is closed, with a debug message (a
 * warning, rate-limited, when clients are turned away).
 */
int ctl_attach(struct ctl *c, struct loop *l);

/* Replace the defaults (CTL_MAX_CLIENTS, CTL_IDLE_MS, CTL_MAX_INFLIGHT);
 * a zero field keeps its current value. Applies to clients from now on. */
void ctl_set_limits(struct ctl *c, const struct ctl_limits *lim);

void ctl_get_stats(const struct ctl *c, struct ctl_stats *st);

/* Close every client and listener (out of the loop first) and unlink the
 * socket file if it is still ours. NULL is ok. */
void ctl_destroy(struct ctl *c);

#endif
