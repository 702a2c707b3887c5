// SPDX-License-Identifier: BSD-2-Clause
/*
 * l2cc-flowgen: traffic for flow-completion-time (FCT) experiments.
 *
 * iperf3 runs a few long transfers; FCT studies need many short flows that
 * arrive as a Poisson process with sizes drawn from a heavy-tailed
 * distribution, and ON/OFF sources (Santos et al., Fig. 7). This tool makes
 * one TCP connection per flow and speaks a protocol small enough to state
 * here (docs/l2cc-flowgen.md has the full reference):
 *
 *   client -> server: 8-byte big-endian size N, then N bytes
 *   server -> client: 1 byte (the ack), then the server closes
 *
 * A size of all ones (FG_HDR_STREAM) means "stream until close, no ack": the
 * ON/OFF source's one long-lived connection. With --udp the ON/OFF source
 * sends bare datagrams of zeros to the same port instead (no header, no
 * ack), and the server counts them on a UDP socket bound next to its
 * listener.
 *
 * The FCT is measured by the client, from just before connect() to the
 * arrival of the ack (CLOCK_MONOTONIC): it includes the handshake and ends
 * only when the server has read every byte.
 *
 * Both sides are a single thread around the daemons' event loop
 * (daemon/loop.c: epoll, any number of descriptors, SIGINT/SIGTERM through
 * a signalfd) with non-blocking sockets: a thread per flow would add
 * scheduler noise to the very times we measure. The options are rows of
 * the daemons' table-driven parser (daemon/dcli.h) with a subcommand mask.
 */
#define LOG_SUBSYS "flowgen"
#include "config.h"
#include "dcli.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "version.h"

#include <ctype.h>
#include <stddef.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define FG_PROG			"l2cc-flowgen"
#define FG_DEFAULT_PORT		5680
#define FG_HDR_STREAM		UINT64_MAX
#define FG_ACK			0x06
#define FG_IOBUF		(256 * 1024)
#define FG_MAX_SIZE		(1ull << 62)	/* keeps every size far from FG_HDR_STREAM */
#define FG_MAX_FLOWS		50000000ull	/* ~4 GB of flow records */
#define FG_MAX_OPEN_LIMIT	1000000ull
#define FG_DRAIN_NS		1000000000ll	/* wait this long for the server's FIN */
#define FG_ACCEPT_PAUSE_NS	100000000ull
#define FG_NSEC			1000000000.0
#define FG_UDP_MAX		65507		/* the largest IPv4 UDP payload */
#define FG_UDP_BATCH		64		/* datagrams per sendmmsg()/recvmmsg() */
#define FG_UDP_TICK_NS		100000		/* UDP: wake up at most every 100 us */
#define FG_DG_MAGIC		0x4c324647u	/* "L2FG": a stamped datagram */
#define FG_DG_STREAM_LEN	32		/* a stream datagram's header */
#define FG_DG_LEN		48		/* a request's or response's header */
#define FG_WIN_NS		100000000ll	/* the running mean's window: 100 ms */
#define FG_RR_GRACE_NS		1000000000ll	/* --rr: wait this long for late responses */
#define FG_UDP_RCVBUF		(8 << 20)	/* asked for; the kernel caps it at rmem_max */

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Never written: the payload of every flow, so nothing is allocated or
 * touched per byte. Not const, so it lives in .bss, not in the binary. */
static char fg_zero[FG_IOBUF];
/* The server reads payload into it and forgets it. */
static char fg_sink[FG_IOBUF];

/* ---- random numbers ---------------------------------------------------- */

/*
 * xoshiro256** (Blackman & Vigna), seeded through splitmix64: the same seed
 * gives the same workload on every libc and machine, which rand() does not.
 */
struct fg_rng {
	uint64_t s[4];
};

enum { FG_STREAM_ARRIVALS = 1, FG_STREAM_SIZES, FG_STREAM_ONOFF };

static uint64_t fg_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One generator per purpose: a different size distribution must not move
 * the arrival times of a given seed. */
static void fg_rng_seed(struct fg_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = fg_splitmix64(&x);
}

static inline uint64_t fg_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t fg_rng_next(struct fg_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = fg_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = fg_rotl(s[3], 45);
	return res;
}

