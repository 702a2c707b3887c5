// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "ctl"
#include "ctl.h"
#include "log.h"
#include "loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define CTL_NAME_MAX 64
#define CTL_MAX_HTTP_REQUEST 8192
/* Connections taken per wakeup of a listener: the rest wait for the next
 * pass of the event loop, so a burst of them cannot monopolise it. */
#define CTL_ACCEPT_BURST 8
/* Reply bytes written to one client per wakeup, for the same reason. */
#define CTL_WRITE_BURST (256u << 10)
#define CTL_BACKLOG 16

struct ctl_cmd {
	char *name;
	char *help;
	enum ctl_access access;
	ctl_handler_fn fn;
	void *ctx;
};

/* What a client may run (ctl.h: who may ask what). */
enum ctl_may {
	CTL_MAY_NOTHING,
	CTL_MAY_READ,		/* the read-only commands */
	CTL_MAY_ALL,
};

/*
 * One connection. It reads its request into req until the line (the HTTP
 * header) is complete, then runs it; the reply is sent straight from the
 * shared jw and only what the socket does not take at once is copied to
 * pending. After the last byte, the connection is closed.
 */
struct ctl_client {
	struct ctl_client *prev, *next;	/* c->clients: by deadline, earliest first */
	struct ctl *c;
	int fd;
	bool http;
	bool writing;			/* the reply is out; pending holds the rest */
	enum ctl_may may;
	uid_t uid;			/* the unix peer's, for the log */
	pid_t pid;
	uint64_t deadline;		/* closed if nothing moves before */
	char *pending;
	size_t pending_len, pending_off;
	size_t len, cap;		/* request bytes so far, room in req (NUL included) */
	char req[];
};

struct ctl {
	int fd;
	char *path;
	dev_t dev;		/* identity of our socket file, so destroy */
	ino_t ino;		/* never unlinks a successor's socket */
	uid_t owner;		/* the socket file's, as made (until it is seen changed) */
	gid_t group;
	int http_fd;
	int http_port;
	char *http_cmd;
	struct ctl_cmd *cmds;
	size_t ncmds, cmds_cap;
	struct jw out;		/* every reply is built here */
	struct loop *loop;	/* NULL until ctl_attach */
	struct loop_timer *timer;	/* at the first client's deadline */
	struct ctl_client *head, *tail;
	uint64_t accept_paused_until;	/* 0: accepting */
	struct ctl_limits lim;
	struct ctl_stats st;
};

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

static void ctl_on_listen(void *ctx, int fd, uint32_t events);

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
	c->lim = (struct ctl_limits){ .max_clients = CTL_MAX_CLIENTS, .idle_ms = CTL_IDLE_MS,
				      .max_inflight = CTL_MAX_INFLIGHT };
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
		c->owner = st.st_uid;
		c->group = st.st_gid;
	} else {
		c->owner = geteuid();
		c->group = getegid();
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

/* Split "host:port", "[v6]:port", ":port" (host "": loopback) or "*:port"
 * (host "*": every address). */
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
		pr_err("metrics address %s: expected HOST:PORT, [V6ADDR]:PORT, :PORT (loopback) or "
		       "*:PORT (every address)\n", addr_port);
		return ret;
	}
	/* Loopback unless told otherwise: the metrics name flows and hosts,
	 * and nothing asks who scrapes them. */
	if (!*host)
		strcpy(host, "127.0.0.1");
	if (!strcmp(host, "*")) {
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
	if (c->loop) {
		ret = loop_add_fd(c->loop, fd, EPOLLIN, ctl_on_listen, c);
		if (ret) {
			pr_err("metrics listener into the event loop: %s\n", strerror(-ret));
			free(c->http_cmd);
			c->http_cmd = NULL;
			close(fd);
			return ret;
		}
	}
	c->http_fd = fd;
	pr_info("serving '%s' over HTTP on %s (port %d)\n", cmd, addr_port, c->http_port);
	return 0;
}

int ctl_http_addr(const struct ctl *c, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	if (c->http_fd < 0 || getsockname(c->http_fd, (struct sockaddr *)&ss, &sslen) < 0)
		return -ENOENT;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%d", a, c->http_port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%d", a, c->http_port);
	}
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
	return ctl_register_access(c, cmd, help, CTL_CHANGES, fn, ctx);
}

