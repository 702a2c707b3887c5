// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the control socket's requests, through the real
 * dispatch: daemon/ctl.c's server (requests read from a socket, split into
 * command and arguments, the reply written back) with switchd's commands
 * (sw_ctl.c) or hostd's (hd_ctl.c) registered over a core built in memory
 * (fz_core.h) that has learnt addresses, queued frames and flows. The
 * first input byte picks the daemon and whether the metrics listener (HTTP)
 * is asked too, the next ones the core's configuration; the rest is up to
 * eight requests, one per line, each on a connection of its own (the last
 * one ended by EOF instead of a newline). Every reply must be one line of
 * valid JSON ending in a newline, or for `metrics` well-formed Prometheus
 * text; an HTTP reply a status line, headers and a body of the length it
 * states. A `mark` or `set-rate` is applied as the daemon's loop would,
 * and the frame accounting must hold after each request (fz_core.h).
 * ASan sees the rest, leaks included.
 * Seeds: tests/fuzz/corpus/fuzz_ctl/.
 */
#include "fz_core.h"
#include "loop.h"
#include "ctl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#define MAX_REQS 8

static struct loop *lp;
static char sock_path[108];

/* ---- reply checks --------------------------------------------------------- */

static const char *json_value(const char *p, const char *end, int depth);

static const char *json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static const char *json_string(const char *p, const char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			if (*p == 'u') {
				for (int i = 0; i < 4; i++)
					if (++p >= end || !strchr("0123456789abcdefABCDEF", *p))
						return NULL;
			} else if (!strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return NULL;
}

static const char *json_number(const char *p, const char *end)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return NULL;
	if (*p == '0')
		p++;
	else
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	if (p < end && *p == '.') {
		if (++p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, const char *end, int depth)
{
	if (depth > 64)
		return NULL;
	p = json_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p, end), end);
				if (!p)
					return NULL;
				p = json_ws(p, end);
				if (p >= end || *p++ != ':')
					return NULL;
			}
			p = json_value(p, end, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p, end);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			return p < end && *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return json_string(p, end);
	if (end - p >= 4 && !memcmp(p, "true", 4))
		return p + 4;
	if (end - p >= 5 && !memcmp(p, "false", 5))
		return p + 5;
	if (end - p >= 4 && !memcmp(p, "null", 4))
		return p + 4;
	return json_number(p, end);
}

static void check_json_line(const char *buf, size_t len)
{
	const char *end;

	fz_check(len >= 3 && buf[len - 1] == '\n');
	fz_check(memchr(buf, '\n', len - 1) == NULL);
	fz_check(memchr(buf, '\0', len) == NULL);
	fz_check(buf[0] == '{');
	end = json_value(buf, buf + len - 1, 0);
	fz_check(end == buf + len - 1);
}

static bool prom_name_ok(const char *p, const char *e)
{
	if (p >= e || !(isalpha((unsigned char)*p) || *p == '_' || *p == ':'))
		return false;
	for (; p < e; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == ':'))
			return false;
	return true;
}

/* Prometheus text exposition 0.0.4: # HELP/# TYPE lines and samples. */
static void check_prom(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	fz_check(len && buf[len - 1] == '\n');
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *sp;
		char num[64];
		char *e;

		fz_check(nl != NULL);
		if (*p == '#') {
			fz_check(nl - p > 7 && (!memcmp(p, "# HELP ", 7) || !memcmp(p, "# TYPE ", 7)));
			sp = memchr(p + 7, ' ', nl - p - 7);
			fz_check(sp && prom_name_ok(p + 7, sp));
		} else {
			const char *n = p;

			while (n < nl && *n != '{' && *n != ' ')
				n++;
			fz_check(prom_name_ok(p, n));
			if (n < nl && *n == '{') {
				/* label="value",... with \\, \" and \n escaped */
				n++;
				while (n < nl && *n != '}') {
					const char *eq = memchr(n, '=', nl - n);

					fz_check(eq && prom_name_ok(n, eq) && eq[1] == '"');
					for (n = eq + 2; n < nl && *n != '"'; n++)
						if (*n == '\\')
							fz_check(++n < nl && strchr("\\\"n", *n));
					fz_check(n < nl);
					n++;
					if (*n == ',')
						n++;
				}
				fz_check(n < nl && *n == '}');
				n++;
			}
			fz_check(n < nl && *n == ' ' && nl - n - 1 < (long)sizeof(num));
			memcpy(num, n + 1, nl - n - 1);
			num[nl - n - 1] = '\0';
			if (strcmp(num, "NaN") && strcmp(num, "+Inf") && strcmp(num, "-Inf")) {
				strtod(num, &e);
				fz_check(e != num && *e == '\0');
			}
		}
		p = nl + 1;
	}
}