/* Uniform in (0, 1]: never 0, so log() and pow() below stay finite. */
static double fg_rng_unit(struct fg_rng *r)
{
	return (double)((fg_rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

static double fg_rng_exp(struct fg_rng *r, double mean)
{
	return -mean * log(fg_rng_unit(r));
}

/* ---- flow sizes -------------------------------------------------------- */

enum fg_size_kind { FG_SIZE_NONE, FG_SIZE_FIXED, FG_SIZE_PARETO, FG_SIZE_CDF };

struct fg_cdf_pt {
	double size, p;
};

struct fg_sizes {
	enum fg_size_kind kind;
	uint64_t fixed;
	double shape, mean, xm;		/* Pareto */
	const char *cdf_path;
	struct fg_cdf_pt *pts;		/* ascending; the last has p == 1 */
	size_t npts;
	uint64_t max;			/* 0: no cap */
};

static uint64_t fg_size_draw(const struct fg_sizes *d, struct fg_rng *r)
{
	const struct fg_cdf_pt *a, *b;
	size_t lo, hi, mid;
	double x = 0, u;
	uint64_t v;

	switch (d->kind) {
	case FG_SIZE_FIXED:
		x = (double)d->fixed;
		break;
	case FG_SIZE_PARETO:
		/* Inverse transform of P(X > x) = (xm / x)^shape. */
		x = d->xm / pow(fg_rng_unit(r), 1.0 / d->shape);
		break;
	case FG_SIZE_CDF:
		u = fg_rng_unit(r);
		lo = 0;
		hi = d->npts - 1;
		while (lo < hi) {	/* the first point with p >= u */
			mid = lo + (hi - lo) / 2;
			if (d->pts[mid].p >= u)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo == 0) {
			/* Below the first point's p: its size (a point mass),
			 * as the pFabric/HPCC CDF files intend. */
			x = d->pts[0].size;
		} else {
			/* a.p < u <= b.p, so the division is safe. */
			a = &d->pts[lo - 1];
			b = &d->pts[lo];
			x = a->size + (b->size - a->size) * (u - a->p) / (b->p - a->p);
		}
		break;
	case FG_SIZE_NONE:
		break;
	}
	if (!(x >= 0))
		x = 0;
	v = x >= (double)FG_MAX_SIZE ? FG_MAX_SIZE : (uint64_t)(x + 0.5);
	if (d->max && v > d->max)
		v = d->max;
	return v;
}

/* Load "SIZE CDF" lines; 0, or -errno with "file:line: message" in err. */
static int fg_cdf_load(struct fg_sizes *d, const char *path, char *err, size_t errlen)
{
	struct fg_cdf_pt *pts = NULL, *np;
	size_t n = 0, cap = 0, lineno = 0;
	char line[1024], *p, *end;
	double size, prob;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%zu: line longer than %zu bytes", path, lineno,
				 sizeof(line) - 2);
			ret = -EINVAL;
			goto out;
		}
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (!*p)
			continue;
		size = strtod(p, &end);
		if (end == p || !isfinite(size) || size < 0) {
			snprintf(err, errlen, "%s:%zu: expected 'SIZE CDF' with SIZE a byte count >= 0",
				 path, lineno);
			ret = -EINVAL;
			goto out;
		}
		p = end;
		prob = strtod(p, &end);
		if (end == p || !(prob >= 0 && prob <= 1)) {
			snprintf(err, errlen, "%s:%zu: expected a CDF value in 0..1 after the size"
				 " (percentages are not accepted)", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		for (p = end; isspace((unsigned char)*p); p++)
			;
		if (*p) {
			snprintf(err, errlen, "%s:%zu: unexpected text after 'SIZE CDF'", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		if (n && (size < pts[n - 1].size || prob < pts[n - 1].p)) {
			snprintf(err, errlen, "%s:%zu: points must ascend: %g %g after %g %g",
				 path, lineno, size, prob, pts[n - 1].size, pts[n - 1].p);
			ret = -EINVAL;
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			np = realloc(pts, cap * sizeof(*pts));
			if (!np) {
				snprintf(err, errlen, "%s: out of memory", path);
				ret = -ENOMEM;
				goto out;
			}
			pts = np;
		}
		pts[n].size = size;
		pts[n].p = prob;
		n++;
	}
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (!n) {
		snprintf(err, errlen, "%s: no 'SIZE CDF' lines", path);
		ret = -EINVAL;
		goto out;
	}
	if (fabs(pts[n - 1].p - 1) > 1e-9) {
		/* Above the last point there would be no size to draw. */
		snprintf(err, errlen, "%s: the last CDF value is %g; it must be 1", path,
			 pts[n - 1].p);
		ret = -EINVAL;
		goto out;
	}
	pts[n - 1].p = 1;
	d->pts = pts;
	d->npts = n;
	pts = NULL;
out:
	free(pts);
	fclose(f);
	return ret;
}

/* ---- options, as data ---------------------------------------------------- */

enum fg_mode { FG_SERVER = 1, FG_CLIENT = 2 };

enum {
	OPT_ONCE = 256, OPT_POISSON, OPT_FLOWS, OPT_DURATION, OPT_SIZE, OPT_PARETO,
	OPT_CDF, OPT_MAX_SIZE, OPT_ONOFF, OPT_RATE, OPT_CHUNK, OPT_SEED, OPT_START_AT,
	OPT_MAX_OPEN, OPT_TIMEOUT, OPT_DRY_RUN, OPT_UDP, OPT_RR, OPT_REQ_SIZE, OPT_RESP_SIZE,
	OPT_TOS, OPT_END
};

#define FG_OPT(s, l, a, m, h) { .shrt = (s), .lng = (l), .arg = (a), .modes = (m), .help = (h) }

/* getopt's tables, the mode checks and --help all come from this: rows of
 * the daemons' option parser (dcli.h), with the subcommands in modes. */
static const struct dcli_opt fg_opts[] = {
	FG_OPT('p', "port", "PORT", FG_SERVER | FG_CLIENT, "TCP (and UDP) port (default 5680)"),
	FG_OPT('B', "bind", "ADDR", FG_SERVER, "listen on ADDR only (default: every IPv4 address; '::' for IPv6)"),
	FG_OPT(OPT_ONCE, "once", "N", FG_SERVER, "exit after N flows have ended (completed or aborted)"),
	FG_OPT('c', "connect", "ADDR", FG_CLIENT, "the server (name or address); not needed with --dry-run"),
	FG_OPT(OPT_POISSON, "poisson", "RATE", FG_CLIENT, "Poisson arrivals, RATE flows per second"),
	FG_OPT(OPT_FLOWS, "flows", "N", FG_CLIENT, "at most N flows; without --poisson, N flows all at time 0"),
	FG_OPT(OPT_DURATION, "duration", "SECONDS", FG_CLIENT, "arrivals (or the ON/OFF source) stop after SECONDS"),
	FG_OPT(OPT_SIZE, "size", "BYTES", FG_CLIENT, "every flow BYTES long (K/M/G = 1024^n)"),
	FG_OPT(OPT_PARETO, "pareto", "SHAPE,MEAN", FG_CLIENT, "Pareto sizes: SHAPE > 1, MEAN bytes"),
	FG_OPT(OPT_CDF, "cdf", "FILE", FG_CLIENT, "sizes from an empirical CDF: lines 'SIZE CDF', CDF 0..1"),
	FG_OPT(OPT_MAX_SIZE, "max-size", "BYTES", FG_CLIENT, "cap every drawn size at BYTES"),
	FG_OPT(OPT_ONOFF, "onoff", "ON_S,OFF_S", FG_CLIENT, "one ON/OFF source; exponential periods, these means in s"),
	FG_OPT(OPT_RATE, "rate", "BPS", FG_CLIENT, "ON/OFF: sending rate while ON (10M, 1G)"),
	FG_OPT(OPT_CHUNK, "chunk", "BYTES", FG_CLIENT, "ON/OFF: bytes per send() (default ~1 ms at --rate, 1K..64K; --udp: path MTU - 28)"),
	FG_OPT(OPT_UDP, "udp", NULL, FG_CLIENT, "ON/OFF: send UDP datagrams, no TCP connection"),
	FG_OPT(OPT_RR, "rr", "RATE", FG_CLIENT, "request/response over UDP: RATE requests per second (Poisson)"),
	FG_OPT(OPT_REQ_SIZE, "req-size", "BYTES", FG_CLIENT, "--rr: request datagram size (default 64, at least 48)"),
	FG_OPT(OPT_RESP_SIZE, "resp-size", "BYTES", FG_CLIENT, "--rr: response datagram size (default 64, at least 48)"),
	FG_OPT(OPT_TOS, "tos", "TOS", FG_CLIENT, "IP TOS / IPv6 traffic class of the sockets (0..255; DSCP << 2)"),
	FG_OPT(OPT_SEED, "seed", "N", FG_CLIENT, "random seed (default: from the clock; always in the output)"),
	FG_OPT(OPT_START_AT, "start-at", "EPOCH_S", FG_CLIENT, "time 0 is this CLOCK_REALTIME instant (Unix seconds)"),
	FG_OPT(OPT_MAX_OPEN, "max-open", "N", FG_CLIENT, "at most N flows open at once; later ones wait (default 1000)"),
	FG_OPT(OPT_TIMEOUT, "timeout", "SECONDS", FG_CLIENT, "a flow not acked SECONDS after its start fails (default: none)"),
	FG_OPT(OPT_DRY_RUN, "dry-run", NULL, FG_CLIENT, "print the schedule without connecting"),
	FG_OPT('o', "output", "FILE", FG_SERVER | FG_CLIENT, "write the JSON to FILE instead of stdout"),
	FG_OPT('v', "verbose", NULL, FG_SERVER | FG_CLIENT, "also log each failed flow or aborted connection"),
	FG_OPT('V', "version", NULL, FG_SERVER | FG_CLIENT, "print the version and exit"),
	FG_OPT('h', "help", NULL, FG_SERVER | FG_CLIENT, "show this help"),
};
#define FG_NOPTS (sizeof(fg_opts) / sizeof(fg_opts[0]))

struct fg_cfg {
	enum fg_mode mode;
	bool given[OPT_END];
	const char *host;		/* -c, or -B */
	const char *output;
	uint16_t port;
	int verbose;
	uint64_t once;
	double poisson, duration;
	uint64_t flows_max;
	struct fg_sizes sizes;
	double on_mean, off_mean;
	uint64_t rate_bps, chunk;	/* chunk 0 with --udp: from the path MTU */
	double rr;			/* --rr: requests per second */
	uint64_t req_size, resp_size;
	int tos;			/* -1: the kernel's default */
	bool udp;
	uint64_t seed;
	double start_at;		/* 0: now */
	uint64_t max_open;
	double timeout;			/* 0: none */
	bool dry_run;
};

static void fg_usage(FILE *f)
{
	static const struct { unsigned mode; const char *title; } sect[] = {
		{ FG_SERVER, "Server options" }, { FG_CLIENT, "Client options" },
	};
	size_t i, k;

	fprintf(f,
		"usage: " FG_PROG " server [-p PORT] [-B ADDR] [--once N] [-o FILE] [-v]\n"
		"       " FG_PROG " client -c ADDR [-p PORT] WORKLOAD [OPTIONS]\n"
		"       " FG_PROG " client --dry-run WORKLOAD [OPTIONS]\n"
		"       " FG_PROG " stats [FILE]     delay statistics of lines 'AT_NS DELAY_NS'\n"
		"       " FG_PROG " --version | --help\n\n"
		"Traffic for flow-completion-time experiments: one TCP connection per flow,\n"
		"the client reports each flow's completion time as JSON.\n\n"
		"Workloads (client):\n"
		"  --poisson RATE --duration S|--flows N   Poisson arrivals, with a size option\n"
		"  --flows N                               N flows at once (incast), with a size option\n"
		"  --onoff ON_S,OFF_S --rate BPS --duration S [--udp]   one paced ON/OFF source\n"
		"  --rr RATE --duration S                  UDP request/response, latency per exchange\n"
		"Size options: --size BYTES | --pareto SHAPE,MEAN | --cdf FILE\n");
	for (k = 0; k < sizeof(sect) / sizeof(sect[0]); k++) {
		fprintf(f, "\n%s:\n", sect[k].title);
		for (i = 0; i < FG_NOPTS; i++) {
			const struct dcli_opt *o = &fg_opts[i];

			if (!(o->modes & sect[k].mode) || o->modes == (FG_SERVER | FG_CLIENT))
				continue;
			dcli_opt_print(f, o, 26);
		}
	}
	fprintf(f, "\nBoth:\n");
	for (i = 0; i < FG_NOPTS; i++) {
		const struct dcli_opt *o = &fg_opts[i];

		if (o->modes == (FG_SERVER | FG_CLIENT))
			dcli_opt_print(f, o, 26);
	}
	fprintf(f, "\nExit status: 0 the run finished (failed flows are counted in the JSON),\n"
		   "1 error or interrupted, 2 bad arguments.\n");
}

static const struct dcli_opt *fg_opt_find(int id)
{
	size_t i;

	for (i = 0; i < FG_NOPTS; i++)
		if (fg_opts[i].shrt == id)
			return &fg_opts[i];
	return NULL;
}

static int fg_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fg_bad(const char *fmt, ...)
{
	va_list ap;

	fputs(FG_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static bool fg_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static bool fg_parse_double(const char *s, double *v)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && isfinite(*v);
}

/* A byte count as --size takes it (64K), or a plain decimal number. */
static bool fg_parse_bytes_d(const char *s, double *v)
{
	uint64_t u;

	if (!cfg_parse_size(s, &u)) {
		*v = (double)u;
		return true;
	}
	return fg_parse_double(s, v);
}

/* "A,B": two numbers > 0; bytes says whether B may carry a size suffix. */
static bool fg_parse_pair(const char *s, double *a, double *b, bool bytes)
{
	char buf[128], *comma;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	comma = strchr(buf, ',');
	if (!comma)
		return false;
	*comma = '\0';
	if (!fg_parse_double(buf, a))
		return false;
	return bytes ? fg_parse_bytes_d(comma + 1, b) : fg_parse_double(comma + 1, b);
}

static int fg_set_sizes(struct fg_cfg *cfg, int id, const char *name)
{
	static const int kinds[] = { OPT_SIZE, OPT_PARETO, OPT_CDF };
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i] != id && cfg->given[kinds[i]])
			return fg_bad("--%s and --%s both set the flow sizes; pick one", name,
				      fg_opt_find(kinds[i])->lng);
	return 0;
}

/* One option's value into cfg; 0 or -EINVAL after saying what was expected. */
static int fg_parse_opt(struct fg_cfg *cfg, int id, const char *arg)
{
	const char *name = fg_opt_find(id)->lng;
	uint64_t u;
	double a, b;
	int err;

	switch (id) {
	case 'p':
		if (!fg_parse_u64(arg, &u) || u < 1 || u > 65535)
			return fg_bad("bad --port '%s': expected a TCP port 1..65535", arg);
		cfg->port = (uint16_t)u;
		break;
	case 'B':
	case 'c':
		cfg->host = arg;
		break;
	case OPT_ONCE:
		if (!fg_parse_u64(arg, &u) || u < 1)
			return fg_bad("bad --once '%s': expected a number of flows >= 1", arg);
		cfg->once = u;
		break;
	case OPT_POISSON:
		if (!fg_parse_double(arg, &a) || a <= 0)
			return fg_bad("bad --poisson '%s': expected flows per second > 0", arg);
		cfg->poisson = a;
		break;
	case OPT_FLOWS:
		if (!fg_parse_u64(arg, &u) || u < 1 || u > FG_MAX_FLOWS)
			return fg_bad("bad --flows '%s': expected a number of flows 1..%llu", arg,
				      FG_MAX_FLOWS);
		cfg->flows_max = u;
		break;
	case OPT_DURATION:
		if (!fg_parse_double(arg, &a) || a <= 0)
			return fg_bad("bad --duration '%s': expected seconds > 0", arg);
		cfg->duration = a;
		break;
	case OPT_SIZE:
		if (cfg_parse_size(arg, &u) || u > FG_MAX_SIZE)
			return fg_bad("bad --size '%s': expected a byte count such as 100000 or 64K"
				      " (K/M/G = 1024^n)", arg);
		err = fg_set_sizes(cfg, id, name);
		if (err)
			return err;
		cfg->sizes.kind = FG_SIZE_FIXED;
		cfg->sizes.fixed = u;
		break;
	case OPT_PARETO:
		if (!fg_parse_pair(arg, &a, &b, true) || a <= 1 || b <= 0)
			return fg_bad("bad --pareto '%s': expected SHAPE,MEAN with SHAPE > 1 (the"
				      " mean is infinite otherwise) and MEAN > 0 bytes", arg);
		err = fg_set_sizes(cfg, id, name);
		if (err)
			return err;
		cfg->sizes.kind = FG_SIZE_PARETO;
		cfg->sizes.shape = a;
		cfg->sizes.mean = b;
		cfg->sizes.xm = b * (a - 1) / a;
		break;
	case OPT_CDF:
		err = fg_set_sizes(cfg, id, name);
		if (err)
			return err;
		cfg->sizes.kind = FG_SIZE_CDF;
		cfg->sizes.cdf_path = arg;	/* loaded once all options are in */
		break;
	case OPT_MAX_SIZE:
		if (cfg_parse_size(arg, &u) || u < 1 || u > FG_MAX_SIZE)
			return fg_bad("bad --max-size '%s': expected a byte count >= 1 (K/M/G = 1024^n)",
				      arg);
		cfg->sizes.max = u;
		break;
	case OPT_ONOFF:
		if (!fg_parse_pair(arg, &a, &b, false) || a <= 0 || b <= 0)
			return fg_bad("bad --onoff '%s': expected ON_S,OFF_S, the mean ON and OFF"
				      " periods in seconds, both > 0 (e.g. 0.5,1.5)", arg);
		cfg->on_mean = a;
		cfg->off_mean = b;
		break;
	case OPT_RATE:
		if (cfg_parse_rate(arg, &u) || !u)
			return fg_bad("bad --rate '%s': expected bits per second > 0, e.g. 10M or 1G",
				      arg);
		cfg->rate_bps = u;
		break;
	case OPT_CHUNK:
		if (cfg_parse_size(arg, &u) || u < 1 || u > FG_IOBUF)
			return fg_bad("bad --chunk '%s': expected bytes 1..%d (K = 1024)", arg, FG_IOBUF);
		cfg->chunk = u;
		break;
	case OPT_SEED:
		if (!fg_parse_u64(arg, &u))
			return fg_bad("bad --seed '%s': expected an unsigned 64-bit integer", arg);
		cfg->seed = u;
		break;
	case OPT_START_AT:
		if (!fg_parse_double(arg, &a) || a <= 0)
			return fg_bad("bad --start-at '%s': expected Unix time in seconds, e.g. $(date"
				      " +%%s.%%N) plus a few", arg);
		cfg->start_at = a;
		break;
	case OPT_MAX_OPEN:
		if (!fg_parse_u64(arg, &u) || u < 1 || u > FG_MAX_OPEN_LIMIT)
			return fg_bad("bad --max-open '%s': expected 1..%llu", arg, FG_MAX_OPEN_LIMIT);
		cfg->max_open = u;
		break;
	case OPT_TIMEOUT:
		if (!fg_parse_double(arg, &a) || a <= 0)
			return fg_bad("bad --timeout '%s': expected seconds > 0", arg);
		cfg->timeout = a;
		break;
	case OPT_DRY_RUN:
		cfg->dry_run = true;
		break;
	case OPT_UDP:
		cfg->udp = true;
		break;
	case OPT_RR:
		if (!fg_parse_double(arg, &a) || a <= 0 || a > 1e6)
			return fg_bad("bad --rr '%s': expected requests per second, > 0 and at most"
				      " 1000000", arg);
		cfg->rr = a;
		break;
	case OPT_REQ_SIZE:
	case OPT_RESP_SIZE:
		if (cfg_parse_size(arg, &u) || u < FG_DG_LEN || u > FG_UDP_MAX)
			return fg_bad("bad --%s '%s': expected bytes %d..%d (the header takes %d)",
				      name, arg, FG_DG_LEN, FG_UDP_MAX, FG_DG_LEN);
		*(id == OPT_REQ_SIZE ? &cfg->req_size : &cfg->resp_size) = u;
		break;
	case OPT_TOS:
		if (!fg_parse_u64(arg, &u) || u > 255)
			return fg_bad("bad --tos '%s': expected 0..255 (DSCP << 2, e.g. 160 for class"
				      " selector 5)", arg);
		cfg->tos = (int)u;
		break;
	case 'o':
		cfg->output = arg;
		break;
	case 'v':
		cfg->verbose++;
		break;
	}
	return 0;
}

/* The options that make sense together, checked once all are in. */
static int fg_check_client(struct fg_cfg *cfg)
{
	static const int not_onoff[] = { OPT_POISSON, OPT_FLOWS, OPT_SIZE, OPT_PARETO, OPT_CDF,
					 OPT_MAX_SIZE, OPT_MAX_OPEN };
	static const int only_onoff[] = { OPT_RATE, OPT_CHUNK, OPT_UDP };
	static const int only_rr[] = { OPT_REQ_SIZE, OPT_RESP_SIZE };
	char err[512];
	size_t i;

	if (!cfg->given[OPT_RR])
		for (i = 0; i < sizeof(only_rr) / sizeof(only_rr[0]); i++)
			if (cfg->given[only_rr[i]])
				return fg_bad("--%s is an --rr option", fg_opt_find(only_rr[i])->lng);
	if (cfg->given[OPT_RR]) {
		if (cfg->given[OPT_ONOFF])
			return fg_bad("--rr and --onoff exclude each other: one workload per client");
		for (i = 0; i < sizeof(not_onoff) / sizeof(not_onoff[0]); i++)
			if (cfg->given[not_onoff[i]])
				return fg_bad("--rr cannot be combined with --%s: request/response is"
					      " datagrams, not flows", fg_opt_find(not_onoff[i])->lng);
		for (i = 0; i < sizeof(only_onoff) / sizeof(only_onoff[0]); i++)
			if (cfg->given[only_onoff[i]])
				return fg_bad("--%s is an --onoff option (--rr is always UDP)",
					      fg_opt_find(only_onoff[i])->lng);
		if (cfg->duration <= 0)
			return fg_bad("--rr needs --duration SECONDS");
	} else if (cfg->given[OPT_ONOFF]) {
		for (i = 0; i < sizeof(not_onoff) / sizeof(not_onoff[0]); i++)
			if (cfg->given[not_onoff[i]])
				return fg_bad("--onoff cannot be combined with --%s: an ON/OFF source"
					      " is one long connection, not flows",
					      fg_opt_find(not_onoff[i])->lng);
		if (!cfg->rate_bps)
			return fg_bad("--onoff needs --rate BPS, the rate while ON");
		if (cfg->duration <= 0)
			return fg_bad("--onoff needs --duration SECONDS");
		if (cfg->udp && cfg->chunk > FG_UDP_MAX)
			return fg_bad("bad --chunk %" PRIu64 " with --udp: a datagram carries at most"
				      " %d bytes", cfg->chunk, FG_UDP_MAX);
		/* UDP: the datagram size comes from the route once the socket
		 * is connected (fg_onoff_udp_open). */
		if (!cfg->chunk && !cfg->udp) {
			/* About a millisecond of data per send: smooth enough for a
			 * switch queue, few enough wake-ups for a 10G rate. */
			cfg->chunk = cfg->rate_bps / 8000;
			if (cfg->chunk < 1024)
				cfg->chunk = 1024;
			if (cfg->chunk > 65536)
				cfg->chunk = 65536;
		}
	} else {
		if (cfg->udp)
			return fg_bad("--udp needs --onoff: only the ON/OFF source can be UDP"
				      " (a flow is a TCP connection, its FCT ends with an ack)");
		for (i = 0; i < sizeof(only_onoff) / sizeof(only_onoff[0]); i++)
			if (cfg->given[only_onoff[i]])
				return fg_bad("--%s is an --onoff option",
					      fg_opt_find(only_onoff[i])->lng);
		if (!cfg->given[OPT_POISSON] && !cfg->given[OPT_FLOWS])
			return fg_bad("missing a workload: --poisson RATE, --flows N or --onoff"
				      " ON_S,OFF_S (see --help)");
		if (cfg->given[OPT_POISSON] && cfg->duration <= 0 && !cfg->flows_max)
			return fg_bad("--poisson needs --duration SECONDS or --flows N to end");
		if (!cfg->given[OPT_POISSON] && cfg->duration > 0)
			return fg_bad("--duration needs --poisson or --onoff; --flows N alone"
				      " starts all N flows at time 0");
		if (cfg->sizes.kind == FG_SIZE_NONE)
			return fg_bad("missing the flow sizes: --size BYTES, --pareto SHAPE,MEAN"
				      " or --cdf FILE");
		if (cfg->sizes.kind == FG_SIZE_CDF &&
		    fg_cdf_load(&cfg->sizes, cfg->sizes.cdf_path, err, sizeof(err)))
			return fg_bad("bad --cdf: %s", err);
	}
	if (!cfg->host && !cfg->dry_run)
		return fg_bad("missing -c ADDR, the server to connect to");
	return 0;
}

/* 0, 1 after --help, or -EINVAL after a message. argv[0] is the subcommand. */
static int fg_parse_args(struct fg_cfg *cfg, int argc, char **argv)
{
	struct option longopts[FG_NOPTS + 1];
	char optstring[2 * FG_NOPTS + 2];
	const struct dcli_opt *o;
	int opt, err;

	/* A leading ':': a missing argument is reported as ':'. */
	dcli_getopt_tables(fg_opts, FG_NOPTS, longopts, optstring, true);

	opterr = 0;	/* our messages name the program, not the subcommand */
	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			const char *what = argv[optind - 1];
			char sopt[3] = { '-', (char)optopt, '\0' };

			if (optopt && optopt < 256 && strncmp(what, "--", 2))
				what = sopt;
			if (opt == ':')
				return fg_bad("option %s needs a value; try '" FG_PROG " --help'", what);
			return fg_bad("unknown option '%s'; try '" FG_PROG " --help'", what);
		}
		o = fg_opt_find(opt);
		if (opt == 'h') {
			fg_usage(stdout);
			return 1;
		}
		if (opt == 'V') {
			l2cc_version_print(stdout, FG_PROG);
			return 1;
		}
		if (!(o->modes & cfg->mode))
			return fg_bad("--%s is a '%s' option, not a '%s' one", o->lng,
				      cfg->mode == FG_SERVER ? "client" : "server", argv[0]);
		cfg->given[opt] = true;
		err = fg_parse_opt(cfg, opt, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		return fg_bad("unexpected argument '%s'; try '" FG_PROG " --help'", argv[optind]);
	if (cfg->mode == FG_CLIENT)
		return fg_check_client(cfg);
	return 0;
}

/* ---- shared plumbing ----------------------------------------------------- */

/* The event loop, with SIGINT and SIGTERM arriving through a signalfd in
 * it: the loop stays the one place where anything happens, and a signal
 * never interrupts a syscall. SIGHUP keeps its default (the run ends). */
static int fg_loop_open(struct loop **l)
{
	int err;

	err = loop_create(l);
	if (err) {
		pr_err("event loop: %s", strerror(-err));
		return err;
	}
	err = loop_catch_signal_set(*l, 1ull << SIGINT | 1ull << SIGTERM);
	if (err)
		pr_err("signalfd: %s", strerror(-err));
	return err;
}

/* An absolute CLOCK_MONOTONIC deadline for loop_run_once() from ns after
 * base (INT64_MAX: none). */
static uint64_t fg_deadline(int64_t deadline, uint64_t base)
{
	if (deadline == INT64_MAX)
		return LOOP_FOREVER;
	if (deadline < 0 && (uint64_t)-deadline > base)
		return 0;
	return base + (uint64_t)deadline;
}

/* One descriptor per open flow: the default soft limit of 1024 is below the
 * default --max-open plus the flows waiting for the server's FIN. */
static void fg_raise_nofile(uint64_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (need && rl.rlim_cur < need)
		pr_warn("open-file limit %llu is below the %llu descriptors this run may need;"
			" flows beyond it will fail (raise it with ulimit -n)",
			(unsigned long long)rl.rlim_cur, (unsigned long long)need);
}

static int fg_resolve(const char *host, uint16_t port, bool passive,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
		/* Without -B: IPv4 any, because the test namespaces (and many
		 * testbeds) disable IPv6 and a '::' socket would then fail. */
		.ai_family = host ? AF_UNSPEC : AF_INET,
	};
	struct addrinfo *res;
	char ps[8];
	int rc;

	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host, ps, &hints, &res);
	if (rc) {
		pr_err("cannot resolve '%s': %s", host ? host : "*",
		       rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int fg_json_write(FILE *out, struct jw *w)
{
	if (w->err)
		return w->err;
	if (fputs(jw_str_get(w), out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF)
		return -errno ? -errno : -EIO;
	return 0;
}

/* Mean, p50, p99 and max of v[0..n) (sorted in place); nulls when n == 0.
 * Percentiles by nearest rank: an observed value, no interpolation. */
static int fg_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double fg_rank(const double *v, size_t n, double pct)
{
	size_t k = (size_t)ceil(pct / 100.0 * (double)n);

	return v[k ? k - 1 : 0];
}

static void fg_stats_json(struct jw *w, const char *key, double *v, size_t n)
{
	double sum = 0;
	size_t i;

	jw_obj_begin(w, key);
	if (!n) {
		jw_null(w, "mean");
		jw_null(w, "p50");
		jw_null(w, "p99");
		jw_null(w, "max");
		jw_obj_end(w);
		return;
	}
	qsort(v, n, sizeof(*v), fg_cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	jw_double(w, "mean", sum / (double)n);
	jw_double(w, "p50", fg_rank(v, n, 50));
	jw_double(w, "p99", fg_rank(v, n, 99));
	jw_double(w, "max", v[n - 1]);
	jw_obj_end(w);
}

/* ---- stamped datagrams and their delays ---------------------------------- */

/*
 * UDP datagrams carry a header (big-endian) so that the receiver measures
 * each one's one-way delay: the sender's CLOCK_REALTIME at send() against
 * the kernel's receive stamp (SO_TIMESTAMPNS, also CLOCK_REALTIME). Network
 * namespaces share the clock, so on one machine the delay is exact; across
 * machines it is as good as their clock sync. Stream datagrams use the
 * first FG_DG_STREAM_LEN bytes, requests and responses all FG_DG_LEN.
 */

enum { FG_DG_STREAM = 1, FG_DG_REQ = 2, FG_DG_RESP = 3 };

struct fg_dgram {
	uint32_t magic;
	uint8_t type;
	uint8_t pad[3];
	uint32_t stream;		/* the source's id, random per run */
	uint32_t resp_len;		/* request: bytes the response carries */
	uint64_t seq;
	uint64_t tx_ns;			/* sender's CLOCK_REALTIME at send() */
	uint64_t srv_rx_ns;		/* response: when the request arrived */
	uint64_t srv_tx_ns;		/* response: when it was answered */
} __attribute__((packed));

_Static_assert(sizeof(struct fg_dgram) == FG_DG_LEN, "the datagram header is 48 bytes");
_Static_assert(offsetof(struct fg_dgram, srv_rx_ns) == FG_DG_STREAM_LEN,
	       "a stream datagram stops before the response's stamps");

/* One delay sample: when the datagram arrived, and how long it took (ns). */
struct fg_sample {
	int64_t at, d;
};

struct fg_samples {
	struct fg_sample *v;
	size_t n, cap;
};

/* The delay statistics a report carries, in us; n == 0: all unknown. */
struct fg_dstats {
	size_t n, ndev;
	double mean, p50, p99, max, dev_p99, dev_max;
};

static uint64_t fg_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --tos on a socket: TOS (IPv4) or traffic class (IPv6). Best effort:
 * a kernel that refuses keeps the default, and the report says which. */
static int fg_set_tos(int fd, int family, int tos)
{
	if (tos < 0)
		return 0;
	if (family == AF_INET6)
		return setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) ? -errno : 0;
	return setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) ? -errno : 0;
}

/* Samples grow by doubling: amortised, and not on a switch's path. */
static int fg_samples_add(struct fg_samples *s, int64_t at, int64_t d)
{
	struct fg_sample *nv;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 4096;
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = (struct fg_sample){ at, d };
	return 0;
}

static int fg_cmp_sample(const void *a, const void *b)
{
	const struct fg_sample *x = a, *y = b;

	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	return (x->d > y->d) - (x->d < y->d);
}

/*
 * Mean, p50, p99 and max of the delays, and the deviation from a running
 * mean: for each sample, |its delay - the mean delay of the samples that
 * arrived in the 100 ms before it|, and that deviation's p99 and max (a
 * sample with nothing in its window has none). Percentiles by nearest rank,
 * as fg_stats_json. Sorts s->v by arrival. 0 or -ENOMEM.
 */
static int fg_delay_stats(struct fg_samples *s, struct fg_dstats *o)
{
	double *d = NULL, *dev = NULL, sum = 0, wsum = 0;
	size_t i, lo = 0, nd = 0;
	int ret = 0;

	*o = (struct fg_dstats){ .n = s->n };
	if (!s->n)
		return 0;
	d = malloc(s->n * sizeof(*d));
	dev = malloc(s->n * sizeof(*dev));
	if (!d || !dev) {
		ret = -ENOMEM;
		goto out;
	}
	qsort(s->v, s->n, sizeof(*s->v), fg_cmp_sample);
	for (i = 0; i < s->n; i++) {
		/* The window [at - 100 ms, at): samples lo..i-1 once the old
		 * ones are out (samples with the same arrival stamp are not
		 * "before" each other, hence the second scan). */
		while (lo < i && s->v[lo].at < s->v[i].at - FG_WIN_NS) {
			wsum -= (double)s->v[lo].d;
			lo++;
		}
		{
			size_t hi = i;
			double ws = wsum;

			while (hi > lo && s->v[hi - 1].at == s->v[i].at) {
				hi--;
				ws -= (double)s->v[hi].d;
			}
			if (hi > lo)
				dev[nd++] = fabs((double)s->v[i].d - ws / (double)(hi - lo)) / 1e3;
		}
		wsum += (double)s->v[i].d;
		d[i] = (double)s->v[i].d / 1e3;
		sum += d[i];
	}
	qsort(d, s->n, sizeof(*d), fg_cmp_double);
	o->mean = sum / (double)s->n;
	o->p50 = fg_rank(d, s->n, 50);
	o->p99 = fg_rank(d, s->n, 99);
	o->max = d[s->n - 1];
	o->ndev = nd;
	if (nd) {
		qsort(dev, nd, sizeof(*dev), fg_cmp_double);
		o->dev_p99 = fg_rank(dev, nd, 99);
		o->dev_max = dev[nd - 1];
	}
out:
	free(d);
	free(dev);
	return ret;
}

static void fg_dstats_json(struct jw *w, const char *key, const struct fg_dstats *o)
{
	jw_obj_begin(w, key);
	jw_u64(w, "count", o->n);
	if (o->n) {
		jw_double(w, "mean", o->mean);
		jw_double(w, "p50", o->p50);
		jw_double(w, "p99", o->p99);
		jw_double(w, "max", o->max);
	} else {
		jw_null(w, "mean");
		jw_null(w, "p50");
		jw_null(w, "p99");
		jw_null(w, "max");
	}
	if (o->ndev) {
		jw_double(w, "dev_p99", o->dev_p99);
		jw_double(w, "dev_max", o->dev_max);
	} else {
		jw_null(w, "dev_p99");
		jw_null(w, "dev_max");
	}
	jw_obj_end(w);
}

/* The statistics of samples as "key": {...}; -ENOMEM writes nulls. */
static void fg_samples_json(struct jw *w, const char *key, struct fg_samples *s)
{
	struct fg_dstats o;

	if (fg_delay_stats(s, &o)) {
		pr_err("out of memory for the delay statistics");
		o = (struct fg_dstats){ 0 };
	}
	fg_dstats_json(w, key, &o);
}

/* The kernel's receive stamp of a message (SO_TIMESTAMPNS), or now. */
static int64_t fg_msg_rx_ns(struct msghdr *m)
{
	struct cmsghdr *cm;
	struct timespec ts;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
		}
	return (int64_t)fg_realtime_ns();
}

/*
 * A batch of received datagrams, FG_UDP_BATCH per recvmmsg(): the header of
 * each lands in its own slot, the rest in the common sink; the control
 * messages hold what the sockets ask for (SO_RXQ_OVFL's drop count, the
 * receive stamp, the TOS). One process is a server or a client, never
 * both: one set of buffers.
 */
static struct {
	struct mmsghdr msgs[FG_UDP_BATCH];
	struct iovec iov[FG_UDP_BATCH][2];
	struct fg_dgram hdr[FG_UDP_BATCH];
	struct sockaddr_storage names[FG_UDP_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct timespec)) +
			 CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[FG_UDP_BATCH];
} fg_rx;

/* recvmmsg() into fg_rx: the number of datagrams, or -1 with errno. */
static int fg_rx_batch(int fd)
{
	for (int i = 0; i < FG_UDP_BATCH; i++) {
		fg_rx.iov[i][0] = (struct iovec){ &fg_rx.hdr[i], sizeof(fg_rx.hdr[i]) };
		fg_rx.iov[i][1] = (struct iovec){ fg_sink, FG_UDP_MAX + 1 - sizeof(fg_rx.hdr[i]) };
		fg_rx.msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &fg_rx.names[i], .msg_namelen = sizeof(fg_rx.names[i]),
			.msg_iov = fg_rx.iov[i], .msg_iovlen = 2,
			.msg_control = fg_rx.ctl[i].buf, .msg_controllen = sizeof(fg_rx.ctl[i].buf),
		};
	}
	return recvmmsg(fd, fg_rx.msgs, FG_UDP_BATCH, MSG_DONTWAIT, NULL);
}

/*
 * `l2cc-flowgen stats [FILE]`: the delay statistics of lines "AT_NS
 * DELAY_NS" (arrival time and delay, integers in ns), as the reports
 * compute them: for checking a trace, and for testing the statistics
 * without a network.
 */
static int fg_stats_run(const char *path, FILE *out)
{
	struct fg_samples s = { 0 };
	FILE *in = stdin;
	char line[256];
	long long at, d;
	unsigned long lineno = 0;
	struct jw w;
	int ret = 0;

	jw_init(&w);
	if (path && !(in = fopen(path, "r"))) {
		ret = -errno;
		pr_err("cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	while (fgets(line, sizeof(line), in)) {
		char *p = line;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		if (sscanf(p, "%lld %lld", &at, &d) != 2) {
			ret = -EINVAL;
			pr_err("%s:%lu: expected 'AT_NS DELAY_NS'", path ? path : "stdin", lineno);
			goto out;
		}
		ret = fg_samples_add(&s, at, d);
		if (ret)
			goto out;
	}
	jw_obj_begin(&w, NULL);
	jw_str(&w, "mode", "stats");
	jw_double(&w, "window_s", (double)FG_WIN_NS / FG_NSEC);
	fg_samples_json(&w, "delay_us", &s);
	jw_obj_end(&w);
	ret = fg_json_write(out, &w);
out:
	if (in && in != stdin)
		fclose(in);
	free(s.v);
	jw_free(&w);
	return ret;
}

static uint64_t fg_default_seed(void)
{
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ((uint64_t)getpid() << 32);
	return fg_splitmix64(&x);
}

/* "addr:port" ("[v6]:port") of a socket address. */
static void fg_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

/* ---- server ---------------------------------------------------------------- */

enum fg_cstate { C_HDR, C_BODY, C_ACK, C_STREAM };
enum fg_cend { END_COMPLETE, END_ABORT, END_EMPTY };

struct fg_conn {
	struct fg_conn *prev, *next;	/* every open connection, to close on exit */
	struct fg_server *s;
	uint64_t left;			/* body bytes still to read */
	uint64_t got;
	int fd;
	uint8_t state;
	uint8_t hdr_got;
	uint8_t hdr[8];
};

/* A stamped UDP source the server heard from, by its id. */
struct fg_stream {
	uint32_t id;
	struct sockaddr_storage src;
	uint64_t datagrams, seq_max;
	struct fg_samples s;
};

#define FG_MAX_STREAMS	1024	/* more: their datagrams are counted, not timed */

struct fg_server {
	const struct fg_cfg *cfg;
	struct loop *loop;
	struct loop_timer *accept_resume;	/* armed while accepting is paused */
	int lfd, ufd;
	struct fg_conn *conns;
	uint64_t ended, completed, aborted, streams, empty, bytes;
	uint64_t open, open_max;
	uint64_t udp_datagrams, udp_bytes;
	uint32_t udp_drops;		/* SO_RXQ_OVFL: dropped, receive buffer full */
	struct fg_stream *ustreams;
	size_t nustreams, last_ustream;
	uint64_t rr_requests, rr_answered, rr_bad;
	bool stop;
};

static void fg_conn_end(struct fg_server *s, struct fg_conn *c, enum fg_cend how,
			const char *why, int err)
{
	loop_del_fd(s->loop, c->fd);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->open--;
	switch (how) {
	case END_COMPLETE:
		s->completed++;
		s->ended++;
		break;
	case END_ABORT:
		s->aborted++;
		s->ended++;
		pr_debug("connection aborted after %" PRIu64 " bytes: %s%s%s", c->got, why,
			 err ? ": " : "", err ? strerror(err) : "");
		break;
	case END_EMPTY:
		/* A port probe, not a flow: it must not use up --once. */
		s->empty++;
		break;
	}
	free(c);
	if (s->cfg->once && s->ended >= s->cfg->once)
		s->stop = true;
}

static void fg_conn_ack(struct fg_server *s, struct fg_conn *c)
{
	uint8_t ack = FG_ACK;
	ssize_t n;
	int err;

	n = send(c->fd, &ack, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == 1) {
		/* We close first (TIME_WAIT stays here, not on the client, whose
		 * ephemeral ports would run out at high flow rates). */
		fg_conn_end(s, c, END_COMPLETE, NULL, 0);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		if (c->state != C_ACK && (err = loop_mod_fd(s->loop, c->fd, EPOLLOUT))) {
			fg_conn_end(s, c, END_ABORT, "epoll_ctl", -err);
			return;
		}
		c->state = C_ACK;
		return;
	}
	fg_conn_end(s, c, END_ABORT, "send ack", n < 0 ? errno : EIO);
}

static void fg_conn_read(struct fg_server *s, struct fg_conn *c)
{
	uint64_t size, be;
	size_t want;
	ssize_t n;
	int i;

	/* A few reads, then the other connections get their turn (level-triggered
	 * epoll brings us back). */
	for (i = 0; i < 4; i++) {
		switch (c->state) {
		case C_HDR:
			want = 8 - c->hdr_got;
			break;
		case C_BODY:
			want = c->left < FG_IOBUF ? (size_t)c->left : FG_IOBUF;
			break;
		default:
			want = FG_IOBUF;
		}
		n = recv(c->fd, c->state == C_HDR ? (void *)(c->hdr + c->hdr_got) : (void *)fg_sink,
			 want, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fg_conn_end(s, c, END_ABORT, "recv", errno);
			return;
		}
		if (n == 0) {
			if (c->state == C_STREAM)
				fg_conn_end(s, c, END_COMPLETE, NULL, 0);
			else if (c->state == C_HDR && !c->hdr_got)
				fg_conn_end(s, c, END_EMPTY, NULL, 0);
			else
				fg_conn_end(s, c, END_ABORT, "closed before the end of the flow", 0);
			return;
		}
		switch (c->state) {
		case C_HDR:
			c->hdr_got += n;
			if (c->hdr_got < 8)
				break;
			memcpy(&be, c->hdr, 8);
			size = be64toh(be);
			if (size == FG_HDR_STREAM) {
				c->state = C_STREAM;
				s->streams++;
				break;
			}
			c->state = C_BODY;
			c->left = size;
			if (!size) {
				fg_conn_ack(s, c);
				return;
			}
			break;
		case C_BODY:
			c->left -= n;
			c->got += n;
			s->bytes += n;
			if (!c->left) {
				fg_conn_ack(s, c);
				return;
			}
			break;
		default:
			c->got += n;
			s->bytes += n;
		}
	}
}

static void fg_on_conn(void *ctx, int fd, uint32_t events)
{
	struct fg_conn *c = ctx;

	/* --once reached: what else is ready waits (nothing more is counted). */
	if (c->s->stop)
		return;
	if (c->state == C_ACK)
		fg_conn_ack(c->s, c);
	else
		fg_conn_read(c->s, c);
}

static void fg_server_accept_resume(void *ctx, uint64_t now)
{
	struct fg_server *s = ctx;

	loop_mod_fd(s->loop, s->lfd, EPOLLIN);
}

static void fg_server_accept(struct fg_server *s)
{
	struct fg_conn *c;
	int fd, err;

	for (;;) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* The listener would stay readable and spin the loop:
				 * stop watching it until some connections have ended. */
				pr_warn_rl("accept: %s; new connections wait 100 ms", strerror(errno));
				loop_mod_fd(s->loop, s->lfd, 0);
				loop_timer_set(s->accept_resume, loop_now_ns() + FG_ACCEPT_PAUSE_NS);
				return;
			}
			pr_warn_rl("accept: %s", strerror(errno));
			return;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			pr_warn_rl("accept: out of memory; connection dropped");
			close(fd);
			continue;
		}
		c->fd = fd;
		c->s = s;
		c->state = C_HDR;
		err = loop_add_fd(s->loop, fd, EPOLLIN, fg_on_conn, c);
		if (err) {
			pr_warn_rl("epoll_ctl: %s; connection dropped", strerror(-err));
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		if (++s->open > s->open_max)
			s->open_max = s->open;
	}
}