int ctl_register_access(struct ctl *c, const char *cmd, const char *help,
			enum ctl_access access, ctl_handler_fn fn, void *ctx)
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
	e->access = access;
	e->fn = fn;
	e->ctx = ctx;
	c->ncmds++;
	return 0;
}


/* ---- serving ----------------------------------------------------------- */

/* Out of descriptors: stop accepting for this long rather than spin on a
 * listener that stays readable. */
#define CTL_ACCEPT_PAUSE_NS 100000000ull

static bool ctl_line_done(const char *buf, size_t len)
{
	return memchr(buf, '\n', len) != NULL;
}

static bool ctl_http_done(const char *buf, size_t len)
{
	return memmem(buf, len, "\r\n\r\n", 4) || memmem(buf, len, "\n\n", 2);
}

static void ctl_help(struct ctl *c, struct jw *out)
{
	size_t i;

	jw_obj_begin(out, NULL);
	jw_arr_begin(out, "commands");
	jw_obj_begin(out, NULL);
	jw_str(out, "name", "help");
	jw_str(out, "help", "list the commands");
	jw_str(out, "access", "read");
	jw_obj_end(out);
	for (i = 0; i < c->ncmds; i++) {
		jw_obj_begin(out, NULL);
		jw_str(out, "name", c->cmds[i].name);
		jw_str(out, "help", c->cmds[i].help);
		jw_str(out, "access", c->cmds[i].access == CTL_READS ? "read" : "change");
		jw_obj_end(out);
	}
	jw_arr_end(out);
	jw_obj_end(out);
}

/* Client bytes must not reach a terminal (the log) as escape sequences. */
static void ctl_printable(char *dst, size_t n, const char *src)
{
	size_t i;

	snprintf(dst, n, "%s", src);
	for (i = 0; dst[i]; i++)
		if ((unsigned char)dst[i] < 0x20 || (unsigned char)dst[i] >= 0x7f)
			dst[i] = '?';
}

/* Run one request line (NUL-terminated, len bytes, newline removed) into
 * c->out for a client that may run may's commands (cl, for the log: NULL
 * for HTTP). Returns 0, or the negative errno of the failure. */
static int ctl_run(struct ctl *c, char *line, size_t len, enum ctl_may may,
		   const struct ctl_client *cl)
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
	if (may == CTL_MAY_NOTHING) {
		pr_warn_rl("control request from uid %u (pid %d) refused: not root, the socket's "
			   "owner (uid %u) or of its group (gid %u)\n", (unsigned)cl->uid,
			   (int)cl->pid, (unsigned)c->owner, (unsigned)c->group);
		return ctl_errorf(out, -EACCES, "permission denied: uid %u is not root, the control "
				  "socket's owner or in its group", cl ? (unsigned)cl->uid : 0);
	}
	if (!*name)
		return ctl_errorf(out, -EINVAL, "empty request, try help");
	if (!strcmp(name, "help")) {
		ctl_help(c, out);
		return out->err ? ctl_errorf(out, out->err, "%s", strerror(-out->err)) : 0;
	}
	cmd = ctl_find(c, name);
	if (!cmd)
		return ctl_errorf(out, -ENOENT, "unknown command \"%.64s\", try help", name);
	if (cmd->access == CTL_CHANGES) {
		char what[160];

		ctl_printable(what, sizeof(what), args);
		if (may != CTL_MAY_ALL) {
			pr_warn_rl("control command '%s %s' from uid %u (pid %d) refused: it changes "
				   "the daemon's state\n", cmd->name, what, cl ? (unsigned)cl->uid : 0,
				   cl ? (int)cl->pid : 0);
			return ctl_errorf(out, -EPERM, "permission denied: %s changes the daemon's "
					  "state; root or the control socket's owner only", cmd->name);
		}
		/* Who changed what, at the level a running daemon logs at. */
		pr_info("control command '%s%s%s' from uid %u (pid %d)\n", cmd->name,
			*what ? " " : "", what, (unsigned)cl->uid, (int)cl->pid);
	}

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

/* The timer follows the earliest deadline: the first client's, or the end
 * of an accept pause. */
