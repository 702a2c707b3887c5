// SPDX-License-Identifier: BSD-2-Clause
/* The main loop both daemons run. */
#include "drun.h"
#include "log.h"
#include "loop.h"
#include "notify.h"

#include <signal.h>
#include <string.h>

/* While busy, how often to look at the control socket and signals. */
#define DRUN_CHECK_NS 100000

int drun_loop(const struct drun *r)
{
	uint64_t last_check = 0, last_work = 0;
	int err = 0;

	notify_send("READY=1");
	while (!*r->stop) {
		bool work = r->ops->poll(r->d);
		uint64_t now = *r->now, sig;

		if (work)
			last_work = now;
		else if (now - last_work < *r->busy_poll)
			work = true; /* spin a little longer: a frame is likely soon */

		/* Busy: go straight round again, looking at the control socket
		 * and signals only every 100 us (an epoll call per pass cost a
		 * third of the CPU). Idle: sleep until a frame, a control
		 * request or a timer (pacing, pause expiry, CNP/ACK...). */
		if (work && now - last_check < DRUN_CHECK_NS)
			continue;
		last_check = now;
		err = loop_run_once(r->loop, work ? 0 : r->ops->next_deadline(r->d));
		if (err < 0) {
			log_msg(LOG_LVL_ERR, r->args->prog, "event loop: %s\n", strerror(-err));
			break;
		}
		if (!work)
			(*r->wakeups)++;
		err = 0;
		sig = loop_take_signals(r->loop);
		if (sig & ((1ull << SIGTERM) | (1ull << SIGINT)))
			*r->stop = true;
		if (sig & (1ull << SIGHUP)) {
			notify_send("RELOADING=1");
			r->ops->reload(r->d, r->args);
			notify_send("READY=1");
		}
	}
	notify_send("STOPPING=1");
	log_msg(LOG_LVL_INFO, r->args->prog, "stopping\n");
	return err;
}

int drun_run(const struct drun_kind *k, void *cfg, const struct dcli_args *args)
{
	struct drun r = {};
	int err;

	err = k->start(cfg, args, &r);
	if (!err)
		err = drun_loop(&r);
	k->stop(&r);
	return err;
}