/* The stream with this id, added if new (NULL: the table is full). */
static struct fg_stream *fg_stream_get(struct fg_server *s, uint32_t id,
				       const struct sockaddr_storage *src)
{
	struct fg_stream *st;
	size_t i;

	if (s->nustreams && s->ustreams[s->last_ustream].id == id)
		return &s->ustreams[s->last_ustream];
	for (i = 0; i < s->nustreams; i++)
		if (s->ustreams[i].id == id)
			goto found;
	if (s->nustreams == FG_MAX_STREAMS)
		return NULL;
	st = realloc(s->ustreams, (s->nustreams + 1) * sizeof(*st));
	if (!st)
		return NULL;
	s->ustreams = st;
	i = s->nustreams++;
	s->ustreams[i] = (struct fg_stream){ .id = id, .src = *src };
found:
	s->last_ustream = i;
	return &s->ustreams[i];
}

/* A request: the response goes back at once, as large as asked, with the
 * request's stamps and ours, and with the request's TOS (the class of a
 * prioritised exchange is the same both ways). */
static void fg_server_answer(struct fg_server *s, const struct fg_dgram *req, struct msghdr *m,
			     int64_t rx_ns)
{
	struct fg_dgram resp = *req;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[2];
	struct msghdr out = { .msg_name = m->msg_name, .msg_namelen = m->msg_namelen,
			      .msg_iov = iov, .msg_iovlen = 2 };
	struct cmsghdr *cm;
	uint32_t len = be32toh(req->resp_len);
	int tos = -1;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS)
			tos = *(uint8_t *)CMSG_DATA(cm);
		else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS)
			memcpy(&tos, CMSG_DATA(cm), sizeof(int));
	}
	if (len < FG_DG_LEN || len > FG_UDP_MAX) {
		s->rr_bad++;
		return;
	}
	if (tos > 0) {
		const bool v6 = ((struct sockaddr *)m->msg_name)->sa_family == AF_INET6;

		out.msg_control = ctl.buf;
		out.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&out);
		cm->cmsg_level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
		cm->cmsg_type = v6 ? IPV6_TCLASS : IP_TOS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &tos, sizeof(int));
	}
	resp.type = FG_DG_RESP;
	resp.srv_rx_ns = htobe64((uint64_t)rx_ns);
	iov[0] = (struct iovec){ &resp, FG_DG_LEN };
	iov[1] = (struct iovec){ fg_zero, len - FG_DG_LEN };
	resp.srv_tx_ns = htobe64(fg_realtime_ns());
	if (sendmsg(s->ufd, &out, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
		s->rr_answered++;
	else
		pr_debug_rl("UDP response: %s", strerror(errno));
}

/* One datagram: stamped ones are timed (streams) or answered (requests). */
static void fg_server_dgram(struct fg_server *s, const struct fg_dgram *h, struct msghdr *m,
			    size_t len)
{
	struct fg_stream *st;
	int64_t rx_ns;

	if (len < FG_DG_STREAM_LEN || be32toh(h->magic) != FG_DG_MAGIC)
		return;		/* zeros: a short remainder, or an older source */
	rx_ns = fg_msg_rx_ns(m);
	if (h->type == FG_DG_REQ && len >= FG_DG_LEN) {
		s->rr_requests++;
		fg_server_answer(s, h, m, rx_ns);
		return;
	}
	if (h->type != FG_DG_STREAM)
		return;
	st = fg_stream_get(s, be32toh(h->stream), m->msg_name);
	if (!st)
		return;
	st->datagrams++;
	if (be64toh(h->seq) > st->seq_max)
		st->seq_max = be64toh(h->seq);
	if (fg_samples_add(&st->s, rx_ns, rx_ns - (int64_t)be64toh(h->tx_ns)))
		pr_warn_rl("out of memory: a datagram's delay is not kept");
}

/*
 * The datagrams waiting on the UDP socket, a batch per recvmmsg(), at most
 * max_rounds batches: a flood must not starve the TCP connections
 * (level-triggered epoll brings us back). Each message carries the
 * socket's running count of drops (SO_RXQ_OVFL).
 */
static void fg_server_udp_read(struct fg_server *s, int max_rounds)
{
	struct mmsghdr *msgs = fg_rx.msgs;
	struct cmsghdr *cm;
	int n, i, rounds;

	for (rounds = 0; rounds < max_rounds; rounds++) {
		n = fg_rx_batch(s->ufd);
		if (n < 0) {
			/* ECONNREFUSED and friends are about datagrams we never
			 * sent; nothing here is worth stopping for. */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_debug_rl("UDP recvmmsg: %s", strerror(errno));
			return;
		}
		for (i = 0; i < n; i++) {
			s->udp_datagrams++;
			s->udp_bytes += msgs[i].msg_len;
			for (cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm;
			     cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm))
				if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL)
					memcpy(&s->udp_drops, CMSG_DATA(cm), sizeof(uint32_t));
			fg_server_dgram(s, &fg_rx.hdr[i], &msgs[i].msg_hdr, msgs[i].msg_len);
		}
		if (n < FG_UDP_BATCH)
			return;
	}
}