/* ---- the client side ------------------------------------------------------ */

/* Send req to fd, shut our side, turn the loop until the reply is in and
 * the server closed: its length in buf (a 0-terminated copy, cut at cap). */
static size_t exchange(int fd, const char *req, size_t len, char *buf, size_t cap)
{
	size_t got = 0, off = 0;
	bool eof = false;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 2000 && !eof; i++) {
		ssize_t n;

		while (off < len) {
			n = send(fd, req + off, len - off, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off == len)
			shutdown(fd, SHUT_WR);
		loop_run_once(lp, loop_now_ns() + 1000000);
		for (;;) {
			char tmp[16384];

			n = recv(fd, tmp, sizeof(tmp), 0);
			if (n == 0) {
				eof = true;
				break;
			}
			if (n < 0) {
				/* A reset after our unread bytes: the reply is out. */
				if (errno == ECONNRESET)
					eof = true;
				break;
			}
			if (got + (size_t)n < cap) {
				memcpy(buf + got, tmp, (size_t)n);
				got += (size_t)n;
			} else {
				got = cap;
			}
		}
	}
	/* Every request gets an answer and the connection closed: the server
	 * never keeps a client that sent all it had. */
	fz_check(eof);
	fz_check(got < cap);
	buf[got] = '\0';
	return got;
}

static size_t unix_request(const char *req, size_t len, char *buf, size_t cap)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n;

	fz_check(fd >= 0);
	strcpy(sa.sun_path, sock_path);
	fz_check(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	n = exchange(fd, req, len, buf, cap);
	close(fd);
	return n;
}

/* Connect without blocking: libFuzzer's SIGALRM (the -timeout watchdog, no
 * SA_RESTART) fails a blocking connect() with EINTR when a busy machine
 * leaves the loopback handshake to ksoftirqd. */
static void tcp_connect(int fd, const struct sockaddr_in *sa)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int err = 0, r;
	socklen_t elen = sizeof(err);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		return;
	if (errno != EINPROGRESS) {
		fprintf(stderr, "connect 127.0.0.1:%d: %s\n", ntohs(sa->sin_port), strerror(errno));
		fz_check(0);
	}
	do
		r = poll(&pfd, 1, 5000);
	while (r < 0 && errno == EINTR);
	fz_check(r == 1);
	fz_check(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0);
	if (err)
		fprintf(stderr, "connect 127.0.0.1:%d: %s\n", ntohs(sa->sin_port), strerror(err));
	fz_check(err == 0);
}

