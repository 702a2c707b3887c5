// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "ctl"
#include "ctl.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CTL_NAME_MAX 64
#define CTL_MAX_HTTP_REQUEST 8192
/* Clients served per wakeup: the rest wait for the next round of the event
 * loop so a burst of connections cannot monopolise it. */
#define CTL_ACCEPT_BURST 8
#define CTL_BACKLOG 16

struct ctl_cmd {
	char *name;
	char *help;
	ctl_handler_fn fn;
	void *ctx;
};

struct ctl {
	int fd;
	char *path;
	dev_t dev;		/* identity of our socket file, so destroy */
	ino_t ino;		/* never unlinks a successor's socket */
	int http_fd;
	int http_port;
	char *http_cmd;
	struct ctl_cmd *cmds;
	size_t ncmds, cmds_cap;
	struct jw out;		/* reused for every reply */
};

static int64_t ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ctl_errorf(struct jw *out, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jw_reset(out);
	jw_obj_begin(out, NULL);
	jw_str(out, "error", msg);
	jw_obj_end(out);
	return err;
}

static bool ctl_is_error_reply(struct jw *out)
{
	static const char prefix[] = "{\"error\":";

	return !out->err && out->len >= sizeof(prefix) - 1 &&
	       !memcmp(out->buf, prefix, sizeof(prefix) - 1);
}

/* ---- setup ------------------------------------------------------------- */

/* mkdir -p of path's directory part. */
static int ctl_mkdir_parent(const char *path)
{
	char *dir = strdup(path), *slash, *p;
	struct stat st;
	int ret = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		goto out;
	*slash = '\0';
	if (stat(dir, &st) == 0)
		goto out;
	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char save = *p;

		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			pr_err("create directory %s: %s\n", dir, strerror(errno));
			goto out;
		}
		*p = save;
		if (!save)
			break;
	}
out:
	free(dir);
	return ret;
}

/* 1 if something accepts connections at sa, 0 if nothing does, -errno. */
static int ctl_probe_live(const struct sockaddr_un *sa)
{
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	if (ret == 0 || errno == EAGAIN || errno == EINPROGRESS)
		ret = 1;	/* EAGAIN: alive, its backlog is just full */
	else if (errno == ECONNREFUSED || errno == ENOENT)
		ret = 0;
	else
		ret = -errno;
	close(fd);
	return ret;
}

static int ctl_bind_unix(int fd, const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	mode_t old;
	int ret, err, tries;

	for (tries = 0; tries < 3; tries++) {
		/* The umask makes the file 0660 from the start rather than
		 * after a window; the daemon is single-threaded. */
		old = umask(0117);
		ret = bind(fd, (const struct sockaddr *)sa, sizeof(*sa));
		err = errno;
		umask(old);
		if (ret == 0)
			return 0;
		if (err != EADDRINUSE) {
			pr_err("bind %s: %s\n", path, strerror(err));
			return -err;
		}
		if (lstat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile: try again */
			pr_err("stat %s: %s\n", path, strerror(errno));
			return -errno;
		}
		if (!S_ISSOCK(st.st_mode)) {
			pr_err("%s exists and is not a socket; not touching it\n", path);
			return -EEXIST;
		}
		ret = ctl_probe_live(sa);
		if (ret > 0) {
			pr_err("%s: another daemon is listening there\n", path);
			return -EADDRINUSE;
		}
		if (ret < 0) {
			pr_err("probe %s: %s\n", path, strerror(-ret));
			return ret;
		}
		pr_info("removing stale control socket %s\n", path);
		if (unlink(path) < 0 && errno != ENOENT) {
			pr_err("unlink %s: %s\n", path, strerror(errno));
			return -errno;
		}
	}
	pr_err("bind %s: %s\n", path, strerror(EADDRINUSE));
	return -EADDRINUSE;
}