static void fg_on_udp(void *ctx, int fd, uint32_t events)
{
	struct fg_server *s = ctx;

	if (!s->stop)
		fg_server_udp_read(s, 16);
}

static void fg_on_listen(void *ctx, int fd, uint32_t events)
{
	struct fg_server *s = ctx;

	if (!s->stop)
		fg_server_accept(s);
}

/* The UDP socket on the listener's address and port: UDP ON/OFF sources
 * are counted there, and the kernel does not answer them with ICMP port
 * unreachables. */
static int fg_server_udp_open(struct fg_server *s, const struct sockaddr_storage *ss,
			      socklen_t len)
{
	const struct fg_cfg *cfg = s->cfg;
	int one = 1, sz = FG_UDP_RCVBUF, err;

	s->ufd = socket(ss->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->ufd < 0) {
		err = -errno;
		pr_err("UDP socket: %s", strerror(errno));
		return err;
	}
	/* Both best effort: a smaller buffer only means earlier drops, and
	 * without SO_RXQ_OVFL they are not counted. */
	setsockopt(s->ufd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(s->ufd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* Delays from the kernel's receive stamp: our own wake-up is not
	 * the network's. Without it, the time we read the datagram. */
	setsockopt(s->ufd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	/* A response goes back in the request's class. */
	if (ss->ss_family == AF_INET6)
		setsockopt(s->ufd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
	else
		setsockopt(s->ufd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	if (bind(s->ufd, (const struct sockaddr *)ss, len)) {
		err = -errno;
		pr_err("bind UDP %s port %u: %s", cfg->host ? cfg->host : "0.0.0.0", cfg->port,
		       strerror(errno));
		return err;
	}
	err = loop_add_fd(s->loop, s->ufd, EPOLLIN, fg_on_udp, s);
	if (err)
		pr_err("epoll_ctl: %s", strerror(-err));
	return err;
}

static int fg_server_open(struct fg_server *s)
{
	const struct fg_cfg *cfg = s->cfg;
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, err;

	err = fg_resolve(cfg->host, cfg->port, true, &ss, &len);
	if (err)
		return err;
	s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		err = -errno;
		pr_err("socket: %s", strerror(errno));
		return err;
	}
	/* A restarted server must not wait for the last run's TIME_WAITs. */
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&ss, len)) {
		err = -errno;
		pr_err("bind %s port %u: %s", cfg->host ? cfg->host : "0.0.0.0", cfg->port,
		       strerror(errno));
		return err;
	}
	/* Before listen(): whoever waits for the listener (the tests, with
	 * ss -lt) may then send datagrams too. */
	err = fg_server_udp_open(s, &ss, len);
	if (err)
		return err;
	/* Poisson bursts and incasts open many connections at once. */
	if (listen(s->lfd, 4096)) {
		err = -errno;
		pr_err("listen: %s", strerror(errno));
		return err;
	}
	err = loop_add_fd(s->loop, s->lfd, EPOLLIN, fg_on_listen, s);
	if (err) {
		pr_err("epoll_ctl: %s", strerror(-err));
		return err;
	}
	pr_info("listening on %s port %u (TCP and UDP)", cfg->host ? cfg->host : "0.0.0.0",
		cfg->port);
	return 0;
}

static int fg_server_run(const struct fg_cfg *cfg, FILE *out)
{
	struct fg_server s = { .cfg = cfg, .lfd = -1, .ufd = -1 };
	struct jw w;
	size_t i;
	int err;

	jw_init(&w);
	fg_raise_nofile(0);
	err = fg_loop_open(&s.loop);
	if (err)
		goto out;
	err = loop_timer_create(s.loop, fg_server_accept_resume, &s, &s.accept_resume);
	if (err) {
		pr_err("event loop timer: %s", strerror(-err));
		goto out;
	}
	err = fg_server_open(&s);
	if (err)
		goto out;

	while (!s.stop) {
		err = loop_run_once(s.loop, LOOP_FOREVER);
		if (err < 0) {
			pr_err("event loop: %s", strerror(-err));
			goto out;
		}
		err = 0;
		if (loop_take_signals(s.loop))
			s.stop = true;
	}

	/* What arrived before the stop is counted too. The buffer holds a
	 * few thousand datagrams; the bound keeps a source that is still
	 * sending from holding up the exit. */
	fg_server_udp_read(&s, 1024);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "mode", "server");
	jw_str(&w, "listen", cfg->host ? cfg->host : "0.0.0.0");
	jw_u64(&w, "port", cfg->port);
	jw_u64(&w, "flows", s.ended);
	jw_u64(&w, "completed", s.completed);
	jw_u64(&w, "aborted", s.aborted);
	jw_u64(&w, "streams", s.streams);
	jw_u64(&w, "empty", s.empty);
	jw_u64(&w, "bytes", s.bytes);
	jw_u64(&w, "open_max", s.open_max);
	jw_u64(&w, "udp_datagrams", s.udp_datagrams);
	jw_u64(&w, "udp_bytes", s.udp_bytes);
	jw_u64(&w, "udp_drops", s.udp_drops);
	jw_arr_begin(&w, "udp_streams");
	for (i = 0; i < s.nustreams; i++) {
		struct fg_stream *st = &s.ustreams[i];
		char addr[INET6_ADDRSTRLEN + 8];

		jw_obj_begin(&w, NULL);
		jw_u64(&w, "stream", st->id);
		fg_addr_str(&st->src, addr, sizeof(addr));
		jw_str(&w, "src", addr);
		jw_u64(&w, "datagrams", st->datagrams);
		/* Sequence numbers start at 0; reordered ones are not lost. */
		jw_u64(&w, "lost", st->seq_max + 1 > st->datagrams ?
				   st->seq_max + 1 - st->datagrams : 0);
		fg_samples_json(&w, "owd_us", &st->s);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_u64(&w, "rr_requests", s.rr_requests);
	jw_u64(&w, "rr_answered", s.rr_answered);
	jw_obj_end(&w);
	err = fg_json_write(out, &w);
	if (err)
		pr_err("writing the output: %s", strerror(-err));
out:
	while (s.conns) {
		struct fg_conn *c = s.conns;

		s.conns = c->next;
		close(c->fd);
		free(c);
	}
	if (s.lfd >= 0)
		close(s.lfd);
	if (s.ufd >= 0)
		close(s.ufd);
	for (i = 0; i < s.nustreams; i++)
		free(s.ustreams[i].s.v);
	free(s.ustreams);
	loop_destroy(s.loop);	/* the signalfd and the timer with it */
	jw_free(&w);
	return err;
}

/* ---- client: flows --------------------------------------------------------- */

enum fg_fstate { F_PENDING, F_CONNECTING, F_SENDING, F_ACKWAIT, F_DRAIN, F_DONE, F_FAILED };

struct fg_flow {
	uint64_t size;
	uint64_t sent;			/* payload bytes handed to TCP */
	int64_t sched_ns;		/* scheduled start, from time 0 */
	int64_t start_ns;		/* actual start: just before connect() */
	int64_t ack_ns;
	struct fg_flow *prev, *next;	/* on the open or the drain list */
	struct fg_client *c;		/* the event loop hands us only the flow */
	const char *err_what;
	int err;			/* errno for err_what; 0: none */
	int fd;
	uint32_t id;
	uint8_t state;
	uint8_t hdr_sent;
	bool started;
	bool limited;			/* waited for --max-open */
};

/* Flows join at the tail, so both lists stay in start (ack) order and the
 * oldest entry is the first to time out. */
struct fg_list {
	struct fg_flow *head, *tail;
	uint64_t n;
};

struct fg_client {
	const struct fg_cfg *cfg;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct fg_flow *flows;
	size_t nflows, next;
	struct fg_list open, drain;
	struct loop *loop;
	uint32_t src_events;		/* ON/OFF: what the loop saw on the socket */
	uint64_t t0;			/* CLOCK_MONOTONIC ns of time 0 */
	double t0_real;			/* the same instant, Unix seconds */
	int64_t last_full_ns;		/* the last time --max-open was reached */
	int64_t timeout_ns;		/* 0: none */
	bool interrupted;
};

static inline int64_t fg_rel_now(const struct fg_client *c)
{
	return (int64_t)(loop_now_ns() - c->t0);
}

/* One pass of the event loop until deadline, ns after time 0 (INT64_MAX:
 * none); SIGINT/SIGTERM mark the run interrupted. 0 or -errno. */
static int fg_client_wait(struct fg_client *c, int64_t deadline)
{
	int n = loop_run_once(c->loop, fg_deadline(deadline, c->t0));

	if (n < 0)
		return n;
	if (loop_take_signals(c->loop))
		c->interrupted = true;
	return 0;
}

static void fg_list_add(struct fg_list *l, struct fg_flow *f)
{
	f->next = NULL;
	f->prev = l->tail;
	if (l->tail)
		l->tail->next = f;
	else
		l->head = f;
	l->tail = f;
	l->n++;
}

static void fg_list_del(struct fg_list *l, struct fg_flow *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		l->head = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		l->tail = f->prev;
	f->prev = f->next = NULL;
	l->n--;
}

/* Take f off the open list; the flow that was waiting for a slot can tell
 * from last_full_ns that it was held back. */
static void fg_flow_unopen(struct fg_client *c, struct fg_flow *f)
{
	if (c->open.n >= c->cfg->max_open)
		c->last_full_ns = fg_rel_now(c);
	fg_list_del(&c->open, f);
}

static void fg_flow_fail(struct fg_client *c, struct fg_flow *f, const char *what, int err)
{
	if (f->state >= F_CONNECTING && f->state <= F_ACKWAIT)
		fg_flow_unopen(c, f);
	if (f->fd >= 0) {
		loop_del_fd(c->loop, f->fd);	/* -ENOENT if it never got there */
		close(f->fd);
		f->fd = -1;
	}
	f->state = F_FAILED;
	f->err_what = what;
	f->err = err;
	pr_debug("flow %u failed: %s%s%s", f->id, what, err ? ": " : "", err ? strerror(err) : "");
}

static void fg_flow_close(struct fg_client *c, struct fg_flow *f)
{
	if (f->state == F_DRAIN)
		fg_list_del(&c->drain, f);
	loop_del_fd(c->loop, f->fd);
	close(f->fd);
	f->fd = -1;
	f->state = F_DONE;
}

static void fg_on_flow(void *ctx, int fd, uint32_t events);

static void fg_flow_start(struct fg_client *c, struct fg_flow *f)
{
	int one = 1, err;

	f->limited = c->last_full_ns >= f->sched_ns;
	f->started = true;
	f->start_ns = fg_rel_now(c);
	f->fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->fd < 0) {
		fg_flow_fail(c, f, "socket", errno);
		return;
	}
	/* A flow's tail is usually less than a segment; Nagle would hold it
	 * for the ACK of the data before it, which a delayed ACK can postpone
	 * by 40 ms, and that is not the network's doing. */
	setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fg_set_tos(f->fd, c->addr.ss_family, c->cfg->tos);
	f->state = F_CONNECTING;
	fg_list_add(&c->open, f);
	f->start_ns = fg_rel_now(c);
	if (connect(f->fd, (struct sockaddr *)&c->addr, c->addrlen) && errno != EINPROGRESS) {
		fg_flow_fail(c, f, "connect", errno);
		return;
	}
	err = loop_add_fd(c->loop, f->fd, EPOLLOUT, fg_on_flow, f);
	if (err)
		fg_flow_fail(c, f, "epoll_ctl", -err);
}

static void fg_flow_send(struct fg_client *c, struct fg_flow *f)
{
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov };
	uint64_t be = htobe64(f->size), left;
	uint8_t hdr[8];
	size_t h;
	ssize_t n;
	int err;

	memcpy(hdr, &be, 8);
	for (;;) {
		msg.msg_iovlen = 0;
		if (f->hdr_sent < 8) {
			iov[msg.msg_iovlen].iov_base = hdr + f->hdr_sent;
			iov[msg.msg_iovlen++].iov_len = 8 - f->hdr_sent;
		}
		left = f->size - f->sent;
		if (left) {
			iov[msg.msg_iovlen].iov_base = fg_zero;
			iov[msg.msg_iovlen++].iov_len = left < FG_IOBUF ? (size_t)left : FG_IOBUF;
		}
		if (!msg.msg_iovlen)
			break;
		n = sendmsg(f->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fg_flow_fail(c, f, "send", errno);
			return;		/* EPOLLOUT is still armed */
		}
		h = 8 - f->hdr_sent;
		if ((size_t)n < h)
			h = (size_t)n;
		f->hdr_sent += h;
		f->sent += (size_t)n - h;
	}
	err = loop_mod_fd(c->loop, f->fd, EPOLLIN);
	if (err) {
		fg_flow_fail(c, f, "epoll_ctl", -err);
		return;
	}
	f->state = F_ACKWAIT;
}

