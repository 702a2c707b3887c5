// SPDX-License-Identifier: BSD-2-Clause
/*
 * Observability plumbing: the JSON writer and Prometheus helpers byte for
 * byte, the control server over real sockets (unix and TCP) in a real event
 * loop that the tests turn themselves, sd_notify and the time series.
 */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "prom.h"
#include "tseries.h"

static char tmpdir[64];

static void tmp_path(char *dst, size_t n, const char *name)
{
	snprintf(dst, n, "%s/%s", tmpdir, name);
}

/* ---- JSON writer ------------------------------------------------------- */

static void test_json_nesting(void)
{
	struct jw w;

	jw_init(&w);
	CHECK(!strcmp(jw_str_get(&w), ""));
	jw_obj_begin(&w, NULL);
	jw_str(&w, "a", "x");
	jw_u64(&w, "n", UINT64_MAX);
	jw_i64(&w, "i", INT64_MIN);
	jw_arr_begin(&w, "l");
	jw_u64(&w, NULL, 1);
	jw_obj_begin(&w, NULL);
	jw_obj_end(&w);
	jw_arr_begin(&w, NULL);
	jw_arr_end(&w);
	jw_null(&w, NULL);
	jw_str(&w, NULL, NULL);
	jw_arr_end(&w);
	jw_obj_begin(&w, "o");
	jw_bool(&w, "t", true);
	jw_bool(&w, "f", false);
	jw_obj_end(&w);
	jw_obj_end(&w);
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.depth, 0);
	CHECK(!strcmp(jw_str_get(&w),
		      "{\"a\":\"x\",\"n\":18446744073709551615,\"i\":-9223372036854775808,"
		      "\"l\":[1,{},[],null,null],\"o\":{\"t\":true,\"f\":false}}"));
	CHECK_EQ(w.len, strlen(w.buf));

	/* reset keeps the buffer, forgets the commas */
	jw_reset(&w);
	jw_arr_begin(&w, NULL);
	jw_i64(&w, NULL, -1);
	jw_arr_end(&w);
	CHECK(!strcmp(jw_str_get(&w), "[-1]"));
	jw_free(&w);
	CHECK(w.buf == NULL);
}

static void test_json_escape(void)
{
	struct jw w;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "k\"ey", "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	jw_str(&w, "bad", "\xff\xc3(\xed\xa0\x80z\xe2\x82");
	jw_obj_end(&w);
	CHECK(!strcmp(jw_str_get(&w),
		      "{\"k\\\"ey\":\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001f\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
		      "\"bad\":\"\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffdz\\ufffd\\ufffd\"}"));
	jw_free(&w);
}

static void test_json_numbers(void)
{
	struct jw w;

	jw_init(&w);
	jw_arr_begin(&w, NULL);
	jw_double(&w, NULL, 1.5);
	jw_double(&w, NULL, 0.1);
	jw_double(&w, NULL, -2);
	jw_double(&w, NULL, 1e20);
	jw_double(&w, NULL, 123456789.0);
	jw_double(&w, NULL, 1795341201.307); /* a Unix time keeps its milliseconds */
	jw_double(&w, NULL, NAN);
	jw_double(&w, NULL, INFINITY);
	jw_double(&w, NULL, -INFINITY);
	jw_u64(&w, NULL, 0);
	jw_i64(&w, NULL, INT64_MAX);
	jw_arr_end(&w);
	CHECK(!strcmp(jw_str_get(&w),
		      "[1.5,0.1,-2,1e+20,123456789,1795341201.307,null,null,null,0,9223372036854775807]"));
	jw_free(&w);

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_double(&w, "nan", NAN);
	jw_obj_end(&w);
	CHECK(!strcmp(jw_str_get(&w), "{\"nan\":null}"));
	jw_free(&w);
}

static void test_json_growth_depth_raw(void)
{
	struct jw w;
	int i;

	jw_init(&w);
	jw_arr_begin(&w, NULL);
	for (i = 0; i < 20000; i++)
		jw_u64(&w, NULL, 7);
	jw_arr_end(&w);
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.len, 2 + 20000 * 2 - 1);
	CHECK(w.buf[w.len - 1] == ']' && w.buf[w.len - 2] == '7');

	jw_reset(&w);
	for (i = 0; i < JW_MAX_DEPTH + 5; i++)
		jw_arr_begin(&w, NULL);
	CHECK_EQ(w.err, -E2BIG);
	jw_u64(&w, NULL, 1);	/* ignored after an error */
	CHECK(!strchr(jw_str_get(&w), '1'));

	jw_reset(&w);
	CHECK_EQ(w.err, 0);
	jw_raw(&w, "# %s %d\n", "x", 5);
	jw_raw(&w, "%s", "");
	for (i = 0; i < 100; i++)
		jw_raw(&w, "%0100d", 0);	/* forces growth inside jw_raw */
	CHECK_EQ(w.len, 6 + 100 * 100);
	CHECK(!strncmp(jw_str_get(&w), "# x 5\n000", 9));
	jw_free(&w);
}

/* ---- Prometheus -------------------------------------------------------- */

