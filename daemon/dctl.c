// SPDX-License-Identifier: BSD-2-Clause
/* A daemon's control socket, metrics listener and time series: see dctl.h. */
#define LOG_SUBSYS "ctl"
#include "dctl.h"
#include "json.h"
#include "log.h"
#include "tseries.h"

#include <string.h>

int dctl_open(const struct dctl_cfg *c, struct loop *loop, struct ctl **ctl, struct tseries **ts)
{
	char addr[80];
	int err;

	err = ctl_create(ctl, c->ctl_socket);
	if (err) {
		pr_err("control socket %s: %s\n", c->ctl_socket, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < c->ncmds; i++) {
		err = ctl_register_access(*ctl, c->cmds[i].name, c->cmds[i].help,
					  c->cmds[i].access, c->cmds[i].fn, c->ctx);
		if (err) {
			pr_err("control command %s: %s\n", c->cmds[i].name, strerror(-err));
			return err;
		}
	}
	if (c->metrics_listen[0]) {
		err = ctl_listen_http(*ctl, c->metrics_listen, "metrics");
		if (err) {
			pr_err("metrics_listen %s: %s\n", c->metrics_listen, strerror(-err));
			return err;
		}
		if (!ctl_http_addr(*ctl, addr, sizeof(addr)))
			pr_info("metrics on http://%s/\n", addr);
	}
	err = ctl_attach(*ctl, loop);
	if (err)
		return err;
	if (c->stats_file[0]) {
		err = tseries_open(ts, c->stats_file, c->stats_file_max);
		if (err) {
			pr_err("stats_file %s: %s\n", c->stats_file, strerror(-err));
			return err;
		}
	}
	return 0;
}

void dctl_close(struct ctl **ctl, struct tseries **ts)
{
	if (*ts)
		tseries_close(*ts);
	*ts = NULL;
	if (*ctl)
		ctl_destroy(*ctl);
	*ctl = NULL;
}

int dctl_reload_reply(struct jw *w, int ret, const char *why)
{
	if (ret)
		return ctl_errorf(w, ret, "reload refused: %s", why);
	jw_obj_begin(w, NULL);
	jw_bool(w, "reloaded", true);
	jw_str(w, "message", why);
	jw_obj_end(w);
	return 0;
}
