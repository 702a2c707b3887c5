// SPDX-License-Identifier: BSD-2-Clause
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_send(const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *env = getenv("NOTIFY_SOCKET");
	socklen_t salen;
	size_t len;
	int fd, ret = 0;

	if (!env || !*env)
		return 0;
	len = strlen(env);
	if ((env[0] != '/' && env[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, env, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	/* Abstract names are exactly len bytes long, no terminator counted. */
	salen = offsetof(struct sockaddr_un, sun_path) + len + (env[0] == '/');

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int notify_sendf(const char *fmt, ...)
{
	char state[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(state, sizeof(state), fmt, ap);
	va_end(ap);
	return notify_send(state);
}