static void test_prom(void)
{
	char lbl[64], small[6];
	struct jw w;

	jw_init(&w);
	prom_family(&w, "l2cc_rx_frames_total", "counter", "Frames received\\per port\nx");
	prom_sample_u64(&w, "l2cc_rx_frames_total", "port=\"p1\",prio=\"0\"", UINT64_MAX);
	prom_sample_u64(&w, "l2cc_rx_frames_total", NULL, 3);
	prom_family(&w, "l2cc_rate", "gauge", "Rate");
	prom_sample_double(&w, "l2cc_rate", "", 0.1);
	prom_sample_double(&w, "l2cc_rate", "a=\"b\"", 12345678901.0);
	prom_sample_double(&w, "l2cc_rate", NULL, NAN);
	prom_sample_double(&w, "l2cc_rate", NULL, INFINITY);
	prom_sample_double(&w, "l2cc_rate", NULL, -INFINITY);
	CHECK(!strcmp(jw_str_get(&w),
		      "# HELP l2cc_rx_frames_total Frames received\\\\per port\\nx\n"
		      "# TYPE l2cc_rx_frames_total counter\n"
		      "l2cc_rx_frames_total{port=\"p1\",prio=\"0\"} 18446744073709551615\n"
		      "l2cc_rx_frames_total 3\n"
		      "# HELP l2cc_rate Rate\n"
		      "# TYPE l2cc_rate gauge\n"
		      "l2cc_rate 0.1\n"
		      "l2cc_rate{a=\"b\"} 12345678901\n"
		      "l2cc_rate NaN\n"
		      "l2cc_rate +Inf\n"
		      "l2cc_rate -Inf\n"));
	jw_free(&w);

	CHECK_EQ(prom_label_escape(lbl, sizeof(lbl), "a\\b\"c\nd"), 10);
	CHECK(!strcmp(lbl, "a\\\\b\\\"c\\nd"));
	CHECK_EQ(prom_label_escape(lbl, sizeof(lbl), ""), 0);
	CHECK(!strcmp(lbl, ""));
	/* truncation never splits an escape */
	CHECK_EQ(prom_label_escape(small, sizeof(small), "abcd\""), -ENOSPC);
	CHECK(!strcmp(small, "abcd"));
	CHECK_EQ(prom_label_escape(small, sizeof(small), "abcde"), 5);
	CHECK(!strcmp(small, "abcde"));
	CHECK_EQ(prom_label_escape(small, sizeof(small), "abcdef"), -ENOSPC);
	CHECK(!strcmp(small, "abcde"));
	CHECK_EQ(prom_label_escape(small, 0, "x"), -ENOSPC);
}

/* ---- control socket ---------------------------------------------------- */

/*
 * The server runs in a real event loop (ctl_attach) that the tests turn by
 * hand: pump() runs it for a while, read_reply() runs it until the client
 * has the whole reply. Clients are ordinary blocking sockets that the tests
 * only read with MSG_DONTWAIT, so nothing here can hang on the server.
 */

static int h_echo(struct jw *out, const char *args, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	jw_obj_begin(out, NULL);
	jw_str(out, "args", args);
	jw_obj_end(out);
	return 0;
}

static int h_fail(struct jw *out, const char *args, void *ctx)
{
	jw_obj_begin(out, NULL);	/* partial output is discarded */
	jw_str(out, "half", "done");
	return -ENODEV;
}

static int h_custom(struct jw *out, const char *args, void *ctx)
{
	jw_obj_begin(out, NULL);
	return ctl_errorf(out, -ENOENT, "no port %s", args);
}

static int h_empty(struct jw *out, const char *args, void *ctx)
{
	return 0;
}

static int h_metrics(struct jw *out, const char *args, void *ctx)
{
	prom_family(out, "l2cc_up", "gauge", "Daemon is up");
	prom_sample_u64(out, "l2cc_up", NULL, 1);
	return 0;
}

/* A reply far larger than any socket buffer: BIG_REPLY bytes of 'x' and a
 * newline, like the metrics of a hostd with many flows. */
