// SPDX-License-Identifier: BSD-2-Clause
/* Interface settings given back after a crash: see ifsave.h. */
#define LOG_SUBSYS "ifsave"
#include "ifsave.h"
#include "log.h"
#include "xport.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static int ifsave_kind_path(const char *dir, const char *kind, const char *ifname, char *buf,
			    unsigned len)
{
	struct stat st;

	if (!*dir || !*ifname || strchr(ifname, '/'))
		return -EINVAL;
	if (stat("/proc/thread-self/ns/net", &st) < 0)
		return -errno;
	if ((unsigned)snprintf(buf, len, "%s/%s-%llu-%s", dir, kind, (unsigned long long)st.st_ino,
			       ifname) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int ifsave_path(const char *dir, const char *ifname, char *buf, unsigned len)
{
	return ifsave_kind_path(dir, "ipv6", ifname, buf, len);
}

/* This namespace's cookie; 0 where the kernel has none (before 5.14). */
static uint64_t ifsave_netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		cookie = 0;
	close(fd);
	return cookie;
}

static int ifsave_read_sysctl(const char *ifname)
{
	char path[96];
	FILE *f;
	int v, ret;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ret = fscanf(f, "%d", &v) == 1 && (v == 0 || v == 1) ? v : -EINVAL;
	fclose(f);
	return ret;
}

/* The value a killed predecessor saved for this interface, or -ENOENT. */
static int ifsave_load(const char *path, unsigned ifindex, uint64_t cookie, int max)
{
	unsigned long long c;
	unsigned idx;
	char buf[128];
	ssize_t n;
	int fd, v;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = '\0';
	if (sscanf(buf, "%d %u %llu", &v, &idx, &c) != 3 || v < 0 || v > max)
		return -EINVAL;
	if (idx != ifindex || c != cookie)
		return -ESTALE;
	return v;
}

/* Write the file whole or not at all (a temporary renamed over it). */
static int ifsave_store(const char *path, int v, unsigned ifindex, uint64_t cookie)
{
	char tmp[4200], line[96];
	int fd, n, ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%d %u %llu\n", v, ifindex, (unsigned long long)cookie);
	if (write(fd, line, (size_t)n) != n)
		ret = errno ? -errno : -EIO;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int ifsave_ipv6_off(const char *dir, const char *ifname)
{
	unsigned ifindex = if_nametoindex(ifname);
	uint64_t cookie = ifsave_netns_cookie();
	char path[4096];
	int cur, saved = -ENOENT, ret;

	cur = ifsave_read_sysctl(ifname);
	if (cur < 0)
		return cur;
	if (*dir && !ifsave_path(dir, ifname, path, sizeof(path))) {
		saved = ifsave_load(path, ifindex, cookie, 1);
		if (saved >= 0 && saved != cur)
			pr_info("%s: IPv6 was turned off by a run that did not stop cleanly; "
				"disable_ipv6 = %d is restored at stop (from %s)\n", ifname, saved, path);
		if (saved < 0) {
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				pr_warn("%s: %s; disable_ipv6 = %d is restored only at a clean stop\n",
					dir, strerror(errno), cur);
			else if ((ret = ifsave_store(path, cur, ifindex, cookie)))
				pr_warn("save %s: %s; disable_ipv6 = %d is restored only at a clean "
					"stop\n", path, strerror(-ret), cur);
		}
	}
	ret = xport_if_ipv6_disable(ifname, 1);
	if (ret < 0)
		return ret;
	return saved >= 0 ? saved : cur;
}

void ifsave_ipv6_restore(const char *dir, const char *ifname, int was)
{
	char path[4096];
	int ret;

	if (was < 0)
		return;
	ret = xport_if_ipv6_disable(ifname, was);
	if (ret < 0) {
		pr_warn("%s: restore disable_ipv6 = %d: %s\n", ifname, was, strerror(-ret));
		return;	/* the file stays: the next start restores it */
	}
	if (*dir && !ifsave_path(dir, ifname, path, sizeof(path)))
		unlink(path);
}

int ifsave_begin(const char *dir, const char *kind, const char *ifname, int cur, int max,
		 bool *from_crash)
{
	unsigned ifindex = if_nametoindex(ifname);
	uint64_t cookie = ifsave_netns_cookie();
	char path[4096];
	int saved, ret;

	*from_crash = false;
	ret = ifsave_kind_path(dir, kind, ifname, path, sizeof(path));
	if (ret)
		return ret;
	saved = ifsave_load(path, ifindex, cookie, max);
	if (saved >= 0) {
		*from_crash = true;
		return saved;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	ret = ifsave_store(path, cur, ifindex, cookie);
	return ret ? ret : cur;
}

int ifsave_peek(const char *dir, const char *kind, const char *ifname, int max)
{
	char path[4096];
	int ret = ifsave_kind_path(dir, kind, ifname, path, sizeof(path));

	return ret ? ret : ifsave_load(path, if_nametoindex(ifname), ifsave_netns_cookie(), max);
}

void ifsave_end(const char *dir, const char *kind, const char *ifname)
{
	char path[4096];

	if (*dir && !ifsave_kind_path(dir, kind, ifname, path, sizeof(path)))
		unlink(path);
}