int ctl_create(struct ctl **out, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl *c;
	struct stat st;
	int ret;

	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err("control socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->http_fd = -1;
	jw_init(&c->out);
	c->path = strdup(path);
	if (!c->path) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = ctl_mkdir_parent(path);
	if (ret)
		goto err_free;

	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		ret = -errno;
		pr_err("socket: %s\n", strerror(errno));
		goto err_free;
	}
	ret = ctl_bind_unix(c->fd, path, &sa);
	if (ret)
		goto err_close;
	if (stat(path, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
	}
	if (listen(c->fd, CTL_BACKLOG) < 0) {
		ret = -errno;
		pr_err("listen %s: %s\n", path, strerror(errno));
		goto err_unlink;
	}
	pr_debug("control socket %s\n", path);
	*out = c;
	return 0;

err_unlink:
	unlink(path);
err_close:
	close(c->fd);
err_free:
	free(c->path);
	free(c);
	return ret;
}

/* Split "host:port", "[v6]:port" or ":port"; host "" means any address. */
static int ctl_parse_addr(const char *s, char *host, size_t hostsz, char *port, size_t portsz)
{
	const char *colon, *h = s, *he;
	char *end;
	unsigned long p;

	if (s[0] == '[') {
		h = s + 1;
		he = strchr(h, ']');
		if (!he || he[1] != ':')
			return -EINVAL;
		colon = he + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		he = colon;
		if (memchr(s, ':', colon - s))
			return -EINVAL;		/* bare IPv6 needs brackets */
	}
	if ((size_t)(he - h) >= hostsz || strlen(colon + 1) >= portsz)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p > 65535)
		return -EINVAL;
	memcpy(host, h, he - h);
	host[he - h] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

static int ctl_tcp_listen(const struct sockaddr *sa, socklen_t len, bool dual)
{
	int fd, one = 1, zero = 0, ret;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A restarted daemon must not wait out TIME_WAIT of old scrapes. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (dual)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, sa, len) < 0 || listen(fd, CTL_BACKLOG) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int ctl_listen_http(struct ctl *c, const char *addr_port, const char *cmd)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[256], port[8];
	int fd = -EADDRNOTAVAIL, ret;

	if (c->http_fd >= 0)
		return -EBUSY;
	if (!addr_port || !cmd || !*cmd)
		return -EINVAL;
	ret = ctl_parse_addr(addr_port, host, sizeof(host), port, sizeof(port));
	if (ret) {
		pr_err("metrics address %s: expected HOST:PORT, [V6ADDR]:PORT or :PORT\n",
		       addr_port);
		return ret;
	}
	if (!*host) {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_addr = in6addr_any,
					   .sin6_port = htons(atoi(port)) };
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY),
					  .sin_port = htons(atoi(port)) };

		fd = ctl_tcp_listen((struct sockaddr *)&s6, sizeof(s6), true);
		if (fd == -EAFNOSUPPORT)	/* kernel without IPv6 */
			fd = ctl_tcp_listen((struct sockaddr *)&s4, sizeof(s4), false);
	} else {
		ret = getaddrinfo(host, port, &hints, &res);
		if (ret) {
			pr_err("metrics address %s: %s\n", addr_port, gai_strerror(ret));
			return -EINVAL;
		}
		for (ai = res; ai; ai = ai->ai_next) {
			fd = ctl_tcp_listen(ai->ai_addr, ai->ai_addrlen, false);
			if (fd >= 0)
				break;
		}
		freeaddrinfo(res);
	}
	if (fd < 0) {
		pr_err("listen on %s: %s\n", addr_port, strerror(-fd));
		return fd;
	}
	c->http_cmd = strdup(cmd);
	if (!c->http_cmd) {
		close(fd);
		return -ENOMEM;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0)
		c->http_port = ntohs(ss.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&ss)->sin6_port :
				     ((struct sockaddr_in *)&ss)->sin_port);
	c->http_fd = fd;
	pr_info("serving '%s' over HTTP on %s (port %d)\n", cmd, addr_port, c->http_port);
	return 0;
}

int ctl_http_port(const struct ctl *c)
{
	return c->http_fd >= 0 ? c->http_port : -ENOENT;
}

static struct ctl_cmd *ctl_find(struct ctl *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->ncmds; i++)
		if (!strcmp(c->cmds[i].name, name))
			return &c->cmds[i];
	return NULL;
}