#define BIG_REPLY (4u << 20)
static int h_big(struct jw *out, const char *args, void *ctx)
{
	jw_raw(out, "%*s", (int)BIG_REPLY - 1, "");
	if (!out->err)
		memset(out->buf, 'x', out->len);
	jw_raw(out, "\n");
	return 0;
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tcp_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Turn the loop for ms milliseconds as a busy daemon does (drun.c: a pass
 * that does not wait, every 100 us); returns the longest pass in us, which
 * is then all work, no waiting.
 */
static int64_t pump(struct loop *l, int ms)
{
	uint64_t end = loop_now_ns() + (uint64_t)ms * 1000000, t0;
	int64_t worst = 0, dt;

	while ((t0 = loop_now_ns()) < end) {
		CHECK(loop_run_once(l, 0) >= 0);
		dt = (int64_t)(loop_now_ns() - t0) / 1000;
		if (dt > worst)
			worst = dt;
		usleep(100);
	}
	return worst;
}

/* One non-blocking read: bytes appended, 0 at EOF, -1 nothing yet. */
static ssize_t try_read(int fd, char *buf, size_t *len, size_t n)
{
	ssize_t r = recv(fd, buf + *len, n - 1 - *len, MSG_DONTWAIT);

	if (r > 0) {
		*len += (size_t)r;
		buf[*len] = '\0';
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -1;
	return r < 0 ? 0 : r;	/* a reset ends the reply like EOF */
}

/* Run the loop until the server has closed fd (or 3 s); the reply in buf. */
static size_t read_reply(struct loop *l, int fd, char *buf, size_t n)
{
	uint64_t end = loop_now_ns() + 3000000000ull;
	size_t len = 0;
	ssize_t r;

	buf[0] = '\0';
	while (loop_now_ns() < end) {
		r = try_read(fd, buf, &len, n);
		if (r == 0 || len == n - 1)
			return len;
		if (r < 0)
			loop_run_once(l, loop_now_ns() + 1000000);
	}
	printf("    no complete reply within 3 s (%zu bytes so far)\n", len);
	check_failed_now++;
	return len;
}

/* Send req (reqlen bytes) to the server, let it serve, read the whole reply. */
static size_t roundtrip(struct loop *l, const char *path, const void *req, size_t reqlen,
			bool shut, char *reply, size_t n)
{
	int cfd;
	size_t len;

	reply[0] = '\0';
	cfd = unix_connect(path);
	CHECK(cfd >= 0);
	if (cfd < 0)
		return 0;
	if (reqlen)
		CHECK_EQ(send(cfd, req, reqlen, MSG_NOSIGNAL), (ssize_t)reqlen);
	if (shut)
		shutdown(cfd, SHUT_WR);
	len = read_reply(l, cfd, reply, n);
	close(cfd);
	return len;
}

#define RT(l, path, s, reply) roundtrip(l, path, s, strlen(s), false, reply, sizeof(reply))

/* A server on path in a fresh loop; both NULL on failure (checked). */
static struct ctl *srv_start(struct loop **l, const char *name, char *path, size_t pathsz)
{
	struct ctl *c = NULL;

	*l = NULL;
	tmp_path(path, pathsz, name);
	CHECK_EQ(loop_create(l), 0);
	if (!*l)
		return NULL;
	CHECK_EQ(ctl_create(&c, path), 0);
	if (!c)
		return NULL;
	CHECK_EQ(ctl_attach(c, *l), 0);
	return c;
}

static void srv_stop(struct ctl *c, struct loop *l)
{
	ctl_destroy(c);
	if (l)
		CHECK_EQ(loop_fd_count(l), 0);	/* every fd the server had is out */
	loop_destroy(l);
}

static void test_ctl_roundtrip(void)
{
	char path[128], reply[8192];
	struct ctl *c = NULL;
	struct loop *l = NULL;
	struct ctl_stats st;
	struct stat sb;
	int calls = 0;

	c = srv_start(&l, "rt/sub/switchd.sock", path, sizeof(path));	/* parents created */
	if (!c)
		return;
	CHECK_EQ(stat(path, &sb), 0);
	CHECK(S_ISSOCK(sb.st_mode));
	CHECK_EQ(sb.st_mode & 0777, 0660);
	CHECK_EQ(ctl_http_port(c), -ENOENT);
	CHECK_EQ(ctl_attach(c, l), -EBUSY);
	CHECK_EQ(loop_fd_count(l), 1);

	CHECK_EQ(ctl_register(c, "echo", "repeat the arguments", h_echo, &calls), 0);
	CHECK_EQ(ctl_register(c, "fail", "always fails", h_fail, NULL), 0);
	CHECK_EQ(ctl_register(c, "custom", "custom error", h_custom, NULL), 0);
	CHECK_EQ(ctl_register(c, "empty", "writes nothing", h_empty, NULL), 0);
	CHECK_EQ(ctl_register(c, "echo", "dup", h_echo, NULL), -EEXIST);
	CHECK_EQ(ctl_register(c, "help", "dup", h_echo, NULL), -EEXIST);
	CHECK_EQ(ctl_register(c, "a b", "space", h_echo, NULL), -EINVAL);
	CHECK_EQ(ctl_register(c, "", "empty", h_echo, NULL), -EINVAL);

	RT(l, path, "echo  hello \"world\"  \r\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"hello \\\"world\\\"\"}\n"));
	CHECK_EQ(calls, 1);
	RT(l, path, "  echo\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"\"}\n"));
	/* bytes after the newline are ignored */
	RT(l, path, "echo a\necho b\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"a\"}\n"));
	/* EOF ends a request without a newline */
	roundtrip(l, path, "echo eof", 8, true, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"eof\"}\n"));

	RT(l, path, "help\n", reply);
	CHECK(!strcmp(reply, "{\"commands\":[{\"name\":\"help\",\"help\":\"list the commands\","
		      "\"access\":\"read\"},"
		      "{\"name\":\"echo\",\"help\":\"repeat the arguments\",\"access\":\"change\"},"
		      "{\"name\":\"fail\",\"help\":\"always fails\",\"access\":\"change\"},"
		      "{\"name\":\"custom\",\"help\":\"custom error\",\"access\":\"change\"},"
		      "{\"name\":\"empty\",\"help\":\"writes nothing\",\"access\":\"change\"}]}\n"));

	RT(l, path, "nope 1 2\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"unknown command \\\"nope\\\", try help\"}\n"));
	RT(l, path, "fail\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"No such device\"}\n"));
	RT(l, path, "custom p9\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"no port p9\"}\n"));
	RT(l, path, "empty\n", reply);
	CHECK(!strcmp(reply, "{}\n"));
	RT(l, path, "\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"empty request, try help\"}\n"));

	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 0);
	CHECK_EQ(st.accepted, 10);
	CHECK_EQ(st.replies, 10);
	CHECK_EQ(st.inflight, 0);
	CHECK_EQ(loop_fd_count(l), 1);	/* clients are out of the loop */
	srv_stop(c, l);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
}