static void http_request(int port, const char *req, size_t len)
{
	static char buf[1 << 21];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n;
	const char *body;
	unsigned long clen;
	bool head;

	fz_check(fd >= 0);
	tcp_connect(fd, &sa);
	n = exchange(fd, req, len, buf, sizeof(buf));
	close(fd);
	/* A client may see a reset instead of the reply when it sent more
	 * than the server read (ctl_hangup reads a little of it); then
	 * there is nothing to check. */
	if (!n)
		return;
	fz_check(n > 12 && !memcmp(buf, "HTTP/1.1 ", 9));
	body = strstr(buf, "\r\n\r\n");
	fz_check(body != NULL);
	body += 4;
	{
		const char *cl = strstr(buf, "Content-Length: ");

		fz_check(cl && cl < body);
		clen = strtoul(cl + 16, NULL, 10);
	}
	/* req is the input's bytes, len of them, not a string. */
	head = len >= 5 && !memcmp(req, "HEAD ", 5);
	if (head && !memcmp(buf + 9, "200", 3))
		fz_check((size_t)(buf + n - body) == 0);
	else
		fz_check((size_t)(buf + n - body) == clen);
	if (!memcmp(buf + 9, "200", 3) && !head)
		check_prom(body, clen);
}

/* ---- the daemons ------------------------------------------------------------ */

static bool is_cmd(const char *req, size_t len, const char *name)
{
	size_t n = strlen(name), i = 0;

	while (i < len && (req[i] == ' ' || req[i] == '\t'))
		i++;
	return len - i >= n && !memcmp(req + i, name, n) &&
	       (len - i == n || req[i + n] == ' ' || req[i + n] == '\t' || req[i + n] == '\r' ||
		req[i + n] == '\n');
}

static void check_reply(const char *req, size_t rlen, const char *buf, size_t n)
{
	if (is_cmd(req, rlen, "metrics") && n && buf[0] != '{')
		check_prom(buf, n);
	else
		check_json_line(buf, n);
	/* `status` reports the frame accounting (switchd: conserved,
	 * hostd: consistent): it holds here, so it must say so. */
	if (is_cmd(req, rlen, "status") && strncmp(buf, "{\"error\"", 8))
		fz_check(strstr(buf, "\"conserved\":true") || strstr(buf, "\"consistent\":true"));
}

/* The requests of the input, one per line; the last ended by EOF. */
static void serve(struct fz_in *in, int http_port, void (*apply)(void *), void (*chk)(void *),
		  void *ctx)
{
	static char buf[1 << 21];
	const char *p = (const char *)in->p, *end = p + in->n;

	for (int i = 0; i < MAX_REQS && p < end; i++) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		size_t n = unix_request(p, len, buf, sizeof(buf));

		check_reply(p, len, buf, n);
		if (http_port > 0 && i == 0)
			http_request(http_port, p, len);
		apply(ctx);
		chk(ctx);
		p += len;
	}
}

static void sw_apply(void *ctx)
{
	struct fz_sw *z = ctx;
	struct sw *s = z->s;

	/* as sw_apply_requests() */
	for (uint32_t i = 0; i < s->nreqs; i++)
		if (s->reqs[i].type == SW_REQ_MARK)
			s->ports[s->reqs[i].port].mark_pending = s->reqs[i].n;
	s->nreqs = 0;
	s->now += 1000000;
	sw_pass(s);
}

static void sw_chk(void *ctx)
{
	fz_sw_check(ctx);
}

static void hd_apply(void *ctx)
{
	struct fz_hd *z = ctx;
	struct hd *h = z->h;

	/* as hd_apply_requests() */
	for (uint32_t i = 0; i < h->nreqs; i++) {
		struct flow *f = flow_by_ref(h->flows, h->reqs[i].flow, h->reqs[i].gen);

		if (h->reqs[i].type == HD_REQ_SET_RATE && f)
			hd_set_flow_rate(h, f, h->reqs[i].rate_bps, h->reqs[i].ipd);
	}
	h->nreqs = 0;
	h->now += 1000000;
	hd_pass(h);
}

static void hd_chk(void *ctx)
{
	fz_hd_check(ctx);
}

/* A frame into the pool at the headroom: dst, src by id, len, ethertype;
 * tagged with (flow, seq) when tag. */