static void ctl_timer_arm(struct ctl *c)
{
	uint64_t when = c->head ? c->head->deadline : LOOP_FOREVER;

	if (!c->timer)
		return;
	if (c->accept_paused_until && c->accept_paused_until < when)
		when = c->accept_paused_until;
	loop_timer_set(c->timer, when);
}

static void ctl_client_unlink(struct ctl_client *cl)
{
	struct ctl *c = cl->c;

	if (cl->prev)
		cl->prev->next = cl->next;
	else
		c->head = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	else
		c->tail = cl->prev;
	cl->prev = cl->next = NULL;
}

/* Every client gets the same idle time, so putting the one that just made
 * progress at the tail keeps the list in deadline order. */
static void ctl_client_touch(struct ctl_client *cl)
{
	struct ctl *c = cl->c;

	cl->deadline = loop_now_ns() + (uint64_t)c->lim.idle_ms * 1000000ull;
	if (c->tail != cl) {
		if (cl->prev || cl->next || c->head == cl)
			ctl_client_unlink(cl);
		cl->prev = c->tail;
		if (c->tail)
			c->tail->next = cl;
		else
			c->head = cl;
		c->tail = cl;
	}
	ctl_timer_arm(c);
}

/* Take the client out of the loop and free it; hangup: the polite close
 * after a reply, else an abort. */
static void ctl_client_close(struct ctl_client *cl, bool hangup)
{
	struct ctl *c = cl->c;

	loop_del_fd(c->loop, cl->fd);
	if (hangup)
		ctl_hangup(cl->fd);
	else
		close(cl->fd);
	c->st.inflight -= cl->pending_len - cl->pending_off;
	free(cl->pending);
	ctl_client_unlink(cl);
	c->st.clients--;
	free(cl);
	ctl_timer_arm(c);
}

/*
 * Send the bytes of a (alen) then b (blen) from *off on, until all are out
 * (1), the socket is full (0) or CTL_WRITE_BURST went out in this call (0:
 * the rest goes on the next pass of the loop). -errno if the client is gone.
 */
static int ctl_send_some(int fd, const char *a, size_t alen, const char *b, size_t blen,
			 size_t *off)
{
	size_t total = alen + blen, start = *off;
	struct iovec iov[2];
	ssize_t n;

	while (*off < total) {
		struct msghdr msg = { .msg_iov = iov };

		if (*off - start >= CTL_WRITE_BURST)
			return 0;
		if (*off < alen) {
			iov[msg.msg_iovlen++] = (struct iovec){ (char *)a + *off, alen - *off };
			if (blen)
				iov[msg.msg_iovlen++] = (struct iovec){ (char *)b, blen };
		} else {
			iov[msg.msg_iovlen++] = (struct iovec){ (char *)b + (*off - alen),
								total - *off };
		}
		/* MSG_NOSIGNAL: a client that went away must not kill the
		 * daemon with SIGPIPE. */
		n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			*off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return n < 0 ? -errno : -EIO;
	}
	return 1;
}

static void ctl_client_done(struct ctl_client *cl)
{
	cl->c->st.replies++;
	ctl_client_close(cl, true);
}

/* Send the reply (hdr, then body) as far as the socket takes it now; keep
 * a copy of the rest and wait until the socket is writable. */
static void ctl_client_reply(struct ctl_client *cl, const char *hdr, size_t hlen,
			     const char *body, size_t blen)
{
	struct ctl *c = cl->c;
	size_t sent = 0, left;
	int ret, err;

	if (!body)
		blen = 0;
	ret = ctl_send_some(cl->fd, hdr, hlen, body, blen, &sent);
	if (ret < 0) {
		pr_debug("control reply: %s\n", strerror(-ret));
		ctl_client_close(cl, false);
		return;
	}
	if (ret == 1) {
		ctl_client_done(cl);
		return;
	}
	left = hlen + blen - sent;
	cl->pending = malloc(left);
	if (!cl->pending) {
		pr_warn_rl("control reply of %zu bytes: %s\n", left, strerror(ENOMEM));
		ctl_client_close(cl, false);
		return;
	}
	if (sent < hlen) {
		memcpy(cl->pending, hdr + sent, hlen - sent);
		memcpy(cl->pending + hlen - sent, body, blen);
	} else {
		memcpy(cl->pending, body + (sent - hlen), left);
	}
	cl->pending_len = left;
	cl->pending_off = 0;
	cl->writing = true;
	c->st.inflight += left;
	err = loop_mod_fd(c->loop, cl->fd, EPOLLOUT);
	if (err) {
		pr_warn_rl("control client: %s\n", strerror(-err));
		ctl_client_close(cl, false);
		return;
	}
	if (sent)
		ctl_client_touch(cl);
}