static void fg_flow_recv(struct fg_client *c, struct fg_flow *f)
{
	char buf[64];
	ssize_t n;

	n = recv(f->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (f->state == F_DRAIN)
			fg_flow_close(c, f);
		else
			fg_flow_fail(c, f, "recv", errno);
		return;
	}
	if (f->state == F_DRAIN) {
		if (n == 0)
			fg_flow_close(c, f);
		return;		/* bytes after the ack: not ours to judge */
	}
	if (n == 0) {
		fg_flow_fail(c, f, "the server closed the connection before the ack", 0);
		return;
	}
	f->ack_ns = fg_rel_now(c);
	fg_flow_unopen(c, f);
	/* The server closes right after the ack; closing after its FIN leaves
	 * TIME_WAIT on the server instead of using up our ephemeral ports. */
	n = recv(f->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		f->state = F_DRAIN;
		fg_list_add(&c->drain, f);
		return;
	}
	fg_flow_close(c, f);
}

static void fg_on_flow(void *ctx, int fd, uint32_t events)
{
	struct fg_flow *f = ctx;
	struct fg_client *c = f->c;
	socklen_t len = sizeof(int);
	int err = 0;

	switch (f->state) {
	case F_CONNECTING:
		if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (!err && !(events & EPOLLOUT))
			err = ECONNABORTED;
		if (err) {
			fg_flow_fail(c, f, "connect", err);
			return;
		}
		f->state = F_SENDING;
		fg_flow_send(c, f);
		break;
	case F_SENDING:
		fg_flow_send(c, f);	/* an error shows as sendmsg's errno */
		break;
	case F_ACKWAIT:
	case F_DRAIN:
		fg_flow_recv(c, f);
		break;
	}
}