int ctl_register(struct ctl *c, const char *cmd, const char *help,
		 ctl_handler_fn fn, void *ctx)
{
	struct ctl_cmd *cmds, *e;
	const char *p;

	if (!cmd || !*cmd || strlen(cmd) >= CTL_NAME_MAX || !fn)
		return -EINVAL;
	for (p = cmd; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return -EINVAL;
	if (!strcmp(cmd, "help") || ctl_find(c, cmd))
		return -EEXIST;
	if (c->ncmds == c->cmds_cap) {
		size_t cap = c->cmds_cap ? c->cmds_cap * 2 : 16;

		cmds = realloc(c->cmds, cap * sizeof(*cmds));
		if (!cmds)
			return -ENOMEM;
		c->cmds = cmds;
		c->cmds_cap = cap;
	}
	e = &c->cmds[c->ncmds];
	e->name = strdup(cmd);
	e->help = strdup(help ? help : "");
	if (!e->name || !e->help) {
		free(e->name);
		free(e->help);
		return -ENOMEM;
	}
	e->fn = fn;
	e->ctx = ctx;
	c->ncmds++;
	return 0;
}

int ctl_fds(struct ctl *c, int *fds, int max)
{
	int n = c->http_fd >= 0 ? 2 : 1;

	if (max < n)
		return -ENOSPC;
	fds[0] = c->fd;
	if (c->http_fd >= 0)
		fds[1] = c->http_fd;
	return n;
}

/* ---- serving ----------------------------------------------------------- */

typedef bool (*ctl_done_fn)(const char *buf, size_t len);

static bool ctl_line_done(const char *buf, size_t len)
{
	return memchr(buf, '\n', len) != NULL;
}

static bool ctl_http_done(const char *buf, size_t len)
{
	return memmem(buf, len, "\r\n\r\n", 4) || memmem(buf, len, "\n\n", 2);
}

/*
 * Read from non-blocking fd into buf (size cap, NUL-terminated) until done()
 * holds, EOF, or the deadline. Returns 0 with data, -EMSGSIZE when buf filled
 * up first, -ETIMEDOUT, -ENODATA on EOF before any byte, or -errno.
 */
static int ctl_read_req(int fd, char *buf, size_t cap, size_t *lenp, ctl_done_fn done, int ms)
{
	int64_t deadline = ctl_now_ms() + ms;
	size_t len = 0;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf + len, cap - 1 - len, MSG_DONTWAIT);
		if (n > 0) {
			len += n;
			buf[len] = '\0';
			*lenp = len;
			if (done(buf, len))
				return 0;
			if (len == cap - 1)
				return -EMSGSIZE;
			continue;
		}
		if (n == 0) {
			buf[len] = '\0';
			*lenp = len;
			return len ? 0 : -ENODATA;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;

		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - ctl_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send all of buf before deadline (absolute, ms); MSG_NOSIGNAL because a
 * client that went away must not kill the daemon with SIGPIPE. */
static int ctl_send_all(int fd, const char *buf, size_t len, int64_t deadline)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;

		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int64_t left = deadline - ctl_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Swallow what the client sent beyond the request before closing: closing a
 * TCP socket with unread data sends a reset that can destroy the reply. */
static void ctl_hangup(int fd)
{
	char sink[4096];
	int i;

	shutdown(fd, SHUT_WR);
	for (i = 0; i < 16; i++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

static void ctl_help(struct ctl *c, struct jw *out)
{
	size_t i;

	jw_obj_begin(out, NULL);
	jw_arr_begin(out, "commands");
	jw_obj_begin(out, NULL);
	jw_str(out, "name", "help");
	jw_str(out, "help", "list the commands");
	jw_obj_end(out);
	for (i = 0; i < c->ncmds; i++) {
		jw_obj_begin(out, NULL);
		jw_str(out, "name", c->cmds[i].name);
		jw_str(out, "help", c->cmds[i].help);
		jw_obj_end(out);
	}
	jw_arr_end(out);
	jw_obj_end(out);
}

/* Run one request line (NUL-terminated, len bytes, newline removed) into
 * c->out. Returns 0, or the negative errno of the failure. */
static int ctl_run(struct ctl *c, char *line, size_t len)
{
	struct jw *out = &c->out;
	struct ctl_cmd *cmd;
	char *name, *args, *end;
	int ret;

	jw_reset(out);
	if (memchr(line, '\0', len))
		return ctl_errorf(out, -EINVAL, "invalid request: contains a NUL byte");
	end = line + len;
	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	name = line + strspn(line, " \t");
	args = name + strcspn(name, " \t");
	if (*args)
		*args++ = '\0';
	args += strspn(args, " \t");
	if (!*name)
		return ctl_errorf(out, -EINVAL, "empty request, try help");
	if (!strcmp(name, "help")) {
		ctl_help(c, out);
		return out->err ? ctl_errorf(out, out->err, "%s", strerror(-out->err)) : 0;
	}
	cmd = ctl_find(c, name);
	if (!cmd)
		return ctl_errorf(out, -ENOENT, "unknown command \"%.64s\", try help", name);

	ret = cmd->fn(out, args, cmd->ctx);
	if (ret > 0)
		ret = 0;
	if (ret < 0 && !ctl_is_error_reply(out))
		return ctl_errorf(out, ret, "%s", strerror(-ret));
	if (ret == 0 && out->err)
		return ctl_errorf(out, out->err, "%s", strerror(-out->err));
	if (ret == 0 && out->len == 0)
		jw_raw(out, "{}");
	return ret;
}

static void ctl_serve_unix(struct ctl *c, int fd)
{
	char buf[CTL_MAX_REQUEST + 2];	/* line, newline, NUL */
	int64_t deadline;
	size_t len = 0;
	char *nl;
	int ret;

	ret = ctl_read_req(fd, buf, sizeof(buf), &len, ctl_line_done, CTL_READ_MS);
	if (ret == -EMSGSIZE) {
		ctl_errorf(&c->out, ret, "request longer than %d bytes", CTL_MAX_REQUEST);
		goto reply;
	}
	if (ret) {
		pr_debug("control client: %s\n", strerror(-ret));
		goto out;
	}
	nl = memchr(buf, '\n', len);
	if (nl) {
		*nl = '\0';
		len = nl - buf;
	}
	ret = ctl_run(c, buf, len);
	if (log_get_level() >= LOG_LVL_DEBUG) {
		char name[CTL_NAME_MAX];
		size_t i;

		/* Client bytes must not reach a terminal as escape sequences. */
		snprintf(name, sizeof(name), "%s", buf + strspn(buf, " \t"));
		for (i = 0; name[i]; i++)
			if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] >= 0x7f)
				name[i] = '?';
		pr_debug("request '%s': %s\n", name, ret ? strerror(-ret) : "ok");
	}
reply:
	if (!c->out.len || c->out.buf[c->out.len - 1] != '\n')
		jw_raw(&c->out, "\n");
	deadline = ctl_now_ms() + CTL_WRITE_MS;
	ret = ctl_send_all(fd, c->out.buf, c->out.len, deadline);
	if (ret)
		pr_debug("control reply: %s\n", strerror(-ret));
out:
	ctl_hangup(fd);
}

static void ctl_http_reply(int fd, int status, const char *reason, const char *ctype,
			   const char *body, size_t len, bool head)
{
	int64_t deadline = ctl_now_ms() + CTL_WRITE_MS;
	char hdr[256];
	int n, ret;

	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n", status, reason, ctype, len);
	ret = ctl_send_all(fd, hdr, n, deadline);
	if (!ret && !head)
		ret = ctl_send_all(fd, body, len, deadline);
	if (ret)
		pr_debug("http reply: %s\n", strerror(-ret));
}

static void ctl_serve_http(struct ctl *c, int fd)
{
	static const char text[] = "text/plain; charset=utf-8";
	char buf[CTL_MAX_HTTP_REQUEST];
	char cmd[CTL_NAME_MAX + 1];
	size_t len = 0;
	bool head;
	int ret;

	ret = ctl_read_req(fd, buf, sizeof(buf), &len, ctl_http_done, CTL_READ_MS);
	if (ret == -EMSGSIZE) {
		ctl_http_reply(fd, 431, "Request Header Fields Too Large", text, "", 0, false);
		goto out;
	}
	if (ret) {
		pr_debug("http client: %s\n", strerror(-ret));
		goto out;
	}
	head = !strncmp(buf, "HEAD ", 5);
	if (!head && strncmp(buf, "GET ", 4)) {
		static const char msg[] = "only GET is supported\n";

		ctl_http_reply(fd, 405, "Method Not Allowed", text, msg, sizeof(msg) - 1, false);
		goto out;
	}
	/* ctl_run() edits its line in place. */
	snprintf(cmd, sizeof(cmd), "%s", c->http_cmd);
	ret = ctl_run(c, cmd, strlen(cmd));
	if (ret) {
		jw_raw(&c->out, "\n");
		ctl_http_reply(fd, 500, "Internal Server Error", text,
			       c->out.buf, c->out.len, head);
		goto out;
	}
	ctl_http_reply(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
		       c->out.buf, c->out.len, head);
out:
	ctl_hangup(fd);
}

void ctl_handle(struct ctl *c, int fd)
{
	bool http = fd == c->http_fd && fd >= 0;
	int i, cfd;

	if (fd != c->fd && !http) {
		pr_debug("ctl_handle: fd %d is not ours\n", fd);
		return;
	}
	for (i = 0; i < CTL_ACCEPT_BURST; i++) {
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				pr_warn_rl("accept on control socket: %s\n", strerror(errno));
			return;
		}
		if (http)
			ctl_serve_http(c, cfd);
		else
			ctl_serve_unix(c, cfd);
	}
}

void ctl_destroy(struct ctl *c)
{
	struct stat st;
	size_t i;

	if (!c)
		return;
	if (c->http_fd >= 0)
		close(c->http_fd);
	if (c->fd >= 0) {
		close(c->fd);
		/* A successor may already have replaced a socket we were
		 * slow to release; its file is not ours to remove. */
		if (stat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
			unlink(c->path);
	}
	for (i = 0; i < c->ncmds; i++) {
		free(c->cmds[i].name);
		free(c->cmds[i].help);
	}
	free(c->cmds);
	free(c->http_cmd);
	free(c->path);
	jw_free(&c->out);
	free(c);
}