static void test_ctl_hostile_clients(void)
{
	char path[128], reply[8192], big[6000], junk[512];
	struct ctl *c = NULL;
	struct loop *l;
	int calls = 0, cfd, i;
	unsigned seed = 12345;

	c = srv_start(&l, "hostile.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);

	/* over-long request */
	memset(big, 'a', sizeof(big));
	roundtrip(l, path, big, sizeof(big), false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"error\":\"request longer than 4096 bytes\"}\n"));
	/* exactly 4096 bytes plus newline is fine */
	memcpy(big, "echo ", 5);
	big[4096] = '\n';
	roundtrip(l, path, big, 4097, false, reply, sizeof(reply));
	CHECK(!strncmp(reply, "{\"args\":\"aaa", 12));
	CHECK_EQ(strlen(reply), 4096 - 5 + strlen("{\"args\":\"\"}\n"));

	/* binary garbage: NUL bytes, high bytes, control characters */
	for (i = 0; i < 50; i++) {
		size_t n = 1 + rand_r(&seed) % sizeof(junk), k;

		for (k = 0; k < n; k++)
			junk[k] = (char)rand_r(&seed);
		roundtrip(l, path, junk, n, true, reply, sizeof(reply));
		CHECK(reply[0] == '{' || reply[0] == '\0');
	}
	roundtrip(l, path, "echo \xff\x01\n", 8, false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"\\ufffd\\u0001\"}\n"));
	roundtrip(l, path, "ec\0ho\n", 6, false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"error\":\"invalid request: contains a NUL byte\"}\n"));

	/* a client that hangs up at once, and one that never reads its reply */
	cfd = unix_connect(path);
	close(cfd);
	pump(l, 5);
	cfd = unix_connect(path);
	send(cfd, "help\n", 5, 0);
	pump(l, 5);
	close(cfd);

	/* still serving, and nothing left behind */
	RT(l, path, "echo ok\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"ok\"}\n"));
	pump(l, 5);
	CHECK_EQ(loop_fd_count(l), 1);
	srv_stop(c, l);
}

/*
 * The measured failure of the synchronous server: every silent client held
 * the loop for 100 ms, eight of them 0.8 s per pass. Now a pass with silent
 * clients connected (unix and TCP) costs microseconds, other requests are
 * answered meanwhile, and the idle timeout closes the silent ones.
 */
static void test_ctl_silent_clients(void)
{
	struct ctl_limits lim = { .idle_ms = 300 };
	char path[128], reply[4096];
	int silent[16], calls = 0, i;
	struct ctl *c = NULL;
	struct ctl_stats st;
	struct loop *l;
	int64_t worst;
	size_t len;

	c = srv_start(&l, "silent.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	CHECK_EQ(ctl_register_access(c, "metrics", "Prometheus", CTL_READS, h_metrics, NULL), 0);
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1:0", "metrics"), 0);	/* after ctl_attach */
	ctl_set_limits(c, &lim);
	for (i = 0; i < 16; i++) {
		silent[i] = i < 8 ? unix_connect(path) : tcp_connect(ctl_http_port(c));
		CHECK(silent[i] >= 0);
	}
	worst = pump(l, 50);
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 16);
	printf("    16 silent clients: longest loop pass %" PRId64 " us\n", worst);
	CHECK(worst < 5000);

	/* others are served while they sit there */
	RT(l, path, "echo busy\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"busy\"}\n"));
	i = tcp_connect(ctl_http_port(c));
	send(i, "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL);
	read_reply(l, i, reply, sizeof(reply));
	close(i);
	CHECK(!strncmp(reply, "HTTP/1.1 200 OK\r\n", 17));

	/* and after 300 ms without a byte, each silent one is closed, unanswered */
	worst = pump(l, 400);
	CHECK(worst < 5000);
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 0);
	CHECK_EQ(st.timeouts, 16);
	for (i = 0; i < 16; i++) {
		len = 0;
		CHECK_EQ(try_read(silent[i], reply, &len, sizeof(reply)), 0);
		CHECK_EQ(len, 0);
		close(silent[i]);
	}
	srv_stop(c, l);
}

/*
 * A client that asks for a reply bigger than the socket buffer and never
 * reads it: the loop keeps turning, the rest of the reply waits in memory
 * (counted in inflight); at the in-flight cap new requests are refused,
 * under it they are served; a reader that does read gets every byte; the
 * idle timeout frees what the silent one never took.
 */
static void test_ctl_slow_reader(void)
{
	struct ctl_limits lim = { .idle_ms = 300, .max_inflight = 1u << 20 };
	char path[128], reply[4096], *buf;
	int calls = 0, stuck, reader, other;
	struct ctl *c = NULL;
	struct ctl_stats st;
	struct loop *l;
	int64_t worst;
	size_t len, i;
	bool all_x = true;

	c = srv_start(&l, "slow.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	CHECK_EQ(ctl_register(c, "big", "4 MiB", h_big, NULL), 0);
	ctl_set_limits(c, &lim);

	stuck = unix_connect(path);
	send(stuck, "big\n", 4, 0);
	pump(l, 20);		/* the one pass that builds the reply */
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 1);
	CHECK(st.inflight > BIG_REPLY / 2 && st.inflight < BIG_REPLY);
	printf("    a 4 MiB reply nobody reads: %zu bytes held\n", st.inflight);
	worst = pump(l, 50);
	printf("    longest loop pass meanwhile: %" PRId64 " us\n", worst);
	CHECK(worst < 5000);

	/* at the cap, requests are refused at once, before their handler runs */
	RT(l, path, "big\n", reply);
	CHECK(!strncmp(reply, "{\"error\":\"busy: ", 16));
	RT(l, path, "echo small\n", reply);
	CHECK(!strncmp(reply, "{\"error\":\"busy: ", 16));
	CHECK_EQ(calls, 0);

	/* under it, served while the stuck one still holds its reply; a
	 * second big reply goes out whole to a client that does read */
	lim.max_inflight = 64u << 20;
	ctl_set_limits(c, &lim);
	RT(l, path, "echo small\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"small\"}\n"));
	reader = unix_connect(path);
	send(reader, "big\n", 4, 0);
	buf = malloc(BIG_REPLY + 16);
	len = buf ? read_reply(l, reader, buf, BIG_REPLY + 16) : 0;
	close(reader);
	CHECK_EQ(len, BIG_REPLY);
	for (i = 0; i + 1 < len && all_x; i++)
		all_x = buf[i] == 'x';
	CHECK(all_x && len && buf[len - 1] == '\n');
	free(buf);

	/* the stuck client is dropped after 300 ms without progress, and
	 * everything it held is released */
	other = unix_connect(path);	/* an idle one too: closed at its own time */
	pump(l, 400);
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 0);
	CHECK_EQ(st.inflight, 0);
	CHECK_EQ(st.timeouts, 2);
	CHECK_EQ(st.rejected, 2);
	close(stuck);
	close(other);
	srv_stop(c, l);
}