static void ctl_client_write(struct ctl_client *cl)
{
	size_t before = cl->pending_off;
	int ret;

	ret = ctl_send_some(cl->fd, cl->pending, cl->pending_len, NULL, 0, &cl->pending_off);
	cl->c->st.inflight -= cl->pending_off - before;
	if (ret < 0) {
		pr_debug("control reply: %s\n", strerror(-ret));
		ctl_client_close(cl, false);
	} else if (ret == 1) {
		ctl_client_done(cl);
	} else if (cl->pending_off != before) {
		ctl_client_touch(cl);
	}
}

/* Replies held for slow readers are at the cap: new requests wait. */
static bool ctl_busy(struct ctl *c)
{
	if (c->st.inflight < c->lim.max_inflight)
		return false;
	c->st.rejected++;
	pr_warn_rl("control request refused: %zu bytes of replies held for slow clients\n",
		   c->st.inflight);
	return true;
}

static void ctl_serve_unix(struct ctl_client *cl, bool overflow)
{
	struct ctl *c = cl->c;
	char *buf = cl->req, *nl;
	size_t len = cl->len;
	int ret;

	jw_reset(&c->out);
	if (overflow) {
		ctl_errorf(&c->out, -EMSGSIZE, "request longer than %d bytes", CTL_MAX_REQUEST);
		goto reply;
	}
	if (ctl_busy(c)) {
		ctl_errorf(&c->out, -EBUSY, "busy: %zu bytes of replies wait for slow clients; "
			   "try again", c->st.inflight);
		goto reply;
	}
	nl = memchr(buf, '\n', len);
	if (nl) {
		*nl = '\0';
		len = nl - buf;
	}
	ret = ctl_run(c, buf, len, cl->may, cl);
	if (log_get_level() >= LOG_LVL_DEBUG) {
		char name[CTL_NAME_MAX];

		ctl_printable(name, sizeof(name), buf + strspn(buf, " \t"));
		pr_debug("request '%s': %s\n", name, ret ? strerror(-ret) : "ok");
	}
reply:
	if (!c->out.len || c->out.buf[c->out.len - 1] != '\n')
		jw_raw(&c->out, "\n");
	ctl_client_reply(cl, NULL, 0, c->out.buf, c->out.len);
}

static void ctl_serve_http(struct ctl_client *cl, bool overflow)
{
	static const char text[] = "text/plain; charset=utf-8";
	struct ctl *c = cl->c;
	const char *reason = "OK", *ctype = "text/plain; version=0.0.4; charset=utf-8";
	char cmd[CTL_NAME_MAX + 1], hdr[256];
	int status = 200, n;
	bool head = false;

	jw_reset(&c->out);
	if (overflow) {
		status = 431;
		reason = "Request Header Fields Too Large";
		ctype = text;
	} else if (!(head = !strncmp(cl->req, "HEAD ", 5)) && strncmp(cl->req, "GET ", 4) != 0) {
		status = 405;
		reason = "Method Not Allowed";
		ctype = text;
		jw_raw(&c->out, "only GET is supported\n");
	} else if (ctl_busy(c)) {
		status = 503;
		reason = "Service Unavailable";
		ctype = text;
		jw_raw(&c->out, "busy: %zu bytes of replies wait for slow clients; try again\n",
		       c->st.inflight);
	} else {
		/* ctl_run() edits its line in place. */
		snprintf(cmd, sizeof(cmd), "%s", c->http_cmd);
		if (ctl_run(c, cmd, strlen(cmd), CTL_MAY_READ, NULL)) {
			status = 500;
			reason = "Internal Server Error";
			ctype = text;
			jw_raw(&c->out, "\n");
		}
	}
	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n", status, reason, ctype, c->out.len);
	ctl_client_reply(cl, hdr, (size_t)n, c->out.buf, head ? 0 : c->out.len);
}