static int fg_schedule(struct fg_client *c, const struct fg_cfg *cfg, struct fg_flow **out,
		       size_t *nout)
{
	struct fg_rng arr, sz;
	struct fg_flow *flows = NULL, *nf;
	size_t n = 0, cap = 0;
	double t = 0;

	fg_rng_seed(&arr, cfg->seed, FG_STREAM_ARRIVALS);
	fg_rng_seed(&sz, cfg->seed, FG_STREAM_SIZES);
	for (;;) {
		if (cfg->flows_max && n >= cfg->flows_max)
			break;
		if (cfg->poisson > 0) {
			t += fg_rng_exp(&arr, 1.0 / cfg->poisson);
			if (cfg->duration > 0 && t >= cfg->duration)
				break;
		}
		if (n >= FG_MAX_FLOWS) {
			free(flows);
			return -E2BIG;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			nf = realloc(flows, cap * sizeof(*flows));
			if (!nf) {
				free(flows);
				return -ENOMEM;
			}
			flows = nf;
		}
		flows[n] = (struct fg_flow){
			.size = fg_size_draw(&cfg->sizes, &sz),
			.sched_ns = llround(t * FG_NSEC),
			.c = c,
			.fd = -1,
			.id = (uint32_t)n,
			.state = F_PENDING,
		};
		n++;
	}
	*out = flows;
	*nout = n;
	return 0;
}

static void fg_flow_error_str(const struct fg_flow *f, char *buf, size_t len)
{
	if (f->err)
		snprintf(buf, len, "%s: %s", f->err_what, strerror(f->err));
	else
		snprintf(buf, len, "%s", f->err_what ? f->err_what : "unknown");
}

static void fg_workload_json(struct jw *w, const struct fg_cfg *cfg)
{
	const struct fg_sizes *d = &cfg->sizes;

	jw_obj_begin(w, "workload");
	if (cfg->given[OPT_POISSON]) {
		jw_str(w, "arrivals", "poisson");
		jw_double(w, "rate", cfg->poisson);
	} else {
		jw_str(w, "arrivals", "all-at-once");
	}
	if (cfg->duration > 0)
		jw_double(w, "duration", cfg->duration);
	if (cfg->flows_max)
		jw_u64(w, "max_flows", cfg->flows_max);
	switch (d->kind) {
	case FG_SIZE_FIXED:
		jw_str(w, "sizes", "fixed");
		jw_u64(w, "size", d->fixed);
		break;
	case FG_SIZE_PARETO:
		jw_str(w, "sizes", "pareto");
		jw_double(w, "shape", d->shape);
		jw_double(w, "mean", d->mean);
		jw_double(w, "xm", d->xm);
		break;
	case FG_SIZE_CDF:
		jw_str(w, "sizes", "cdf");
		jw_str(w, "cdf", d->cdf_path);
		break;
	case FG_SIZE_NONE:
		break;
	}
	if (d->max)
		jw_u64(w, "max_size", d->max);
	jw_u64(w, "max_open", cfg->max_open);
	if (cfg->timeout > 0)
		jw_double(w, "timeout", cfg->timeout);
	jw_obj_end(w);
}

/* The client's output opens with what it ran: the mode, the server (or the
 * dry run), time 0 and the seed. */
static void fg_client_json_head(struct jw *w, const struct fg_client *c, const char *mode)
{
	const struct fg_cfg *cfg = c->cfg;

	jw_obj_begin(w, NULL);
	jw_str(w, "mode", mode);
	if (cfg->dry_run) {
		jw_bool(w, "dry_run", true);
	} else {
		jw_str(w, "server", cfg->host);
		jw_u64(w, "port", cfg->port);
		if (c->t0_real > 0)
			jw_double(w, "t0_realtime", c->t0_real);
		else
			jw_null(w, "t0_realtime");	/* never got to time 0 */
	}
	jw_u64(w, "seed", cfg->seed);
}

/* ... and closes with how it ended (an ON/OFF source's or an rr run's):
 * writes the document and frees it. 0 or -errno. */
static int fg_client_json_tail(const struct fg_client *c, struct jw *w, const char *error,
			       FILE *out)
{
	int ret;

	if (c->interrupted)
		jw_bool(w, "interrupted", true);
	if (error)
		jw_str(w, "error", error);
	jw_obj_end(w);
	ret = fg_json_write(out, w);
	jw_free(w);
	return ret;
}

static int fg_flows_json(const struct fg_client *c, FILE *out)
{
	const struct fg_cfg *cfg = c->cfg;
	uint64_t done = 0, failed = 0, limited = 0, bytes = 0;
	size_t i, nfct = 0, nlate = 0;
	double *fct = NULL, *late = NULL;
	char err[256];
	struct jw w;
	int ret;

	jw_init(&w);
	fct = malloc((c->nflows + 1) * sizeof(*fct));
	late = malloc((c->nflows + 1) * sizeof(*late));
	if (!fct || !late) {
		ret = -ENOMEM;
		goto out;
	}
	fg_client_json_head(&w, c, "flows");
	fg_workload_json(&w, cfg);
	jw_arr_begin(&w, "flows");
	for (i = 0; i < c->nflows; i++) {
		const struct fg_flow *f = &c->flows[i];
		bool ok = f->state == F_DONE || f->state == F_DRAIN;

		jw_obj_begin(&w, NULL);
		jw_u64(&w, "id", f->id);
		jw_double(&w, "start", (double)f->sched_ns / FG_NSEC);
		jw_u64(&w, "size", f->size);
		if (cfg->dry_run) {
			fct[nfct++] = (double)f->size;	/* size statistics, below */
			bytes += f->size;
			jw_obj_end(&w);
			continue;
		}
		if (ok) {
			fct[nfct++] = (double)(f->ack_ns - f->start_ns) / 1e3;
			jw_double(&w, "fct_us", fct[nfct - 1]);
			done++;
			bytes += f->size;
		} else {
			jw_null(&w, "fct_us");
			failed++;
		}
		if (f->started) {
			late[nlate++] = (double)(f->start_ns - f->sched_ns) / 1e3;
			jw_double(&w, "late_us", late[nlate - 1]);
		} else {
			jw_null(&w, "late_us");	/* never started */
		}
		jw_bool(&w, "limited", f->limited);
		limited += f->limited;
		if (!ok) {
			fg_flow_error_str(f, err, sizeof(err));
			jw_str(&w, "error", err);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_begin(&w, "summary");
	jw_u64(&w, "flows", c->nflows);
	if (cfg->dry_run) {
		jw_u64(&w, "bytes", bytes);
		fg_stats_json(&w, "size", fct, nfct);
	} else {
		jw_u64(&w, "completed", done);
		jw_u64(&w, "failed", failed);
		jw_u64(&w, "bytes", bytes);
		jw_u64(&w, "limited", limited);
		if (c->interrupted)
			jw_bool(&w, "interrupted", true);
		fg_stats_json(&w, "fct_us", fct, nfct);
		fg_stats_json(&w, "late_us", late, nlate);
	}
	jw_obj_end(&w);
	jw_obj_end(&w);
	ret = fg_json_write(out, &w);
out:
	free(fct);
	free(late);
	jw_free(&w);
	return ret;
}

/* Time 0 is --start-at, or now. */
static void fg_client_time0(struct fg_client *c)
{
	struct timespec rt;
	double real_now, ahead;
	uint64_t mono_now;

	clock_gettime(CLOCK_REALTIME, &rt);
	mono_now = loop_now_ns();
	real_now = (double)rt.tv_sec + (double)rt.tv_nsec / FG_NSEC;
	c->t0 = mono_now;
	c->t0_real = real_now;
	if (c->cfg->start_at <= 0)
		return;
	ahead = c->cfg->start_at - real_now;
	if (ahead < 0) {
		pr_warn("--start-at is %.3f s in the past; starting now", -ahead);
		return;
	}
	c->t0 = mono_now + (uint64_t)llround(ahead * FG_NSEC);
	c->t0_real = c->cfg->start_at;
	pr_info("starting in %.3f s", ahead);
}

static int fg_client_flows(struct fg_client *c)
{
	const struct fg_cfg *cfg = c->cfg;
	struct fg_flow *f;
	int64_t now, deadline;
	int err;

	fg_client_time0(c);
	c->last_full_ns = INT64_MIN;
	for (;;) {
		now = fg_rel_now(c);
		while (c->timeout_ns && c->open.head && c->open.head->start_ns + c->timeout_ns <= now)
			fg_flow_fail(c, c->open.head, "no ack within --timeout", 0);
		while (c->drain.head && c->drain.head->ack_ns + FG_DRAIN_NS <= now)
			fg_flow_close(c, c->drain.head);
		while (c->next < c->nflows && c->flows[c->next].sched_ns <= now &&
		       c->open.n < cfg->max_open)
			fg_flow_start(c, &c->flows[c->next++]);
		if (c->next == c->nflows && !c->open.n)
			break;

		deadline = INT64_MAX;
		if (c->next < c->nflows && c->open.n < cfg->max_open)
			deadline = c->flows[c->next].sched_ns;
		if (c->timeout_ns && c->open.head && c->open.head->start_ns + c->timeout_ns < deadline)
			deadline = c->open.head->start_ns + c->timeout_ns;
		if (c->drain.head && c->drain.head->ack_ns + FG_DRAIN_NS < deadline)
			deadline = c->drain.head->ack_ns + FG_DRAIN_NS;
		err = fg_client_wait(c, deadline);
		if (err) {
			pr_err("event loop: %s", strerror(-err));
			return err;
		}
		if (c->interrupted)
			break;
	}
	/* Interrupted: what is open or waiting fails, and says why. */
	while (c->open.head)
		fg_flow_fail(c, c->open.head, "interrupted", 0);
	for (; c->next < c->nflows; c->next++) {
		f = &c->flows[c->next];
		f->state = F_FAILED;
		f->err_what = "interrupted before its start";
	}
	while (c->drain.head)
		fg_flow_close(c, c->drain.head);
	return 0;
}

/* ---- client: ON/OFF source -------------------------------------------------- */

struct fg_period {
	int64_t start_ns, end_ns;
	uint64_t bytes;			/* handed to TCP (or sent as UDP payload) in it */
};

/* What the report says about the source besides its periods. */
struct fg_onoff_out {
	uint64_t chunk;			/* bytes per send(); 0: not known (a --udp dry run) */
	int mtu;			/* UDP: the path MTU, from the connected socket */
	uint64_t datagrams;		/* UDP: datagrams sent */
	uint64_t blocked;		/* UDP: sends refused with the host's queue full */
	uint64_t blocked_bytes;		/* UDP: the credit dropped with them */
	uint64_t refused;		/* UDP: sends that reported an ICMP port unreachable */
	uint32_t stream;		/* UDP: the id in every stamped datagram */
	uint64_t seq;			/* UDP: stamped datagrams sent */
};

/*
 * The ON periods up to the duration. The first state is ON with probability
 * on/(on+off), the stationary share: with exponential periods the process
 * then looks the same at time 0 as at any later time, and sources with
 * different seeds do not all start ON together.
 */
static int fg_onoff_periods(const struct fg_cfg *cfg, struct fg_period **out, size_t *nout)
{
	struct fg_period *per = NULL, *np;
	size_t n = 0, cap = 0;
	struct fg_rng r;
	double t = 0, len, end;
	bool on;

	fg_rng_seed(&r, cfg->seed, FG_STREAM_ONOFF);
	on = fg_rng_unit(&r) <= cfg->on_mean / (cfg->on_mean + cfg->off_mean);
	while (t < cfg->duration) {
		len = fg_rng_exp(&r, on ? cfg->on_mean : cfg->off_mean);
		if (on) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				np = realloc(per, cap * sizeof(*per));
				if (!np) {
					free(per);
					return -ENOMEM;
				}
				per = np;
			}
			end = t + len < cfg->duration ? t + len : cfg->duration;
			per[n++] = (struct fg_period){ llround(t * FG_NSEC), llround(end * FG_NSEC), 0 };
		}
		t += len;
		on = !on;
	}
	*out = per;
	*nout = n;
	return 0;
}

static int fg_onoff_json(const struct fg_client *c, const struct fg_period *per, size_t nper,
			 int64_t stop_ns, const struct fg_onoff_out *o, const char *error,
			 FILE *out)
{
	const struct fg_cfg *cfg = c->cfg;
	uint64_t bytes = 0, b;
	double on_s = 0, dur;
	struct jw w;
	size_t i;

	jw_init(&w);
	fg_client_json_head(&w, c, "onoff");
	jw_str(&w, "proto", cfg->udp ? "udp" : "tcp");
	jw_u64(&w, "rate_bps", cfg->rate_bps);
	if (o->chunk)
		jw_u64(&w, "chunk", o->chunk);
	else
		jw_null(&w, "chunk");	/* --udp --dry-run: the route is not looked up */
	jw_double(&w, "on_mean", cfg->on_mean);
	jw_double(&w, "off_mean", cfg->off_mean);
	jw_double(&w, "duration", cfg->duration);
	jw_arr_begin(&w, "on_periods");
	for (i = 0; i < nper && per[i].start_ns < stop_ns; i++) {
		dur = (double)((per[i].end_ns < stop_ns ? per[i].end_ns : stop_ns) - per[i].start_ns) /
		      FG_NSEC;
		/* A dry run shows what the rate would send. */
		b = cfg->dry_run ? (uint64_t)(dur * (double)cfg->rate_bps / 8) : per[i].bytes;
		jw_obj_begin(&w, NULL);
		jw_double(&w, "start", (double)per[i].start_ns / FG_NSEC);
		jw_double(&w, "dur", dur);
		jw_u64(&w, "bytes", b);
		jw_obj_end(&w);
		on_s += dur;
		bytes += b;
	}
	jw_arr_end(&w);
	jw_double(&w, "on_time", on_s);
	jw_u64(&w, "bytes", bytes);
	jw_double(&w, "on_rate_bps", on_s > 0 ? (double)bytes * 8 / on_s : NAN);
	if (cfg->udp && !cfg->dry_run) {
		if (o->mtu)
			jw_u64(&w, "mtu", (uint64_t)o->mtu);
		else
			jw_null(&w, "mtu");	/* never got a socket */
		jw_u64(&w, "datagrams", o->datagrams);
		jw_u64(&w, "send_blocked", o->blocked);
		jw_u64(&w, "blocked_bytes", o->blocked_bytes);
		jw_u64(&w, "refused", o->refused);
		jw_u64(&w, "stream", o->stream);
		jw_u64(&w, "stamped", o->seq);
	}
	return fg_client_json_tail(c, &w, error, out);
}

