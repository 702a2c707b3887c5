// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "tseries"
#include "tseries.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct tseries {
	int fd;
	char *path;
	uint64_t max, size, rotations;
};

/* O_NOFOLLOW: a symbolic link at path fails with ELOOP instead of being
 * written through. O_NONBLOCK so that a FIFO planted there cannot block
 * the open (it is refused below; regular files ignore the flag). */
static int tseries_open_fd(const char *path, uint64_t *size)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err;
	}
	*size = (uint64_t)st.st_size;
	return fd;
err:
	close(fd);
	return ret;
}

int tseries_open(struct tseries **out, const char *path, uint64_t max_bytes)
{
	struct tseries *ts;
	int ret;

	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return -ENOMEM;
	ts->path = strdup(path);
	if (!ts->path) {
		ret = -ENOMEM;
		goto err_free;
	}
	ts->max = max_bytes;
	ts->fd = tseries_open_fd(path, &ts->size);
	if (ts->fd < 0) {
		ret = ts->fd;
		pr_err("open %s: %s\n", path, ret == -EINVAL ? "not a regular file" :
		       ret == -ELOOP ? "a symbolic link (not followed)" : strerror(-ret));
		goto err_free;
	}
	*out = ts;
	return 0;
err_free:
	free(ts->path);
	free(ts);
	return ret;
}

/* PATH -> PATH.1 and a new PATH. rename() replaces PATH.1 itself, never
 * what a link there points to. On failure the old file stays in use. */
static int tseries_rotate(struct tseries *ts)
{
	char old[4096];
	uint64_t size;
	int fd;

	if (snprintf(old, sizeof(old), "%s.1", ts->path) >= (int)sizeof(old))
		return -ENAMETOOLONG;
	if (rename(ts->path, old) < 0)
		return -errno;
	fd = tseries_open_fd(ts->path, &size);
	if (fd < 0)
		return fd;
	close(ts->fd);
	ts->fd = fd;
	ts->size = size;
	ts->rotations++;
	return 0;
}

int tseries_write_line(struct tseries *ts, const char *json)
{
	/* writev: one system call, so O_APPEND places the whole line at once. */
	struct iovec iov[2] = {
		{ .iov_base = (void *)json, .iov_len = strlen(json) },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	size_t len = iov[0].iov_len + 1;
	ssize_t n;
	int ret;

	if (ts->max && ts->size && ts->size + len > ts->max) {
		ret = tseries_rotate(ts);
		if (ret)
			pr_warn_rl("rotate %s: %s (writing on)\n", ts->path, strerror(-ret));
	}
	do
		n = writev(ts->fd, iov, 2);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	ts->size += (size_t)n;
	if ((size_t)n != len)
		return -EIO;	/* disk full mid-line; retrying would split it */
	return 0;
}

uint64_t tseries_rotations(const struct tseries *ts)
{
	return ts->rotations;
}

void tseries_close(struct tseries *ts)
{
	if (!ts)
		return;
	close(ts->fd);
	free(ts->path);
	free(ts);
}
