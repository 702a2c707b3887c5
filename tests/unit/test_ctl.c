// SPDX-License-Identifier: BSD-2-Clause
/*
 * Observability plumbing: the JSON writer and Prometheus helpers byte for
 * byte, the control server over real sockets (unix and TCP) driven from one
 * process by calling ctl_handle() ourselves, sd_notify and the time series.
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
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "json.h"
#include "log.h"
#include "notify.h"
#include "prom.h"
#include "tseries.h"

static char tmpdir[64];

static void tmp_path(char *dst, size_t n, const char *name)
{
	snprintf(dst, n, "%s/%s", tmpdir, name);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static size_t read_all(int fd, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;

	while (len < n - 1 && (r = recv(fd, buf + len, n - 1 - len, 0)) > 0)
		len += r;
	buf[len] = '\0';
	return len;
}

/* Send req (reqlen bytes) to the server, let it serve, read the whole reply. */
static size_t roundtrip(struct ctl *c, const char *path, const void *req, size_t reqlen,
			bool shut, char *reply, size_t n)
{
	int fds[2], cfd;
	size_t len;

	reply[0] = '\0';
	CHECK_EQ(ctl_fds(c, fds, 2) >= 1, 1);
	cfd = unix_connect(path);
	CHECK(cfd >= 0);
	if (cfd < 0)
		return 0;
	if (reqlen)
		CHECK_EQ(send(cfd, req, reqlen, MSG_NOSIGNAL), (ssize_t)reqlen);
	if (shut)
		shutdown(cfd, SHUT_WR);
	ctl_handle(c, fds[0]);
	len = read_all(cfd, reply, n);
	close(cfd);
	return len;
}

#define RT(c, path, s, reply) roundtrip(c, path, s, strlen(s), false, reply, sizeof(reply))

static void test_ctl_roundtrip(void)
{
	char path[128], reply[8192];
	struct ctl *c = NULL;
	struct stat st;
	int calls = 0, fds[2];

	tmp_path(path, sizeof(path), "rt/sub/switchd.sock");	/* parents created */
	CHECK_EQ(ctl_create(&c, path), 0);
	if (!c)
		return;
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0660);
	CHECK_EQ(ctl_fds(c, fds, 2), 1);
	CHECK_EQ(ctl_fds(c, fds, 0), -ENOSPC);
	CHECK_EQ(ctl_http_port(c), -ENOENT);

	CHECK_EQ(ctl_register(c, "echo", "repeat the arguments", h_echo, &calls), 0);
	CHECK_EQ(ctl_register(c, "fail", "always fails", h_fail, NULL), 0);
	CHECK_EQ(ctl_register(c, "custom", "custom error", h_custom, NULL), 0);
	CHECK_EQ(ctl_register(c, "empty", "writes nothing", h_empty, NULL), 0);
	CHECK_EQ(ctl_register(c, "echo", "dup", h_echo, NULL), -EEXIST);
	CHECK_EQ(ctl_register(c, "help", "dup", h_echo, NULL), -EEXIST);
	CHECK_EQ(ctl_register(c, "a b", "space", h_echo, NULL), -EINVAL);
	CHECK_EQ(ctl_register(c, "", "empty", h_echo, NULL), -EINVAL);

	RT(c, path, "echo  hello \"world\"  \r\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"hello \\\"world\\\"\"}\n"));
	CHECK_EQ(calls, 1);
	RT(c, path, "  echo\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"\"}\n"));
	/* bytes after the newline are ignored */
	RT(c, path, "echo a\necho b\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"a\"}\n"));
	/* EOF ends a request without a newline */
	roundtrip(c, path, "echo eof", 8, true, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"eof\"}\n"));

	RT(c, path, "help\n", reply);
	CHECK(!strcmp(reply, "{\"commands\":[{\"name\":\"help\",\"help\":\"list the commands\"},"
		      "{\"name\":\"echo\",\"help\":\"repeat the arguments\"},"
		      "{\"name\":\"fail\",\"help\":\"always fails\"},"
		      "{\"name\":\"custom\",\"help\":\"custom error\"},"
		      "{\"name\":\"empty\",\"help\":\"writes nothing\"}]}\n"));

	RT(c, path, "nope 1 2\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"unknown command \\\"nope\\\", try help\"}\n"));
	RT(c, path, "fail\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"No such device\"}\n"));
	RT(c, path, "custom p9\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"no port p9\"}\n"));
	RT(c, path, "empty\n", reply);
	CHECK(!strcmp(reply, "{}\n"));
	RT(c, path, "\n", reply);
	CHECK(!strcmp(reply, "{\"error\":\"empty request, try help\"}\n"));

	ctl_handle(c, 12345);	/* not ours: ignored */
	ctl_destroy(c);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
}