/* The ON/OFF source's one socket: the loop only notes what it saw. */
static void fg_on_source(void *ctx, int fd, uint32_t events)
{
	((struct fg_client *)ctx)->src_events |= events;
}

/* Connect the source's socket and wait (signals still heard) until done;
 * the socket stays in the event loop, waiting for EPOLLOUT. */
static int fg_onoff_connect(struct fg_client *c, int fd, char *error, size_t errlen)
{
	int64_t deadline = INT64_MAX;
	socklen_t len = sizeof(int);
	int n, err = 0;

	if (c->timeout_ns)
		deadline = (int64_t)loop_now_ns() + c->timeout_ns;
	if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen) && errno != EINPROGRESS) {
		err = errno;
		goto fail;
	}
	err = -loop_add_fd(c->loop, fd, EPOLLOUT, fg_on_source, c);
	if (err)
		goto fail;
	for (;;) {
		c->src_events = 0;
		n = loop_run_once(c->loop, fg_deadline(deadline, 0));
		if (n < 0) {
			err = -n;
			goto fail;
		}
		if (loop_take_signals(c->loop)) {
			c->interrupted = true;
			snprintf(error, errlen, "interrupted while connecting");
			return -EINTR;
		}
		if (c->src_events) {
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
				err = errno;
			if (err)
				goto fail;
			return 0;
		}
		if (deadline != INT64_MAX && (int64_t)loop_now_ns() >= deadline) {
			err = ETIMEDOUT;
			goto fail;
		}
	}
fail:
	snprintf(error, errlen, "connect: %s", strerror(err));
	return -err;
}

/*
 * The UDP source's socket, connected: that only fixes the destination (no
 * handshake), and makes the kernel report an ICMP port unreachable as
 * ECONNREFUSED on a later send. Without --chunk a datagram is as large as
 * the route lets through unfragmented: IP_MTU (the route's MTU, which is
 * the interface's unless the route sets one) minus the IP and UDP headers.
 */
static int fg_onoff_udp_open(struct fg_client *c, int fd, struct fg_onoff_out *o, char *error,
			     size_t errlen)
{
	const bool v6 = c->addr.ss_family == AF_INET6;
	const int hdrs = v6 ? 48 : 28;
	socklen_t len = sizeof(int);
	int err, mtu = 0;

	if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen)) {
		err = errno;
		snprintf(error, errlen, "connect: %s", strerror(err));
		return -err;
	}
	err = getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU, &mtu, &len) ?
	      errno : 0;
	if (err || mtu <= hdrs) {
		pr_warn("cannot read the path MTU to %s (%s); assuming 1500", c->cfg->host,
			err ? strerror(err) : "implausibly small");
		mtu = 1500;
	}
	o->mtu = mtu;
	o->chunk = c->cfg->chunk ? c->cfg->chunk : (uint64_t)(mtu - hdrs);
	if (o->chunk > FG_UDP_MAX)
		o->chunk = FG_UDP_MAX;	/* loopback's MTU is 65536 */
	if (o->chunk > (uint64_t)(mtu - hdrs))
		pr_warn("--chunk %" PRIu64 " is more than the path MTU %d carries in one packet"
			" (%d): IP fragments every datagram", o->chunk, mtu, mtu - hdrs);
	return 0;
}

/*
 * The ON/OFF source's token bucket. Credit (bytes) accrues at the rate
 * while ON and is spent a chunk per send(). Its depth is 50 ms of data, so
 * a wake-up that comes late (a VM's timers can be a millisecond or more
 * late) catches up instead of losing bytes; after the socket buffer was
 * full the depth is two chunks, because offered load that TCP could not
 * take is gone, not owed. (UDP drops the credit instead: fg_bucket_send_udp.)
 */
struct fg_bucket {
	double credit;
	double per_ns;			/* bytes per ns */
	double depth, stall_depth;
	int64_t last;
	size_t chunk;
	size_t batch;			/* wake up when this many chunks have accrued */
	bool blocked;			/* the socket buffer is full: wait for EPOLLOUT */
	bool stalled;			/* it was full since the last accrual */
};

static void fg_bucket_accrue(struct fg_bucket *b, int64_t upto)
{
	double cap = b->blocked || b->stalled ? b->stall_depth : b->depth;

	if (upto > b->last) {
		b->credit += (double)(upto - b->last) * b->per_ns;
		b->last = upto;
	}
	if (b->credit > cap)
		b->credit = cap;
	b->stalled = b->blocked;
}

/* Spend the credit a chunk at a time; with flush (an ON period's end) the
 * partial chunk too, so a period carries rate x its length. 0 or -errno. */
static int fg_bucket_send(struct fg_bucket *b, int fd, bool flush, uint64_t *bytes)
{
	size_t len;
	ssize_t n;

	while (!b->blocked && (b->credit >= (double)b->chunk || (flush && b->credit >= 1))) {
		len = b->credit >= (double)b->chunk ? b->chunk : (size_t)b->credit;
		n = send(fd, fg_zero, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			b->blocked = b->stalled = true;
			break;
		}
		if (n < 0)
			return -errno;
		b->credit -= (double)n;
		*bytes += (uint64_t)n;
	}
	return 0;
}

/*
 * The UDP source's sends: datagrams of a chunk while the credit lasts (with
 * flush, the remainder as one short datagram), FG_UDP_BATCH per sendmmsg().
 * A UDP socket never makes the source wait. When the host's queue is full
 * (EAGAIN: the socket's send buffer is in the qdisc or the device;
 * ENOBUFS) the whole credit is dropped and counted: a source at its rate
 * into a full queue loses what it offers, and a backlog kept here would
 * come out later as a burst. An ICMP port unreachable shows up as
 * ECONNREFUSED on the next send, which then sent nothing: counted, and the
 * datagram goes again. 0 or -errno.
 */
static int fg_bucket_send_udp(struct fg_bucket *b, int fd, bool flush, uint64_t *bytes,
			      struct fg_onoff_out *o)
{
	static struct mmsghdr msgs[FG_UDP_BATCH];
	static struct iovec iov[FG_UDP_BATCH][2];
	static struct fg_dgram hdr[FG_UDP_BATCH];
	unsigned int n, i;
	uint64_t now_be;
	double credit;
	size_t len;
	int sent;

	for (;;) {
		credit = b->credit;
		/* One stamp for the batch: the datagrams leave in one call. */
		now_be = htobe64(fg_realtime_ns());
		for (n = 0; n < FG_UDP_BATCH; n++) {
			if (credit >= (double)b->chunk)
				len = b->chunk;
			else if (flush && credit >= 1)
				len = (size_t)credit;
			else
				break;
			if (len >= FG_DG_STREAM_LEN) {
				/* The sequence number is the one it will have if
				 * sent; a refused batch is stamped again. */
				hdr[n] = (struct fg_dgram){ .magic = htobe32(FG_DG_MAGIC),
							    .type = FG_DG_STREAM,
							    .stream = htobe32(o->stream),
							    .seq = htobe64(o->seq + n),
							    .tx_ns = now_be };
				iov[n][0] = (struct iovec){ &hdr[n], FG_DG_STREAM_LEN };
				iov[n][1] = (struct iovec){ fg_zero, len - FG_DG_STREAM_LEN };
			} else {
				/* Too short for the header: timed by nobody. */
				iov[n][0] = (struct iovec){ fg_zero, len };
				iov[n][1] = (struct iovec){ fg_zero, 0 };
			}
			msgs[n].msg_hdr = (struct msghdr){ .msg_iov = iov[n], .msg_iovlen = 2 };
			credit -= (double)len;
		}
		if (!n)
			return 0;
		/* A partial batch means the next datagram failed: the call for
		 * the rest gets its error. */
		sent = sendmmsg(fd, msgs, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECONNREFUSED) {
				o->refused++;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
				o->blocked++;
				o->blocked_bytes += (uint64_t)llround(b->credit);
				b->credit = 0;
				return 0;
			}
			return -errno;
		}
		for (i = 0; i < (unsigned int)sent; i++) {
			b->credit -= (double)msgs[i].msg_len;
			*bytes += msgs[i].msg_len;
			if (msgs[i].msg_len >= FG_DG_STREAM_LEN)
				o->seq++;
		}
		o->datagrams += (unsigned int)sent;
	}
}

static int fg_onoff_send(struct fg_bucket *b, int fd, bool udp, bool flush, uint64_t *bytes,
			 struct fg_onoff_out *o)
{
	return udp ? fg_bucket_send_udp(b, fd, flush, bytes, o)
		   : fg_bucket_send(b, fd, flush, bytes);
}

static int fg_client_onoff(struct fg_client *c, FILE *out)
{
	const struct fg_cfg *cfg = c->cfg;
	const int64_t dur_ns = llround(cfg->duration * FG_NSEC);
	const bool udp = cfg->udp;
	/* The stream id tells this source apart at the server: random per
	 * run, not from --seed (two sources with one seed stay apart). */
	struct fg_onoff_out o = { .chunk = cfg->chunk, .stream = (uint32_t)fg_default_seed() };
	struct fg_bucket b = { .per_ns = (double)cfg->rate_bps / 8e9, .batch = 1 };
	struct fg_period *per = NULL;
	uint64_t be = htobe64(FG_HDR_STREAM);
	size_t nper = 0, k = 0, hdr_sent = 0, cur = SIZE_MAX;
	int64_t now = 0, deadline, stop_ns;
	/* The UDP socket is not in the event loop: it is never waited for. */
	uint32_t want = udp ? 0 : EPOLLOUT, ev;
	char error[256] = "";
	int fd = -1, one = 1, ret, werr;
	ssize_t sent;

	ret = fg_onoff_periods(cfg, &per, &nper);
	if (ret) {
		pr_err("ON/OFF schedule: %s", strerror(-ret));
		return ret;
	}
	if (cfg->dry_run) {
		ret = fg_onoff_json(c, per, nper, dur_ns, &o, NULL, out);
		goto out;
	}
	fd = socket(c->addr.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(error, sizeof(error), "socket: %s", strerror(errno));
		goto report;
	}
	ret = fg_set_tos(fd, c->addr.ss_family, cfg->tos);
	if (ret) {
		snprintf(error, sizeof(error), "--tos %d: %s", cfg->tos, strerror(-ret));
		goto report;
	}
	if (udp) {
		ret = fg_onoff_udp_open(c, fd, &o, error, sizeof(error));
	} else {
		/* We pace in chunks ourselves; Nagle would regroup them behind ACKs. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* Connected before time 0: the handshake is not part of any ON period. */
		ret = fg_onoff_connect(c, fd, error, sizeof(error));
	}
	if (ret)
		goto report;
	b.chunk = o.chunk;
	b.depth = fmax(2.0 * (double)o.chunk, (double)cfg->rate_bps / 8 * 0.05);
	b.stall_depth = 2.0 * (double)o.chunk;
	if (udp) {
		/* No stream header: datagrams from the first ON period on. */
		hdr_sent = 8;
		/* One datagram per wake-up, unless that is more than 10000
		 * wake-ups a second: then a sendmmsg() of several. */
		b.batch = (size_t)ceil(FG_UDP_TICK_NS * b.per_ns / (double)o.chunk);
		if (b.batch < 1)
			b.batch = 1;
	}
	fg_client_time0(c);

	for (;;) {
		now = fg_rel_now(c);
		/* Periods that ended since the last pass get their last bytes. */
		while (hdr_sent == 8 && k < nper && (now < dur_ns ? now : dur_ns) >= per[k].end_ns) {
			if (cur != k) {
				/* Wholly between two wake-ups: still owed. */
				cur = k;
				b.credit = 0;
				b.last = per[k].start_ns;
			}
			fg_bucket_accrue(&b, per[k].end_ns);
			ret = fg_onoff_send(&b, fd, udp, true, &per[k].bytes, &o);
			if (ret)
				goto send_err;
			k++;
		}
		if (now >= dur_ns)
			break;
		deadline = dur_ns;
		if (hdr_sent < 8) {
			if (!b.blocked) {
				sent = send(fd, (char *)&be + hdr_sent, 8 - hdr_sent,
					    MSG_NOSIGNAL | MSG_DONTWAIT);
				if (sent > 0)
					hdr_sent += (size_t)sent;
				else if (sent < 0 && errno != EAGAIN && errno != EINTR)
					goto send_err_errno;
				else
					b.blocked = true;
			}
			if (hdr_sent < 8)
				deadline = INT64_MAX;	/* wait for EPOLLOUT */
			else
				deadline = now;
		} else if (k < nper && now >= per[k].start_ns) {
			if (cur != k) {
				/* Credit counts from the period's start, not from
				 * our (slightly later) wake-up. */
				cur = k;
				b.credit = 0;
				b.last = per[k].start_ns;
			}
			fg_bucket_accrue(&b, now);
			ret = fg_onoff_send(&b, fd, udp, false, &per[k].bytes, &o);
			if (ret)
				goto send_err;
			if (!b.blocked)
				deadline = now + (int64_t)ceil(((double)(b.chunk * b.batch) - b.credit) /
							       b.per_ns);
			if (per[k].end_ns < deadline)
				deadline = per[k].end_ns;
		} else if (k < nper && per[k].start_ns < deadline) {
			deadline = per[k].start_ns;	/* OFF until then */
		}

		/* EPOLLIN: the server never sends, so readable means it closed. */
		if ((b.blocked ? EPOLLOUT : 0) != want) {
			want = b.blocked ? EPOLLOUT : 0;
			ret = loop_mod_fd(c->loop, fd, EPOLLIN | want);
			if (ret) {
				snprintf(error, sizeof(error), "epoll_ctl: %s", strerror(-ret));
				goto report;
			}
		}
		c->src_events = 0;
		ret = fg_client_wait(c, deadline);
		if (ret) {
			snprintf(error, sizeof(error), "event loop: %s", strerror(-ret));
			goto report;
		}
		ev = c->src_events;
		if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
			sent = recv(fd, fg_sink, sizeof(fg_sink), MSG_DONTWAIT);
			if (sent == 0 || (sent < 0 && errno != EAGAIN && errno != EINTR)) {
				ret = -ECONNRESET;
				snprintf(error, sizeof(error), "the server closed the connection%s%s",
					 sent ? ": " : "", sent ? strerror(errno) : "");
				goto report;
			}
		}
		if (ev & EPOLLOUT)
			b.blocked = false;
		if (c->interrupted) {
			ret = -EINTR;
			goto report;
		}
	}
	ret = 0;
	goto report;
