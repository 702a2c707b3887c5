// SPDX-License-Identifier: BSD-2-Clause
/*
 * l2ccctl: send one command to a daemon's control socket and print the reply.
 * Self-contained on purpose (libc only, and the build's version string from
 * daemon/version.c): it must work on a box where the daemon is broken, and
 * it speaks a one-line protocol described in ctl.h.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "version.h"

#define DEFAULT_SOCKET "/run/l2cc/switchd.sock"
#define MAX_REQUEST 4096	/* CTL_MAX_REQUEST in daemon/ctl.h */
#define MAX_REPLY (64u << 20)

enum { EXIT_OK = 0, EXIT_REPLY_ERROR = 1, EXIT_USAGE = 2 };

/* Options as data: getopt's tables and --help are both generated from it. */
struct cli_opt {
	int short_name;
	const char *long_name;
	const char *arg;	/* NULL: a flag */
	const char *help;
};

static const struct cli_opt cli_opts[] = {
	{ 's', "socket", "PATH", "control socket (default: $L2CC_SOCKET, else " DEFAULT_SOCKET ")" },
	{ 'r', "raw", NULL, "print the reply exactly as received" },
	{ 't', "timeout", "MS", "wait at most MS milliseconds for the reply (default 5000)" },
	{ 'V', "version", NULL, "print the version and exit" },
	{ 'h', "help", NULL, "show this help" },
};
#define N_OPTS (sizeof(cli_opts) / sizeof(cli_opts[0]))

static void usage(FILE *f)
{
	size_t i;
	char left[64];

	fprintf(f, "usage: l2ccctl [OPTIONS] COMMAND [ARGS...]\n\n"
		   "Send COMMAND to an l2cc daemon and print its JSON reply.\n"
		   "'l2ccctl help' lists the commands the daemon knows.\n\nOptions:\n");
	for (i = 0; i < N_OPTS; i++) {
		const struct cli_opt *o = &cli_opts[i];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->long_name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-24s %s\n", left, o->help);
	}
	fprintf(f, "\nExit status: 0 success, 1 the daemon replied with an error,\n"
		   "2 usage or connection error.\n");
}

/* ---- JSON helpers: just enough to pretty-print and find "error" -------- */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* Index just past the string whose opening quote is at i. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

static void indent(FILE *f, int level)
{
	fputc('\n', f);
	while (level-- > 0)
		fputs("  ", f);
}

/* Re-indent JSON text with 2 spaces; strings are copied untouched. */
static void pretty_print(FILE *f, const char *s, size_t n)
{
	int level = 0;
	size_t i, j;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		switch (ch) {
		case '"':
			j = skip_string(s, n, i);
			fwrite(s + i, 1, j - i, f);
			i = j - 1;
			break;
		case '{':
		case '[':
			j = skip_ws(s, n, i + 1);
			if (j < n && (s[j] == '}' || s[j] == ']')) {
				fputc(ch, f);
				fputc(s[j], f);
				i = j;
				break;
			}
			fputc(ch, f);
			indent(f, ++level);
			break;
		case '}':
		case ']':
			if (level > 0)
				level--;
			indent(f, level);
			fputc(ch, f);
			break;
		case ',':
			fputc(ch, f);
			indent(f, level);
			break;
		case ':':
			fputs(": ", f);
			break;
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			break;
		default:
			fputc(ch, f);
		}
	}
	fputc('\n', f);
}

static void put_utf8(char **o, char *end, unsigned cp)
{
	unsigned char b[4];
	int n, k;

	if (cp < 0x80) {
		b[0] = cp; n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | cp >> 6; b[1] = 0x80 | (cp & 0x3f); n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | cp >> 12; b[1] = 0x80 | ((cp >> 6) & 0x3f);
		b[2] = 0x80 | (cp & 0x3f); n = 3;
	} else {
		b[0] = 0xf0 | cp >> 18; b[1] = 0x80 | ((cp >> 12) & 0x3f);
		b[2] = 0x80 | ((cp >> 6) & 0x3f); b[3] = 0x80 | (cp & 0x3f); n = 4;
	}
	for (k = 0; k < n && *o < end; k++)
		*(*o)++ = b[k];
}

static unsigned hex4(const char *s)
{
	char tmp[5];

	memcpy(tmp, s, 4);
	tmp[4] = '\0';
	return (unsigned)strtoul(tmp, NULL, 16);
}

/* Decode the JSON string starting at quote index i into out (size sz). */
static void unescape(const char *s, size_t n, size_t i, char *out, size_t sz)
{
	char *o = out, *end = out + sz - 1;
	unsigned cp, lo;

	for (i++; i < n && s[i] != '"' && o < end; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (++i >= n)
			break;
		switch (s[i]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (i + 4 >= n)
				goto out;
			cp = hex4(s + i + 1);
			i += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < n &&
			    s[i + 1] == '\\' && s[i + 2] == 'u') {
				lo = hex4(s + i + 3);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				}
			}
			put_utf8(&o, end, cp);
			break;
		default:
			*o++ = s[i];	/* \" \\ \/ */
		}
	}
out:
	*o = '\0';
}

/*
 * If s is an object with a top-level "error" key, copy its value (decoded if
 * a string, as text otherwise) to msg and return true.
 */
