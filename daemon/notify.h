/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * systemd service notification (sd_notify protocol) without libsystemd:
 * one datagram to the socket named by $NOTIFY_SOCKET, which may be a path or
 * an abstract socket written with a leading '@'.
 */
#ifndef L2CC_NOTIFY_H
#define L2CC_NOTIFY_H

/*
 * Send state, e.g. "READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...".
 * Returns 0 (doing nothing) when NOTIFY_SOCKET is unset, so daemons call it
 * unconditionally; -EINVAL for an unusable NOTIFY_SOCKET, else -errno.
 */
int notify_send(const char *state);

/* notify_send() of a formatted state, e.g. notify_sendf("STATUS=%u ports", n). */
int notify_sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