/*
 * Requests arrive in pieces: a line over three sends and an HTTP header
 * over three, with the loop turning in between; the handler runs once,
 * when the request is complete.
 */
static void test_ctl_partial_requests(void)
{
	char path[128], reply[4096];
	int calls = 0, fd;
	struct ctl *c = NULL;
	struct loop *l;

	c = srv_start(&l, "partial.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	CHECK_EQ(ctl_register_access(c, "metrics", "Prometheus", CTL_READS, h_metrics, NULL), 0);
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1:0", "metrics"), 0);

	fd = unix_connect(path);
	send(fd, "ec", 2, 0);
	pump(l, 5);
	send(fd, "ho hel", 6, 0);
	pump(l, 5);
	CHECK_EQ(calls, 0);
	send(fd, "lo\n", 3, 0);
	read_reply(l, fd, reply, sizeof(reply));
	close(fd);
	CHECK(!strcmp(reply, "{\"args\":\"hello\"}\n"));
	CHECK_EQ(calls, 1);

	fd = tcp_connect(ctl_http_port(c));
	send(fd, "GET /met", 8, 0);
	pump(l, 5);
	send(fd, "rics HTTP/1.1\r\nHost: x\r\n", 24, 0);
	pump(l, 5);
	send(fd, "\r\n", 2, 0);
	read_reply(l, fd, reply, sizeof(reply));
	close(fd);
	CHECK(!strncmp(reply, "HTTP/1.1 200 OK\r\n", 17));
	CHECK(strstr(reply, "l2cc_up 1\n") != NULL);

	/* a byte at a time */
	fd = unix_connect(path);
	for (const char *p = "echo slow\n"; *p; p++) {
		send(fd, p, 1, 0);
		pump(l, 1);
	}
	read_reply(l, fd, reply, sizeof(reply));
	close(fd);
	CHECK(!strcmp(reply, "{\"args\":\"slow\"}\n"));
	srv_stop(c, l);
}

/*
 * The idle timeout is the loop's business: a loop told to wait forever
 * still wakes when a client's time is up. A client that sent half a line
 * and stopped gets no reply, only the close.
 */
static void test_ctl_timeouts(void)
{
	struct ctl_limits lim = { .idle_ms = 100 };
	char path[128], reply[256];
	struct ctl *c = NULL;
	struct ctl_stats st;
	struct loop *l;
	int calls = 0, fd;
	uint64_t t0, dt;
	size_t len = 0;

	c = srv_start(&l, "timeout.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	ctl_set_limits(c, &lim);

	fd = unix_connect(path);
	send(fd, "echo half", 9, 0);
	t0 = loop_now_ns();
	do {
		CHECK(loop_run_once(l, LOOP_FOREVER) >= 0);
		ctl_get_stats(c, &st);
	} while (st.clients || st.accepted == 0);
	dt = (loop_now_ns() - t0) / 1000000;
	printf("    half a request, then silence: closed after %" PRIu64 " ms (idle_ms 100)\n", dt);
	CHECK(dt >= 90 && dt < 1000);
	CHECK_EQ(st.timeouts, 1);
	CHECK_EQ(calls, 0);
	CHECK_EQ(try_read(fd, reply, &len, sizeof(reply)), 0);	/* EOF, no reply */
	CHECK_EQ(len, 0);
	close(fd);

	/* a client that keeps trickling bytes is not idle */
	fd = unix_connect(path);
	for (const char *p = "echo trickle\n"; *p; p++) {
		send(fd, p, 1, 0);
		pump(l, 30);	/* 13 x 30 ms: well past idle_ms in total */
	}
	read_reply(l, fd, reply, sizeof(reply));
	close(fd);
	CHECK(!strcmp(reply, "{\"args\":\"trickle\"}\n"));
	srv_stop(c, l);
}

/*
 * Many clients at once: 300 connected together (past the 256 descriptors
 * the loop once held), each with its request, all answered; then, under a
 * cap of 16, the clients past it are told "busy" at once and the rest
 * served.
 */
static void test_ctl_many_clients(void)
{
	struct ctl_limits lim = { .max_clients = 400 };
	char path[128], reply[256], want[64], req[32];
	int fds[300], calls = 0, i, ok = 0, busy = 0;
	struct ctl *c = NULL;
	struct ctl_stats st;
	struct loop *l;
	size_t len;

	c = srv_start(&l, "many.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	ctl_set_limits(c, &lim);
	for (i = 0; i < 300; i++) {
		fds[i] = unix_connect(path);
		CHECK(fds[i] >= 0);
		loop_run_once(l, 0);	/* the backlog holds 16: keep accepting */
	}
	pump(l, 5);
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 300);
	CHECK_EQ(loop_fd_count(l), 301);
	for (i = 0; i < 300; i++) {
		snprintf(req, sizeof(req), "echo %d\n", i);
		send(fds[i], req, strlen(req), 0);
	}
	for (i = 0; i < 300; i++) {
		read_reply(l, fds[i], reply, sizeof(reply));
		snprintf(want, sizeof(want), "{\"args\":\"%d\"}\n", i);
		ok += !strcmp(reply, want);
		close(fds[i]);
	}
	CHECK_EQ(ok, 300);
	CHECK_EQ(calls, 300);
	CHECK_EQ(loop_fd_count(l), 1);

	lim.max_clients = 16;
	ctl_set_limits(c, &lim);
	for (i = 0; i < 20; i++) {
		fds[i] = unix_connect(path);
		pump(l, 1);
	}
	for (i = 0; i < 20; i++) {
		len = 0;
		try_read(fds[i], reply, &len, sizeof(reply));
		busy += !strcmp(reply, "{\"error\":\"busy: 16 clients connected; try again\"}\n");
	}
	CHECK_EQ(busy, 4);
	ctl_get_stats(c, &st);
	CHECK_EQ(st.clients, 16);
	CHECK_EQ(st.rejected, 4);
	for (i = 0, ok = 0; i < 16; i++) {
		send(fds[i], "echo x\n", 7, 0);
		read_reply(l, fds[i], reply, sizeof(reply));
		ok += !strcmp(reply, "{\"args\":\"x\"}\n");
	}
	CHECK_EQ(ok, 16);
	for (i = 0; i < 20; i++)
		close(fds[i]);
	srv_stop(c, l);
}

static void test_ctl_stale_and_live(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[100], file[128], reply[256];
	struct ctl *c = NULL, *c2 = NULL;
	struct loop *l = NULL;
	int calls = 0, fd;

	/* a socket file with nobody behind it, as a killed daemon leaves */
	tmp_path(path, sizeof(path), "stale.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	CHECK_EQ(access(path, F_OK), 0);

	c = srv_start(&l, "stale.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	RT(l, path, "echo x\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"x\"}\n"));

	/* a live daemon is not displaced */
	CHECK_EQ(ctl_create(&c2, path), -EADDRINUSE);
	CHECK(c2 == NULL);
	pump(l, 5);		/* the probe's connection comes and goes */
	RT(l, path, "echo y\n", reply);	/* and still works after the probe */
	CHECK(!strcmp(reply, "{\"args\":\"y\"}\n"));
	srv_stop(c, l);
	CHECK(access(path, F_OK) < 0);

	/* not a socket: left alone */
	tmp_path(file, sizeof(file), "regular");
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	CHECK_EQ(ctl_create(&c2, file), -EEXIST);
	CHECK_EQ(access(file, F_OK), 0);
	unlink(file);

	CHECK_EQ(ctl_create(&c2, "/tmp/"
		 "a-path-much-too-long-for-sun-path-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock"), -ENAMETOOLONG);
	ctl_destroy(NULL);
}

static void http_get(struct ctl *c, struct loop *l, const char *req, char *reply, size_t n)
{
	int fd;

	reply[0] = '\0';
	fd = tcp_connect(ctl_http_port(c));
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	read_reply(l, fd, reply, n);
	close(fd);
}

static void test_ctl_http(void)
{
	static const char body[] = "# HELP l2cc_up Daemon is up\n# TYPE l2cc_up gauge\nl2cc_up 1\n";
	char path[128], reply[4096], expect[512], big[9000];
	struct ctl *c = NULL;
	struct loop *l;
	int ret;

	tmp_path(path, sizeof(path), "http.sock");
	CHECK_EQ(ctl_create(&c, path), 0);
	if (!c)
		return;
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1", "metrics"), -EINVAL);
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1:99999", "metrics"), -EINVAL);
	CHECK_EQ(ctl_listen_http(c, "::1:9101", "metrics"), -EINVAL);
	CHECK_EQ(ctl_listen_http(c, "[::1:9101", "metrics"), -EINVAL);
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1:0", "metrics"), 0);
	CHECK_EQ(ctl_listen_http(c, "127.0.0.1:0", "metrics"), -EBUSY);
	CHECK(ctl_http_port(c) > 0);
	CHECK_EQ(loop_create(&l), 0);
	CHECK_EQ(ctl_attach(c, l), 0);	/* before it: both listeners go in */
	CHECK_EQ(loop_fd_count(l), 2);

	/* command not registered yet: 500 with the error */
	http_get(c, l, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 500 ", 13));
	CHECK(strstr(reply, "unknown command") != NULL);

	CHECK_EQ(ctl_register_access(c, "metrics", "Prometheus text", CTL_READS, h_metrics, NULL), 0);
	http_get(c, l, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
		 reply, sizeof(reply));
	snprintf(expect, sizeof(expect),
		 "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", sizeof(body) - 1, body);
	CHECK(!strcmp(reply, expect));

	http_get(c, l, "HEAD / HTTP/1.0\n\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 200 OK\r\n", 17));
	CHECK(strstr(reply, "\r\n\r\n") && strstr(reply, "\r\n\r\n")[4] == '\0');

	http_get(c, l, "POST /metrics HTTP/1.1\r\n\r\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 405 ", 13));

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	http_get(c, l, big, reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 431 ", 13));

	/* the unix socket serves the same command */
	RT(l, path, "metrics\n", reply);
	CHECK(!strcmp(reply, body));
	srv_stop(c, l);

	/* all addresses, and IPv6 loopback where the kernel has it */
	CHECK_EQ(ctl_create(&c, path), 0);
	CHECK_EQ(ctl_listen_http(c, ":0", "metrics"), 0);
	ctl_destroy(c);
	CHECK_EQ(ctl_create(&c, path), 0);
	ret = ctl_listen_http(c, "[::1]:0", "metrics");
	CHECK(ret == 0 || ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT);
	ctl_destroy(c);
}

/* ---- who may ask what ---------------------------------------------------- */

/*
 * As uid (and gid, no supplementary groups) in a child: connect to path,
 * send req, and return the reply here; the parent turns the loop meanwhile.
 */
static void as_user(struct loop *l, const char *path, uid_t uid, gid_t gid, const char *req,
		    char *reply, size_t n)
{
	int pfd[2], st = 0;
	size_t len = 0;
	pid_t pid;
	ssize_t r;

	reply[0] = '\0';
	CHECK_EQ(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		char buf[4096];
		int fd;

		close(pfd[0]);
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(2);
		fd = unix_connect(path);
		if (fd < 0) {
			dprintf(pfd[1], "connect: %s", strerror(errno));
			_exit(0);
		}
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
			_exit(3);
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			if (write(pfd[1], buf, (size_t)r) != r)
				_exit(4);
		_exit(0);
	}
	close(pfd[1]);
	CHECK(pid > 0);
	for (int i = 0; i < 3000 && pid > 0; i++) {
		loop_run_once(l, loop_now_ns() + 1000000);
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	while (len < n - 1 && (r = read(pfd[0], reply + len, n - 1 - len)) > 0)
		len += (size_t)r;
	reply[len] = '\0';
	close(pfd[0]);
}

/*
 * SO_PEERCRED against the socket's owner and group (issue 18, audit L3):
 * root and the owner run everything; the group only the read-only
 * commands; anyone else nothing, even where the socket's mode lets them
 * connect. The HTTP listener binds loopback unless told "*".
 */
static void test_ctl_access(void)
{
	const uid_t nobody = 65534;
	const gid_t grp = 65534, other = 65533;
	char path[128], reply[4096], addr[80];
	struct ctl *c = NULL;
	struct loop *l = NULL;
	int reads = 0, changes = 0;

	if (geteuid() != 0) {
		printf("    (not root: peer credentials not tried)\n");
		return;
	}
	CHECK_EQ(chmod(tmpdir, 0755), 0);
	c = srv_start(&l, "acc.sock", path, sizeof(path));
	if (!c)
		return;
	CHECK_EQ(ctl_register_access(c, "look", "reads", CTL_READS, h_echo, &reads), 0);
	CHECK_EQ(ctl_register_access(c, "poke", "changes", CTL_CHANGES, h_echo, &changes), 0);
	CHECK_EQ(ctl_register(c, "poke2", "changes by default", h_echo, &changes), 0);

	/* help says which is which */
	RT(l, path, "help\n", reply);
	CHECK(strstr(reply, "\"name\":\"look\",\"help\":\"reads\",\"access\":\"read\""));
	CHECK(strstr(reply, "\"name\":\"poke\",\"help\":\"changes\",\"access\":\"change\""));
	CHECK(strstr(reply, "\"name\":\"poke2\",\"help\":\"changes by default\",\"access\":\"change\""));
	/* root: everything */
	RT(l, path, "poke a\n", reply);
	CHECK_EQ(changes, 1);

	/* A careless chmod: nobody connects, but is neither owner nor group. */
	CHECK_EQ(chmod(path, 0666), 0);
	as_user(l, path, nobody, other, "look x\n", reply, sizeof(reply));
	CHECK(strstr(reply, "permission denied: uid 65534 is not root"));
	as_user(l, path, nobody, other, "help\n", reply, sizeof(reply));
	CHECK(strstr(reply, "permission denied"));
	as_user(l, path, nobody, other, "poke x\n", reply, sizeof(reply));
	CHECK(strstr(reply, "permission denied"));
	CHECK_EQ(reads, 0);
	CHECK_EQ(changes, 1);

	/* The socket's group: reads, but changes nothing. */
	CHECK_EQ(chown(path, 0, grp), 0);
	as_user(l, path, nobody, grp, "look x\n", reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"x\"}\n"));
	CHECK_EQ(reads, 1);
	as_user(l, path, nobody, grp, "poke x\n", reply, sizeof(reply));
	CHECK(strstr(reply, "permission denied: poke changes the daemon's state"));
	as_user(l, path, nobody, grp, "poke2 x\n", reply, sizeof(reply));
	CHECK(strstr(reply, "permission denied: poke2 changes"));
	CHECK_EQ(changes, 1);

	/* The socket's owner: everything. */
	CHECK_EQ(chown(path, nobody, 0), 0);
	as_user(l, path, nobody, other, "poke y\n", reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"y\"}\n"));
	CHECK_EQ(changes, 2);
	CHECK_EQ(chown(path, 0, 0), 0);

	/* Mode 0660 as made: nobody cannot even connect. */
	CHECK_EQ(chmod(path, 0660), 0);
	as_user(l, path, nobody, grp, "look x\n", reply, sizeof(reply));
	CHECK(strstr(reply, "connect: Permission denied"));

	/* metrics: ":PORT" is loopback, "*:PORT" every address */
	CHECK_EQ(ctl_listen_http(c, ":0", "look"), 0);
	CHECK_EQ(ctl_http_addr(c, addr, sizeof(addr)), 0);
	CHECK(!strncmp(addr, "127.0.0.1:", 10));
	srv_stop(c, l);
	CHECK_EQ(ctl_create(&c, path), 0);
	CHECK_EQ(ctl_http_addr(c, addr, sizeof(addr)), -ENOENT);
	CHECK_EQ(ctl_listen_http(c, "*:0", "look"), 0);
	CHECK_EQ(ctl_http_addr(c, addr, sizeof(addr)), 0);
	CHECK(!strncmp(addr, "[::]:", 5) || !strncmp(addr, "0.0.0.0:", 8));
	ctl_destroy(c);
	CHECK_EQ(chmod(tmpdir, 0700), 0);
}

/* ---- notify, tseries --------------------------------------------------- */

static void test_notify(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[100], buf[256], name[64];
	socklen_t len;
	int fd;
	ssize_t n;

	unsetenv("NOTIFY_SOCKET");
	CHECK_EQ(notify_send("READY=1"), 0);

	tmp_path(path, sizeof(path), "notify.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK_EQ(notify_send("READY=1"), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	CHECK_EQ(n, 7);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "READY=1"));
	CHECK_EQ(notify_sendf("STATUS=%d ports up", 4), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "STATUS=4 ports up"));
	close(fd);
	unlink(path);

	/* abstract socket, as systemd may use */
	snprintf(name, sizeof(name), "@l2cc-test-notify-%d", (int)getpid());
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	len = strlen(name);
	memcpy(sa.sun_path + 1, name + 1, len - 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len), 0);
	setenv("NOTIFY_SOCKET", name, 1);
	CHECK_EQ(notify_send("STOPPING=1"), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "STOPPING=1"));
	close(fd);

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CHECK_EQ(notify_send("READY=1"), -EINVAL);
	tmp_path(path, sizeof(path), "nobody-there");
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK_EQ(notify_send("READY=1"), -ENOENT);
	unsetenv("NOTIFY_SOCKET");
}