static bool find_error(const char *s, size_t n, char *msg, size_t sz)
{
	size_t i = skip_ws(s, n, 0), j;
	bool want_key = true;
	int depth = 0;

	if (i >= n || s[i] != '{')
		return false;
	for (; i < n; i++) {
		switch (s[i]) {
		case '"':
			j = skip_string(s, n, i);
			if (depth == 1 && want_key && j - i == 7 && !memcmp(s + i, "\"error\"", 7)) {
				j = skip_ws(s, n, j);
				if (j >= n || s[j] != ':')
					return false;
				j = skip_ws(s, n, j + 1);
				if (j < n && s[j] == '"') {
					unescape(s, n, j, msg, sz);
				} else {
					size_t k = j;

					while (k < n && s[k] != ',' && s[k] != '}' && k - j < sz - 1)
						k++;
					memcpy(msg, s + j, k - j);
					msg[k - j] = '\0';
				}
				return true;
			}
			want_key = false;
			i = j - 1;
			break;
		case '{':
		case '[':
			depth++;
			want_key = depth == 1;
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			want_key = depth == 1;
			break;
		}
	}
	return false;
}

/* ---- talking to the daemon --------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Read until EOF or the deadline into a malloc'd buffer. */
static int read_reply(int fd, int timeout_ms, char **out, size_t *outlen)
{
	int64_t deadline = now_ms() + timeout_ms;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ret;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			ret = -ETIMEDOUT;
			goto err;
		}
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			ret = -errno;
			goto err;
		}
		if (ret == 0)
			continue;
		if (len + 1 == cap) {
			if (cap >= MAX_REPLY) {
				ret = -EMSGSIZE;
				goto err;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto err;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto err;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
err:
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	struct option longopts[N_OPTS + 1];
	char optstring[2 * N_OPTS + 2], *p = optstring;
	const char *sock = getenv("L2CC_SOCKET");
	char req[MAX_REQUEST + 2], msg[1024];
	char *reply = NULL, *end;
	size_t len = 0, rlen = 0, i;
	int timeout_ms = 5000, opt, fd, ret, status = EXIT_USAGE;
	bool raw = false;

	if (!sock || !*sock)
		sock = DEFAULT_SOCKET;
	*p++ = '+';	/* options stop at COMMAND: its ARGS may start with '-' */
	for (i = 0; i < N_OPTS; i++) {
		longopts[i] = (struct option){ cli_opts[i].long_name,
			cli_opts[i].arg ? required_argument : no_argument, NULL,
			cli_opts[i].short_name };
		*p++ = cli_opts[i].short_name;
		if (cli_opts[i].arg)
			*p++ = ':';
	}
	*p = '\0';
	memset(&longopts[N_OPTS], 0, sizeof(longopts[N_OPTS]));

	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 'r':
			raw = true;
			break;
		case 't':
			errno = 0;
			timeout_ms = (int)strtol(optarg, &end, 10);
			if (errno || *end || timeout_ms <= 0) {
				fprintf(stderr, "l2ccctl: bad timeout '%s': expected milliseconds > 0\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'V':
			l2cc_version_print(stdout, "l2ccctl");
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try 'l2ccctl --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "l2ccctl: missing COMMAND; try 'l2ccctl help' (the daemon's commands)"
			" or 'l2ccctl --help'\n");
		return EXIT_USAGE;
	}

	for (i = optind; i < (size_t)argc; i++) {
		size_t alen = strlen(argv[i]);

		if (strchr(argv[i], '\n')) {
			fprintf(stderr, "l2ccctl: arguments cannot contain newlines\n");
			return EXIT_USAGE;
		}
		if (len + alen + 1 > MAX_REQUEST) {
			fprintf(stderr, "l2ccctl: command longer than %d bytes\n", MAX_REQUEST);
			return EXIT_USAGE;
		}
		if (len)
			req[len++] = ' ';
		memcpy(req + len, argv[i], alen);
		len += alen;
	}
	req[len++] = '\n';

	fd = connect_unix(sock);
	if (fd < 0) {
		const char *hint = errno == EACCES ? "need root or the socket's group"
						   : "is the daemon running?";

		fprintf(stderr, "l2ccctl: cannot connect to %s: %s — %s\n", sock,
			strerror(errno), hint);
		return EXIT_USAGE;
	}
	ret = send_all(fd, req, len);
	if (!ret)
		ret = read_reply(fd, timeout_ms, &reply, &rlen);
	close(fd);
	if (ret) {
		fprintf(stderr, "l2ccctl: %s: %s\n", sock,
			ret == -ETIMEDOUT ? "no reply from the daemon in time" : strerror(-ret));
		return EXIT_USAGE;
	}

	status = EXIT_OK;
	if (find_error(reply, rlen, msg, sizeof(msg))) {
		fprintf(stderr, "l2ccctl: error: %s\n", msg);
		status = EXIT_REPLY_ERROR;
	}
	i = skip_ws(reply, rlen, 0);
	if (raw || i >= rlen || (reply[i] != '{' && reply[i] != '['))
		fwrite(reply, 1, rlen, stdout);	/* scripts may want the error object too */
	else if (status == EXIT_OK)
		pretty_print(stdout, reply, rlen);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "l2ccctl: writing output: %s\n", strerror(errno));
		status = EXIT_USAGE;
	}
	free(reply);
	return status;
}