send_err_errno:
	ret = -errno;
send_err:
	snprintf(error, sizeof(error), "send: %s", strerror(-ret));
report:
	stop_ns = hdr_sent == 8 ? (now < dur_ns ? now : dur_ns) : 0;
	if (ret && !c->interrupted)
		pr_err("ON/OFF source to %s port %u: %s", cfg->host, cfg->port, error);
	werr = fg_onoff_json(c, per, nper, stop_ns, &o, error[0] ? error : NULL, out);
	if (werr) {
		pr_err("writing the output: %s", strerror(-werr));
		if (!ret)
			ret = werr;
	}
out:
	if (fd >= 0) {
		/* TCP: what is still in the socket buffer is delivered after we exit. */
		if (!udp)
			shutdown(fd, SHUT_WR);
		loop_del_fd(c->loop, fd);	/* -ENOENT: UDP, never in it */
		close(fd);
	}
	free(per);
	return ret;
}

/* ---- client: request/response ----------------------------------------------- */

/*
 * --rr: requests of --req-size bytes at Poisson times (--rr per second) for
 * --duration, each answered by the server at once with --resp-size bytes.
 * Every datagram carries its send stamp, and the response the server's
 * receive and send stamps too, so each exchange gives its round trip and
 * both one-way delays, each from a kernel receive stamp. Responses that have
 * not come FG_RR_GRACE_NS after the last request are lost.
 */
struct fg_rr {
	struct fg_samples rtt, req, resp, all;	/* all: both one-way delays */
	uint64_t sent, answered, refused, blocked, stray;
};

/* The responses waiting on the socket. 0 or -errno (out of memory). */
static int fg_rr_read(int fd, struct fg_rr *r, const struct fg_cfg *cfg)
{
	struct mmsghdr *msgs = fg_rx.msgs;
	int64_t rx, tx, srx, stx;
	int n, i, err = 0;

	for (;;) {
		n = fg_rx_batch(fd);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECONNREFUSED)
				r->refused++;	/* no server: the request is lost */
			return 0;
		}
		for (i = 0; i < n; i++) {
			const struct fg_dgram *h = &fg_rx.hdr[i];

			if (msgs[i].msg_len < FG_DG_LEN || be32toh(h->magic) != FG_DG_MAGIC ||
			    h->type != FG_DG_RESP || be64toh(h->seq) >= r->sent ||
			    msgs[i].msg_len != cfg->resp_size) {
				r->stray++;
				continue;
			}
			rx = fg_msg_rx_ns(&msgs[i].msg_hdr);
			tx = (int64_t)be64toh(h->tx_ns);
			srx = (int64_t)be64toh(h->srv_rx_ns);
			stx = (int64_t)be64toh(h->srv_tx_ns);
			r->answered++;
			err = fg_samples_add(&r->rtt, rx, rx - tx);
			err = err ?: fg_samples_add(&r->req, srx, srx - tx);
			err = err ?: fg_samples_add(&r->resp, rx, rx - stx);
			err = err ?: fg_samples_add(&r->all, srx, srx - tx);
			err = err ?: fg_samples_add(&r->all, rx, rx - stx);
			if (err)
				return err;
		}
		if (n < FG_UDP_BATCH)
			return 0;
	}
}

/* One request, now. 0 or -errno (a send error other than a full queue). */
static int fg_rr_send(int fd, struct fg_rr *r, const struct fg_cfg *cfg, uint32_t stream)
{
	struct fg_dgram h = { .magic = htobe32(FG_DG_MAGIC), .type = FG_DG_REQ,
			      .stream = htobe32(stream), .resp_len = htobe32((uint32_t)cfg->resp_size),
			      .seq = htobe64(r->sent) };
	struct iovec iov[2] = { { &h, FG_DG_LEN }, { fg_zero, cfg->req_size - FG_DG_LEN } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

	for (;;) {
		h.tx_ns = htobe64(fg_realtime_ns());
		if (sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			r->sent++;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == ECONNREFUSED) {
			r->refused++;	/* about an earlier one: send this one again */
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			r->blocked++;	/* the host's queue is full: this one is not sent */
			return 0;
		}
		return -errno;
	}
}

static int fg_rr_json(const struct fg_client *c, struct fg_rr *r, uint32_t stream,
		      const char *error, FILE *out)
{
	const struct fg_cfg *cfg = c->cfg;
	struct jw w;

	jw_init(&w);
	fg_client_json_head(&w, c, "rr");
	jw_str(&w, "proto", "udp");
	jw_double(&w, "rate", cfg->rr);
	jw_double(&w, "duration", cfg->duration);
	jw_u64(&w, "req_size", cfg->req_size);
	jw_u64(&w, "resp_size", cfg->resp_size);
	if (cfg->tos >= 0)
		jw_u64(&w, "tos", (uint64_t)cfg->tos);
	jw_u64(&w, "stream", stream);
	jw_u64(&w, "requests", r->sent);
	jw_u64(&w, "responses", r->answered);
	if (!cfg->dry_run)
		jw_u64(&w, "lost", r->sent - r->answered);
	jw_u64(&w, "send_blocked", r->blocked);
	jw_u64(&w, "refused", r->refused);
	fg_samples_json(&w, "rtt_us", &r->rtt);
	fg_samples_json(&w, "owd_us", &r->all);
	fg_samples_json(&w, "req_owd_us", &r->req);
	fg_samples_json(&w, "resp_owd_us", &r->resp);
	return fg_client_json_tail(c, &w, error, out);
}

static int fg_client_rr(struct fg_client *c, FILE *out)
{
	const struct fg_cfg *cfg = c->cfg;
	const int64_t dur_ns = llround(cfg->duration * FG_NSEC);
	const uint32_t stream = (uint32_t)fg_default_seed();
	struct fg_rr r = { 0 };
	struct fg_rng arr;
	int64_t next, now, deadline;
	char error[256] = "";
	int fd = -1, one = 1, ret = 0, werr;

	fg_rng_seed(&arr, cfg->seed, FG_STREAM_ARRIVALS);
	next = llround(fg_rng_exp(&arr, 1.0 / cfg->rr) * FG_NSEC);
	if (cfg->dry_run) {
		/* The schedule's requests, none sent. */
		for (; next < dur_ns; r.sent++)
			next += llround(fg_rng_exp(&arr, 1.0 / cfg->rr) * FG_NSEC);
		goto report;
	}
	fd = socket(c->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(error, sizeof(error), "socket: %s", strerror(errno));
		goto report;
	}
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	ret = fg_set_tos(fd, c->addr.ss_family, cfg->tos);
	if (ret) {
		snprintf(error, sizeof(error), "--tos %d: %s", cfg->tos, strerror(-ret));
		goto report;
	}
	if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen)) {
		ret = -errno;
		snprintf(error, sizeof(error), "connect: %s", strerror(errno));
		goto report;
	}
	ret = loop_add_fd(c->loop, fd, EPOLLIN, fg_on_source, c);
	if (ret) {
		snprintf(error, sizeof(error), "epoll_ctl: %s", strerror(-ret));
		goto report;
	}
	fg_client_time0(c);
	for (;;) {
		now = fg_rel_now(c);
		/* Late wake-ups send what is due at once: the stamps are taken
		 * at the send, so a late request is not a slow one. */
		while (next < dur_ns && next <= now) {
			ret = fg_rr_send(fd, &r, cfg, stream);
			if (ret) {
				snprintf(error, sizeof(error), "send: %s", strerror(-ret));
				goto report;
			}
			next += llround(fg_rng_exp(&arr, 1.0 / cfg->rr) * FG_NSEC);
		}
		if (now >= dur_ns && (r.answered >= r.sent || now >= dur_ns + FG_RR_GRACE_NS))
			break;
		/* After the last request: the end, or the grace for what is
		 * still unanswered. */
		deadline = next < dur_ns ? next : r.answered >= r.sent ? dur_ns : dur_ns + FG_RR_GRACE_NS;
		c->src_events = 0;
		ret = fg_client_wait(c, deadline);
		if (ret) {
			snprintf(error, sizeof(error), "event loop: %s", strerror(-ret));
			goto report;
		}
		if (c->src_events) {
			ret = fg_rr_read(fd, &r, cfg);
			if (ret) {
				snprintf(error, sizeof(error), "out of memory for the samples");
				goto report;
			}
		}
		if (c->interrupted) {
			ret = -EINTR;
			goto report;
		}
	}
	ret = 0;
report:
	if (ret && !c->interrupted)
		pr_err("request/response to %s port %u: %s", cfg->host, cfg->port, error);
	werr = fg_rr_json(c, &r, stream, error[0] ? error : NULL, out);
	if (werr) {
		pr_err("writing the output: %s", strerror(-werr));
		if (!ret)
			ret = werr;
	}
	if (fd >= 0) {
		loop_del_fd(c->loop, fd);
		close(fd);
	}
	free(r.rtt.v);
	free(r.req.v);
	free(r.resp.v);
	free(r.all.v);
	return ret;
}

static int fg_client_run(const struct fg_cfg *cfg, FILE *out, bool *interrupted)
{
	struct fg_client c = { .cfg = cfg };
	uint64_t failed = 0;
	size_t i, first = SIZE_MAX;
	char msg[256];
	int err;

	c.timeout_ns = llround(cfg->timeout * FG_NSEC);
	if (!cfg->dry_run) {
		err = fg_resolve(cfg->host, cfg->port, false, &c.addr, &c.addrlen);
		if (err)
			return err;
		/* The loop also takes the timer slack to 1 ns: pacing and
		 * schedule wake-ups to the microsecond, not 50 us late. */
		err = fg_loop_open(&c.loop);
		if (err)
			goto out;
	}
	if (cfg->given[OPT_ONOFF]) {
		err = fg_client_onoff(&c, out);
		goto out;
	}
	if (cfg->given[OPT_RR]) {
		err = fg_client_rr(&c, out);
		goto out;
	}

	err = fg_schedule(&c, cfg, &c.flows, &c.nflows);
	if (err) {
		pr_err("building the schedule: %s", err == -E2BIG ?
		       "more than 50000000 flows; shorten --duration or lower --poisson" :
		       strerror(-err));
		goto out;
	}
	if (!cfg->dry_run) {
		fg_raise_nofile(cfg->max_open + 64);
		err = fg_client_flows(&c);
		if (err)
			goto out;
		for (i = 0; i < c.nflows; i++) {
			if (c.flows[i].state != F_FAILED)
				continue;
			if (first == SIZE_MAX)
				first = i;
			failed++;
		}
		if (failed && !c.interrupted) {
			fg_flow_error_str(&c.flows[first], msg, sizeof(msg));
			pr_warn("%" PRIu64 " of %zu flows failed; the first (flow %zu): %s",
				failed, c.nflows, first, msg);
		}
	}
	err = fg_flows_json(&c, out);
	if (err)
		pr_err("writing the output: %s", strerror(-err));
out:
	*interrupted = c.interrupted;
	free(c.flows);
	loop_destroy(c.loop);
	return err;
}

int main(int argc, char **argv)
{
	struct fg_cfg cfg = { .port = FG_DEFAULT_PORT, .max_open = 1000, .req_size = 64,
			      .resp_size = 64, .tos = -1 };
	bool interrupted = false;
	FILE *out = stdout;
	int ret, status = EXIT_USAGE;

	if (argc < 2) {
		fg_usage(stderr);
		goto out;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fg_usage(stdout);
		status = EXIT_OK;
		goto out;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		l2cc_version_print(stdout, FG_PROG);
		status = EXIT_OK;
		goto out;
	}
	if (!strcmp(argv[1], "stats")) {
		/* Not a run: no options, the samples from FILE or stdin. */
		if (argc > 3 || (argc == 3 && argv[2][0] == '-' && argv[2][1])) {
			fg_bad("usage: " FG_PROG " stats [FILE]");
			goto out;
		}
		log_init(FG_PROG, LOG_LVL_INFO);
		status = fg_stats_run(argc == 3 && strcmp(argv[2], "-") ? argv[2] : NULL, out) ?
			 EXIT_FAIL : EXIT_OK;
		goto out;
	}
	if (!strcmp(argv[1], "server")) {
		cfg.mode = FG_SERVER;
	} else if (!strcmp(argv[1], "client")) {
		cfg.mode = FG_CLIENT;
	} else {
		fg_bad("unknown subcommand '%s': expected 'server' or 'client' (try --help)", argv[1]);
		goto out;
	}
	ret = fg_parse_args(&cfg, argc - 1, argv + 1);
	if (ret) {
		status = ret > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	if (!cfg.given[OPT_SEED])
		cfg.seed = fg_default_seed();
	log_init(FG_PROG, LOG_LVL_INFO + cfg.verbose);

	status = EXIT_FAIL;
	/* Opened before the run: a bad path must not cost an experiment. */
	if (cfg.output) {
		out = fopen(cfg.output, "w");
		if (!out) {
			pr_err("cannot write %s: %s", cfg.output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	if (cfg.mode == FG_SERVER)
		ret = fg_server_run(&cfg, out);
	else
		ret = fg_client_run(&cfg, out, &interrupted);
	if (!ret && !interrupted)
		status = EXIT_OK;
	else if (interrupted)
		pr_warn("interrupted; the output covers what ran");
out:
	if (out != stdout && fclose(out) == EOF && status == EXIT_OK) {
		pr_err("writing %s: %s", cfg.output, strerror(errno));
		status = EXIT_FAIL;
	}
	free(cfg.sizes.pts);
	return status;
}