static void test_ctl_hostile_clients(void)
{
	char path[128], reply[8192], big[6000], junk[512];
	struct ctl *c = NULL;
	int calls = 0, fds[2], cfd, i;
	unsigned seed = 12345;
	int64_t t0;

	tmp_path(path, sizeof(path), "hostile.sock");
	CHECK_EQ(ctl_create(&c, path), 0);
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	ctl_fds(c, fds, 2);

	/* over-long request */
	memset(big, 'a', sizeof(big));
	roundtrip(c, path, big, sizeof(big), false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"error\":\"request longer than 4096 bytes\"}\n"));
	/* exactly 4096 bytes plus newline is fine */
	memcpy(big, "echo ", 5);
	big[4096] = '\n';
	roundtrip(c, path, big, 4097, false, reply, sizeof(reply));
	CHECK(!strncmp(reply, "{\"args\":\"aaa", 12));
	CHECK_EQ(strlen(reply), 4096 - 5 + strlen("{\"args\":\"\"}\n"));

	/* binary garbage: NUL bytes, high bytes, control characters */
	for (i = 0; i < 50; i++) {
		size_t n = 1 + rand_r(&seed) % sizeof(junk), k;

		for (k = 0; k < n; k++)
			junk[k] = (char)rand_r(&seed);
		roundtrip(c, path, junk, n, true, reply, sizeof(reply));
		CHECK(reply[0] == '{' || reply[0] == '\0');
	}
	roundtrip(c, path, "echo \xff\x01\n", 8, false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"args\":\"\\ufffd\\u0001\"}\n"));
	roundtrip(c, path, "ec\0ho\n", 6, false, reply, sizeof(reply));
	CHECK(!strcmp(reply, "{\"error\":\"invalid request: contains a NUL byte\"}\n"));

	/* a silent client costs at most the read deadline, then gets nothing */
	cfd = unix_connect(path);
	CHECK(cfd >= 0);
	t0 = now_ms();
	ctl_handle(c, fds[0]);
	CHECK(now_ms() - t0 >= CTL_READ_MS - 5 && now_ms() - t0 < 1000);
	CHECK_EQ(read_all(cfd, reply, sizeof(reply)), 0);
	close(cfd);

	/* a client that hangs up at once, and one that never reads its reply */
	cfd = unix_connect(path);
	close(cfd);
	ctl_handle(c, fds[0]);
	cfd = unix_connect(path);
	send(cfd, "help\n", 5, 0);
	ctl_handle(c, fds[0]);
	close(cfd);
	/* nothing pending: returns at once */
	t0 = now_ms();
	ctl_handle(c, fds[0]);
	CHECK(now_ms() - t0 < 50);

	/* still serving */
	RT(c, path, "echo ok\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"ok\"}\n"));
	ctl_destroy(c);
}

static void test_ctl_stale_and_live(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[100], file[128], reply[256];
	struct ctl *c = NULL, *c2 = NULL;
	int calls = 0, fd;

	/* a socket file with nobody behind it, as a killed daemon leaves */
	tmp_path(path, sizeof(path), "stale.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	CHECK_EQ(access(path, F_OK), 0);

	CHECK_EQ(ctl_create(&c, path), 0);
	if (!c)
		return;
	CHECK_EQ(ctl_register(c, "echo", "repeat", h_echo, &calls), 0);
	RT(c, path, "echo x\n", reply);
	CHECK(!strcmp(reply, "{\"args\":\"x\"}\n"));

	/* a live daemon is not displaced */
	CHECK_EQ(ctl_create(&c2, path), -EADDRINUSE);
	CHECK(c2 == NULL);
	RT(c, path, "echo y\n", reply);	/* and still works after the probe */
	CHECK(!strcmp(reply, "{\"args\":\"y\"}\n"));
	ctl_destroy(c);
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

static int tcp_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void http_get(struct ctl *c, int lfd, const char *req, char *reply, size_t n)
{
	int port = ctl_http_port(c), fd;

	reply[0] = '\0';
	fd = tcp_connect(port);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	ctl_handle(c, lfd);
	read_all(fd, reply, n);
	close(fd);
}

static void test_ctl_http(void)
{
	static const char body[] = "# HELP l2cc_up Daemon is up\n# TYPE l2cc_up gauge\nl2cc_up 1\n";
	char path[128], reply[4096], expect[512];
	struct ctl *c = NULL;
	int fds[2], ret;

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
	CHECK_EQ(ctl_fds(c, fds, 2), 2);
	CHECK_EQ(ctl_fds(c, fds, 1), -ENOSPC);

	/* command not registered yet: 500 with the error */
	http_get(c, fds[1], "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 500 ", 13));
	CHECK(strstr(reply, "unknown command") != NULL);

	CHECK_EQ(ctl_register(c, "metrics", "Prometheus text", h_metrics, NULL), 0);
	http_get(c, fds[1], "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
		 reply, sizeof(reply));
	snprintf(expect, sizeof(expect),
		 "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", sizeof(body) - 1, body);
	CHECK(!strcmp(reply, expect));

	http_get(c, fds[1], "HEAD / HTTP/1.0\n\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 200 OK\r\n", 17));
	CHECK(strstr(reply, "\r\n\r\n")[4] == '\0');

	http_get(c, fds[1], "POST /metrics HTTP/1.1\r\n\r\n", reply, sizeof(reply));
	CHECK(!strncmp(reply, "HTTP/1.1 405 ", 13));

	/* the unix socket serves the same command */
	RT(c, path, "metrics\n", reply);
	CHECK(!strcmp(reply, body));
	ctl_destroy(c);

	/* all addresses, and IPv6 loopback where the kernel has it */
	CHECK_EQ(ctl_create(&c, path), 0);
	CHECK_EQ(ctl_listen_http(c, ":0", "metrics"), 0);
	ctl_destroy(c);
	CHECK_EQ(ctl_create(&c, path), 0);
	ret = ctl_listen_http(c, "[::1]:0", "metrics");
	CHECK(ret == 0 || ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT);
	ctl_destroy(c);
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
	CHECK_EQ(tseries_open(&ts, path), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":1}"), 0);
	CHECK_EQ(tseries_write_line(ts, "{\"t\":2}"), 0);
	tseries_close(ts);
	/* append, not truncate */
	CHECK_EQ(tseries_open(&ts, path), 0);
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
	CHECK_EQ(tseries_open(&ts, path), -ENOENT);
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
	RUN(test_ctl_stale_and_live);
	RUN(test_ctl_http);
	RUN(test_notify);
	RUN(test_tseries);

	ret = check_summary();
	rm_tree(tmpdir);
	return ret;
}
