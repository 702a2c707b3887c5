// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "tseries"
#include "tseries.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct tseries {
	int fd;
};

int tseries_open(struct tseries **out, const char *path)
{
	struct tseries *ts;
	int ret;

	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return -ENOMEM;
	ts->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (ts->fd < 0) {
		ret = -errno;
		pr_err("open %s: %s\n", path, strerror(errno));
		free(ts);
		return ret;
	}
	*out = ts;
	return 0;
}

int tseries_write_line(struct tseries *ts, const char *json)
{
	/* writev: one system call, so O_APPEND places the whole line at once. */
	struct iovec iov[2] = {
		{ .iov_base = (void *)json, .iov_len = strlen(json) },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	ssize_t n;

	do
		n = writev(ts->fd, iov, 2);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != iov[0].iov_len + 1)
		return -EIO;	/* disk full mid-line; retrying would split it */
	return 0;
}

void tseries_close(struct tseries *ts)
{
	if (!ts)
		return;
	close(ts->fd);
	free(ts);
}
