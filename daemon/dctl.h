/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A daemon's observability, set up the one way both daemons share: the
 * control socket with its commands (a table), the Prometheus listener that
 * serves the `metrics` command, both attached to the event loop, and the
 * JSON-lines time series.
 */
#ifndef L2CC_DCTL_H
#define L2CC_DCTL_H

#include "ctl.h"

struct loop;
struct tseries;

/* A row of a daemon's command table: who may run it is by access (ctl.h:
 * CTL_READS for the socket's group too, CTL_CHANGES for root and the
 * socket's owner only, and logged). */
struct dctl_cmd {
	const char *name;
	enum ctl_access access;
	const char *help;
	ctl_handler_fn fn;
};

struct dctl_cfg {
	const char *ctl_socket;         /* required */
	const char *metrics_listen;     /* "" = none; serves the `metrics` command */
	const char *stats_file;         /* "" = no time series */
	uint64_t stats_file_max;        /* its bound (tseries.h); 0 = none */
	const struct dctl_cmd *cmds;
	size_t ncmds;
	void *ctx;                      /* every handler's */
};

/* 0, or -errno (logged with what failed); on failure whatever was made is
 * left in *ctl and *ts for dctl_close(). */
int dctl_open(const struct dctl_cfg *c, struct loop *loop, struct ctl **ctl, struct tseries **ts);
/* Close both (either may be NULL) and set them NULL. */
void dctl_close(struct ctl **ctl, struct tseries **ts);

/* The `reload` command's reply, both daemons': ret and why from the
 * daemon's reload (what SIGHUP does), a refusal's reason included. */
int dctl_reload_reply(struct jw *w, int ret, const char *why);

#endif