/* Read what has arrived of the request; serve it once it is complete (or
 * the client ended it with EOF, or it overflowed). */
static void ctl_client_read(struct ctl_client *cl)
{
	bool (*done)(const char *, size_t) = cl->http ? ctl_http_done : ctl_line_done;
	bool progress = false, overflow = false;
	ssize_t n;

	for (;;) {
		n = recv(cl->fd, cl->req + cl->len, cl->cap - 1 - cl->len, MSG_DONTWAIT);
		if (n > 0) {
			progress = true;
			cl->len += (size_t)n;
			cl->req[cl->len] = '\0';
			if (done(cl->req, cl->len))
				goto serve;
			if (cl->len == cl->cap - 1) {
				overflow = true;
				goto serve;
			}
			continue;
		}
		if (n == 0) {
			if (cl->len)
				goto serve;	/* EOF ends the request */
			pr_debug("control client hung up without a request\n");
			ctl_client_close(cl, false);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		pr_debug("control client: %s\n", strerror(errno));
		ctl_client_close(cl, false);
		return;
	}
	if (progress)
		ctl_client_touch(cl);
	return;
serve:
	if (progress)
		ctl_client_touch(cl);	/* the reply gets the whole idle time */
	(cl->http ? ctl_serve_http : ctl_serve_unix)(cl, overflow);
}

static void ctl_on_client(void *ctx, int fd, uint32_t events)
{
	struct ctl_client *cl = ctx;

	if (cl->writing)
		ctl_client_write(cl);
	else
		ctl_client_read(cl);
}

/* Too many clients: tell this one so at once rather than keep it waiting. */
static void ctl_reject(struct ctl *c, int fd, bool http)
{
	char msg[256];
	int n;

	c->st.rejected++;
	pr_warn_rl("control client turned away: %u clients connected already\n", c->st.clients);
	if (http)
		n = snprintf(msg, sizeof(msg),
			     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; "
			     "charset=utf-8\r\nContent-Length: 24\r\nConnection: close\r\n\r\n"
			     "busy: too many clients\r\n");
	else
		n = snprintf(msg, sizeof(msg), "{\"error\":\"busy: %u clients connected; try again\"}\n",
			     c->st.clients);
	if (send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		pr_debug("control client turned away: %s\n", strerror(errno));
	ctl_hangup(fd);
}

/* Is gid among the unix peer's groups (SO_PEERGROUPS: supplementary ones)? */
static bool ctl_peer_in_group(int fd, gid_t gid)
{
	gid_t few[64], *g = few;
	socklen_t len = sizeof(few);
	bool in = false;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		if (errno != ERANGE)
			return false;
		g = malloc(len);
		if (!g || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0)
			goto out;
	}
	for (size_t i = 0; i < len / sizeof(*g); i++)
		in |= g[i] == gid;
out:
	if (g != few)
		free(g);
	return in;
}

/* What the unix peer on fd may run: by its credentials against the socket
 * file's owner and group (looked up again, since an operator may chgrp the
 * socket to let a monitoring group read; a file that is no longer ours
 * leaves the values it was made with). */
static enum ctl_may ctl_peer_may(struct ctl *c, int fd, uid_t *uid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		pr_warn_rl("control client: SO_PEERCRED: %s\n", strerror(errno));
		*uid = (uid_t)-1;
		*pid = 0;
		return CTL_MAY_NOTHING;
	}
	*uid = cr.uid;
	*pid = cr.pid;
	if (stat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino) {
		c->owner = st.st_uid;
		c->group = st.st_gid;
	}
	if (cr.uid == 0 || cr.uid == c->owner)
		return CTL_MAY_ALL;
	if (cr.gid == c->group || ctl_peer_in_group(fd, c->group))
		return CTL_MAY_READ;
	return CTL_MAY_NOTHING;
}