static void test_tseries(void)
{
	char path[128], buf[256];
	struct tseries *ts = NULL;
	int fd;
	ssize_t n;

	tmp_path(path, sizeof(path), "series.jsonl");
	CHECK_EQ(tseries_open(&ts, path, 0), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":1}"), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":2}"), 0);
	tseries_close(ts);
	/* append, not truncate */
	CHECK_EQ(tseries_open(&ts, path, 0), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":3}"), 0);
	tseries_close(ts);
	tseries_close(NULL);

	fd = open(path, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "{\"t\":1}\n{\"t\":2}\n{\"t\":3}\n"));
	unlink(path);

	tmp_path(path, sizeof(path), "no/such/dir/x.jsonl");
	CHECK_EQ(tseries_open(&ts, path, 0), -ENOENT);
}

static void slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, n - 1);

	if (fd >= 0)
		close(fd);
	buf[r > 0 ? r : 0] = '\0';
}

/* stats_file is written by root: never through a symbolic link, never into
 * a FIFO, and never past its bound (issue 18, audit L2). */
static void test_tseries_safe_bounded(void)
{
	char path[128], old[140], victim[128], buf[256];
	struct tseries *ts = NULL;

	tmp_path(path, sizeof(path), "safe.jsonl");
	tmp_path(victim, sizeof(victim), "victim");
	snprintf(old, sizeof(old), "%s.1", path);
	unlink(path);
	unlink(old);
	{
		int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		CHECK(fd >= 0);
		CHECK_EQ(write(fd, "keep\n", 5), 5);
		close(fd);
	}
	/* A link planted at the path is not followed. */
	CHECK_EQ(symlink(victim, path), 0);
	CHECK_EQ(tseries_open(&ts, path, 0), -ELOOP);
	slurp(victim, buf, sizeof(buf));
	CHECK(!strcmp(buf, "keep\n"));
	unlink(path);
	/* Nor is a FIFO opened for writing (it would block the daemon). */
	CHECK_EQ(mkfifo(path, 0600), 0);
	{
		int ret = tseries_open(&ts, path, 0);

		/* ENXIO from the open (no reader), or EINVAL: not a regular file */
		CHECK(ret == -EINVAL || ret == -ENXIO);
	}
	unlink(path);

	/* 8-byte lines, bound 20: the third goes to a fresh file, the first
	 * two to .1, whose planted link is replaced, not followed. */
	CHECK_EQ(symlink(victim, old), 0);
	CHECK_EQ(tseries_open(&ts, path, 20), 0);
	if (!ts)
		return;
	CHECK_EQ(tseries_write_line(ts, "{\"t\":1}"), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":2}"), 0);
	CHECK_EQ(tseries_rotations(ts), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":3}"), 0);
	CHECK_EQ(tseries_rotations(ts), 1);
	slurp(path, buf, sizeof(buf));
	CHECK(!strcmp(buf, "{\"t\":3}\n"));
	slurp(old, buf, sizeof(buf));
	CHECK(!strcmp(buf, "{\"t\":1}\n{\"t\":2}\n"));
	slurp(victim, buf, sizeof(buf));
	CHECK(!strcmp(buf, "keep\n"));
	/* A line alone longer than the bound still goes out, to a file of its own. */
	CHECK_EQ(tseries_write_line(ts, "{\"long\":\"0123456789abcdef\"}"), 0);
	CHECK_EQ(tseries_rotations(ts), 2);
	slurp(path, buf, sizeof(buf));
	CHECK(!strcmp(buf, "{\"long\":\"0123456789abcdef\"}\n"));
	tseries_close(ts);
	/* Reopened, the size so far counts: the next line rotates. */
	CHECK_EQ(tseries_open(&ts, path, 30), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":4}"), 0);
	CHECK_EQ(tseries_rotations(ts), 1);
	tseries_close(ts);
	unlink(path);
	unlink(old);
	unlink(victim);
}

static void rm_tree(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("    could not remove %s\n", dir);
}

int main(void)
{
	int ret;

	/* The failures this suite provokes on purpose are logged as errors. */
	log_set_level(getenv("L2CC_TEST_VERBOSE") ? LOG_LVL_DEBUG : -1);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/l2cc-test-ctl-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}

	RUN(test_json_nesting);
	RUN(test_json_escape);
	RUN(test_json_numbers);
	RUN(test_json_growth_depth_raw);
	RUN(test_prom);
	RUN(test_ctl_roundtrip);
	RUN(test_ctl_hostile_clients);
	RUN(test_ctl_silent_clients);
	RUN(test_ctl_slow_reader);
	RUN(test_ctl_partial_requests);
	RUN(test_ctl_timeouts);
	RUN(test_ctl_many_clients);
	RUN(test_ctl_stale_and_live);
	RUN(test_ctl_http);
	RUN(test_notify);
	RUN(test_ctl_access);
	RUN(test_tseries);
	RUN(test_tseries_safe_bounded);

	ret = check_summary();
	rm_tree(tmpdir);
	return ret;
}