static uint64_t frame(struct umem *u, uint8_t dst, uint8_t src, uint16_t type, bool tag,
		      uint16_t flow, uint32_t *len)
{
	int64_t idx = umem_alloc(u);
	uint64_t addr = umem_addr(u, (uint32_t)idx) + XPORT_UMEM_HEADROOM;
	uint8_t *p = umem_data(u, addr);

	fz_check(idx >= 0);
	*len = 200;
	memset(p, 0, *len);
	p[0] = dst == 0xff ? 0xff : 0x02;
	memset(p + 1, dst == 0xff ? 0xff : 0, 4);
	p[5] = dst;
	p[6] = 0x02;
	p[11] = src;
	p[12] = type >> 8;
	p[13] = type & 0xff;
	if (tag) {
		struct wire_tag t = { .flow = flow, .seq = 1, .flags = L2CC_TAG_FECN };

		fz_check(wire_tag_insert(&p, len, XPORT_UMEM_HEADROOM, &t) == 0);
		addr -= L2CC_TAG_LEN;
	}
	return addr;
}

static void run_switch(struct fz_in *in, bool http)
{
	static struct fz_sw z;
	struct sw *s;
	uint32_t len;

	if (fz_sw_create(&z, in, sock_path)) {
		fz_sw_destroy(&z);
		return;
	}
	if (http)
		strcpy(z.cfg.metrics_listen, "127.0.0.1:0");
	s = z.s;
	s->loop = lp;
	fz_check(sw_ctl_init(s) == 0);
	/* Learnt addresses, and frames waiting behind a full TX ring. */
	z.k.cap[0] = 0;
	for (int i = 0; i < 2 * s->nports; i++) {
		uint64_t a = frame(z.u, i < s->nports ? 0xff : 10, (uint8_t)(10 + i % s->nports),
				   0x0800, false, 0, &len);

		if (!sw_rx_frame(s, &s->ports[i % s->nports], a, len))
			umem_free(z.u, umem_idx(z.u, a));
	}
	sw_pass(s);
	fz_sw_check(&z);
	serve(in, http ? ctl_http_port(s->ctl) : 0, sw_apply, sw_chk, &z);
	sw_ctl_fini(s);
	fz_sw_destroy(&z);
}

static void run_host(struct fz_in *in, bool http)
{
	static struct fz_hd z;
	struct hd *h;
	uint32_t len;
	uint64_t a;

	if (fz_hd_create(&z, in, sock_path)) {
		fz_hd_destroy(&z);
		return;
	}
	if (http)
		strcpy(z.cfg.metrics_listen, "127.0.0.1:0");
	h = z.h;
	h->loop = lp;
	fz_check(hd_ctl_init(h) == 0);
	/* Flows toward two peers, frames queued, and a peer's flow. */
	z.k.cap[HD_PORT_UP] = 0;
	for (int i = 0; i < 4; i++)
		hd_rx_host_frame(h, frame(z.u, (uint8_t)(2 + i % 2), 1, 0x0800, false, 0, &len), len);
	a = frame(z.u, 1, 3, 0x0800, true, 1, &len);
	if (!hd_rx_up_frame(h, a, len))
		umem_free(z.u, umem_idx(z.u, a));
	hd_pass(h);
	fz_hd_check(&z);
	serve(in, http ? ctl_http_port(h->ctl) : 0, hd_apply, hd_chk, &z);
	hd_ctl_fini(h);
	fz_hd_destroy(&z);
}

static char sock_dir[64];

static void remove_dir(void)
{
	unlink(sock_path);
	rmdir(sock_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_LVL_ERR);
	snprintf(sock_dir, sizeof(sock_dir), "/tmp/l2cc-fuzz-ctl-XXXXXX");
	if (!mkdtemp(sock_dir) || loop_create(&lp))
		abort();
	snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", sock_dir);
	atexit(remove_dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t b;

	if (!size)
		return 0;
	b = fz_u8(&in);
	if (b & 1)
		run_host(&in, b & 2);
	else
		run_switch(&in, b & 2);
	return 0;
}