static void ctl_client_new(struct ctl *c, int fd, bool http)
{
	size_t cap = http ? CTL_MAX_HTTP_REQUEST : CTL_MAX_REQUEST + 2; /* line, newline, NUL */
	struct ctl_client *cl;
	int err;

	cl = calloc(1, sizeof(*cl) + cap);
	if (!cl) {
		pr_warn_rl("control client: %s\n", strerror(ENOMEM));
		close(fd);
		return;
	}
	cl->c = c;
	cl->fd = fd;
	cl->http = http;
	cl->cap = cap;
	cl->may = http ? CTL_MAY_READ : ctl_peer_may(c, fd, &cl->uid, &cl->pid);
	err = loop_add_fd(c->loop, fd, EPOLLIN, ctl_on_client, cl);
	if (err) {
		pr_warn_rl("control client into the event loop: %s\n", strerror(-err));
		close(fd);
		free(cl);
		return;
	}
	c->st.clients++;
	ctl_client_touch(cl);
	/* The request often arrives with the connection: no need to wait
	 * for the next pass to find out. */
	ctl_client_read(cl);
}

static void ctl_accept_pause(struct ctl *c, bool on)
{
	uint32_t ev = on ? 0 : EPOLLIN;

	loop_mod_fd(c->loop, c->fd, ev);
	if (c->http_fd >= 0)
		loop_mod_fd(c->loop, c->http_fd, ev);
	c->accept_paused_until = on ? loop_now_ns() + CTL_ACCEPT_PAUSE_NS : 0;
	ctl_timer_arm(c);
}

static void ctl_on_listen(void *ctx, int fd, uint32_t events)
{
	struct ctl *c = ctx;
	bool http = fd == c->http_fd;
	int i, cfd;

	for (i = 0; i < CTL_ACCEPT_BURST; i++) {
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* The listener would stay readable and spin the loop. */
				pr_warn_rl("accept on control socket: %s; not accepting for 100 ms\n",
					   strerror(errno));
				ctl_accept_pause(c, true);
				return;
			}
			pr_warn_rl("accept on control socket: %s\n", strerror(errno));
			return;
		}
		c->st.accepted++;
		if (c->st.clients >= c->lim.max_clients)
			ctl_reject(c, cfd, http);
		else
			ctl_client_new(c, cfd, http);
	}
}

static void ctl_on_timer(void *ctx, uint64_t now)
{
	struct ctl *c = ctx;

	while (c->head && c->head->deadline <= now) {
		c->st.timeouts++;
		pr_debug("control client idle for %u ms: closed\n", c->lim.idle_ms);
		ctl_client_close(c->head, false);
	}
	if (c->accept_paused_until && c->accept_paused_until <= now)
		ctl_accept_pause(c, false);
	ctl_timer_arm(c);
}

int ctl_attach(struct ctl *c, struct loop *l)
{
	int err;

	if (c->loop)
		return -EBUSY;
	err = loop_timer_create(l, ctl_on_timer, c, &c->timer);
	if (err)
		return err;
	err = loop_add_fd(l, c->fd, EPOLLIN, ctl_on_listen, c);
	if (err)
		goto err_timer;
	if (c->http_fd >= 0) {
		err = loop_add_fd(l, c->http_fd, EPOLLIN, ctl_on_listen, c);
		if (err)
			goto err_unix;
	}
	c->loop = l;
	return 0;

err_unix:
	loop_del_fd(l, c->fd);
err_timer:
	loop_timer_destroy(l, c->timer);
	c->timer = NULL;
	return err;
}

void ctl_set_limits(struct ctl *c, const struct ctl_limits *lim)
{
	if (lim->max_clients)
		c->lim.max_clients = lim->max_clients;
	if (lim->idle_ms)
		c->lim.idle_ms = lim->idle_ms;
	if (lim->max_inflight)
		c->lim.max_inflight = lim->max_inflight;
}

void ctl_get_stats(const struct ctl *c, struct ctl_stats *st)
{
	*st = c->st;
}

void ctl_destroy(struct ctl *c)
{
	struct stat st;
	size_t i;

	if (!c)
		return;
	while (c->head)
		ctl_client_close(c->head, false);
	if (c->loop) {
		loop_timer_destroy(c->loop, c->timer);
		loop_del_fd(c->loop, c->fd);
		if (c->http_fd >= 0)
			loop_del_fd(c->loop, c->http_fd);
	}
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
