// SPDX-License-Identifier: BSD-2-Clause
/*
 * forwarding = xdp without a kernel: the FDB's copy for the XDP program
 * (sw_fwd.c) followed through a fake map (struct sw_fwd_ops) as switchd
 * learns, moves, ages and flushes addresses, as links go down and up and as
 * a port refuses redirects; and the eligibility rule at config load, with
 * the file, line and key of both sides in its message.
 */
#include "swt.h"

#include <errno.h>

/* ---- a fake map -------------------------------------------------------------- */

#define FM_MAX 64

struct fake_map {
	struct {
		struct l2cc_fwd_key k;
		uint32_t port;
		uint64_t seen;
		bool used;
	} e[FM_MAX];
	bool rx[SW_MAX_PORTS], tx[SW_MAX_PORTS];
	int sets, dels, ports;
};

static int fm_find(struct fake_map *m, const struct l2cc_fwd_key *k)
{
	for (int i = 0; i < FM_MAX; i++)
		if (m->e[i].used && !memcmp(&m->e[i].k, k, sizeof(*k)))
			return i;
	return -1;
}

static int fm_set(void *ctx, const struct l2cc_fwd_key *k, uint32_t port)
{
	struct fake_map *m = ctx;
	int i = fm_find(m, k);

	m->sets++;
	for (int j = 0; i < 0 && j < FM_MAX; j++)
		if (!m->e[j].used)
			i = j;
	if (i < 0)
		return -E2BIG;
	m->e[i].k = *k;
	m->e[i].port = port;
	m->e[i].used = true;
	return 0;
}

static int fm_del(void *ctx, const struct l2cc_fwd_key *k)
{
	struct fake_map *m = ctx;
	int i = fm_find(m, k);

	m->dels++;
	if (i < 0)
		return -ENOENT;
	memset(&m->e[i], 0, sizeof(m->e[i]));
	return 0;
}

static uint64_t fm_seen(void *ctx, const struct l2cc_fwd_key *k)
{
	struct fake_map *m = ctx;
	int i = fm_find(m, k);

	return i < 0 ? 0 : m->e[i].seen;
}

static int fm_port(void *ctx, uint32_t port, bool rx, bool tx)
{
	struct fake_map *m = ctx;

	m->ports++;
	m->rx[port] = rx;
	m->tx[port] = tx;
	return 0;
}

static const struct sw_fwd_ops fm_ops = {
	.fdb_set = fm_set, .fdb_del = fm_del, .fdb_seen = fm_seen, .port = fm_port,
};

/* The port host id's MAC is at in the map (VLAN vid), -1 if absent. */
static int fm_port_of(struct fake_map *m, uint8_t id, uint16_t vid)
{
	struct l2cc_fwd_key k = { .vid = vid };
	int i;

	vt_mac(k.mac, id);
	i = fm_find(m, &k);
	return i < 0 ? -1 : (int)m->e[i].port;
}

static int fm_count(const struct fake_map *m)
{
	int n = 0;

	for (int i = 0; i < FM_MAX; i++)
		n += m->e[i].used;
	return n;
}

static uint64_t *fm_seen_of(struct fake_map *m, uint8_t id)
{
	struct l2cc_fwd_key k = { 0 };
	int i;

	vt_mac(k.mac, id);
	i = fm_find(m, &k);
	return i < 0 ? NULL : &m->e[i].seen;
}

/* p1, p2, p3 forward in XDP ([switch] forwarding = xdp); p4 says daemon. */
static const char *conf4 =
	"[switch]\nforwarding = xdp\nfdb_aging = 10s\n"
	"[port p1]\n[port p2]\n[port p3]\n[port p4]\nforwarding = daemon\n";

static void send_from(struct swt *t, int port, uint8_t src)
{
	swt_rx(t, port, (struct vt_eth){ .dst = 0xff, .src = src, .prio = -1, .len = 60 });
	swt_run(t, 0);
	t->k.n = 0;
}

/* ---- the tests ------------------------------------------------------------------- */

static void test_fwd_attach(void)
{
	struct fake_map m = { 0 };
	struct swt t;

	swt_create(&t, conf4);
	sw_fwd_attach(t.s, &fm_ops, &m);
	CHECK(t.s->fwd_ops == &fm_ops);
	for (int i = 0; i < 3; i++) {
		CHECK(t.s->ports[i].fwd_xdp);
		CHECK(m.rx[i]);
		CHECK(m.tx[i]);
	}
	CHECK(!t.s->ports[3].fwd_xdp);
	CHECK_EQ(m.ports, 3);           /* p4 is not told about: no fast path */
	swt_destroy(&t);
}

/* No port forwards in XDP: nothing is attached, nothing is ever told. */
static void test_fwd_none(void)
{
	struct fake_map m = { 0 };
	struct swt t;

	swt_create(&t, "[port p1]\n[port p2]\n");
	sw_fwd_attach(t.s, &fm_ops, &m);
	CHECK(t.s->fwd_ops == NULL);
	send_from(&t, 0, H_A);
	CHECK_EQ(m.sets + m.dels + m.ports, 0);
	swt_destroy(&t);
}

static void test_fwd_learn_move(void)
{
	struct fake_map m = { 0 };
	struct swt t;
	int sets;

	swt_create(&t, conf4);
	sw_fwd_attach(t.s, &fm_ops, &m);
	send_from(&t, 0, H_A);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 0);
	sets = m.sets;
	/* A refresh on the same port is not a map update. */
	send_from(&t, 0, H_A);
	CHECK_EQ(m.sets, sets);
	/* Moved to p2: the map follows. */
	send_from(&t, 1, H_A);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 1);
	CHECK_EQ(t.s->ports[1].st.mac_moves, 1);
	/* Moved to p4 (forwarding = daemon): out of the map, so XDP sends
	 * frames for it to the daemon rather than to p2. */
	send_from(&t, 3, H_A);
	CHECK_EQ(fm_port_of(&m, H_A, 0), -1);
	/* Back to p3: in again. */
	send_from(&t, 2, H_A);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 2);
	/* VLANs are part of the key. */
	swt_rx(&t, 0, (struct vt_eth){ .dst = 0xff, .src = H_B, .prio = 0, .vid = 10, .len = 60 });
	swt_run(&t, 0);
	CHECK_EQ(fm_port_of(&m, H_B, 10), 0);
	CHECK_EQ(fm_port_of(&m, H_B, 0), -1);
	swt_destroy(&t);
}

static void test_fwd_aging(void)
{
	struct fake_map m = { 0 };
	struct swt t;
	uint64_t *seen;

	swt_create(&t, conf4);
	sw_fwd_attach(t.s, &fm_ops, &m);
	send_from(&t, 0, H_A);
	send_from(&t, 1, H_B);
	CHECK_EQ(fm_count(&m), 2);
	/* XDP saw A as a source at 9 s (its frames never reach the daemon):
	 * at 12 s A lives on, B (silent since 0) ages out of both. */
	seen = fm_seen_of(&m, H_A);
	CHECK(seen != NULL);
	if (seen)
		*seen = t.s->start_ns + 9000000000ull;
	t.s->now = t.s->start_ns + 12000000000ull;
	CHECK_EQ(fdb_age(t.s->fdb, t.s->now), 1);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 0);
	CHECK_EQ(fm_port_of(&m, H_B, 0), -1);
	CHECK_EQ(fdb_lookup(t.s->fdb, (uint8_t[6]){ 2, 0, 0, 0, 0, H_A }, 0, t.s->now), 0);
	CHECK_EQ(t.s->fdb->seen_refreshed, 1);
	/* Not seen again: gone 10 s after 9 s. */
	t.s->now = t.s->start_ns + 19500000000ull;
	CHECK_EQ(fdb_age(t.s->fdb, t.s->now), 1);
	CHECK_EQ(fm_count(&m), 0);
	swt_destroy(&t);
}

static void test_fwd_link(void)
{
	struct fake_map m = { 0 };
	uint8_t mac[6];
	struct swt t;

	vt_mac(mac, H_C);
	swt_create(&t, "[switch]\nforwarding = xdp\n[port p1]\n[port p2]\n[port p3]\n"
		       "[fdb 02:00:00:00:00:0c]\nport = p2\n");
	sw_fwd_attach(t.s, &fm_ops, &m);
	CHECK_EQ(fm_port_of(&m, H_C, 0), 1);    /* the static entry */
	send_from(&t, 1, H_A);
	send_from(&t, 0, H_B);
	CHECK_EQ(fm_count(&m), 3);
	/* p2 down: its learnt address is flushed, its static one leaves the
	 * map (the FDB keeps it), its slot and fast path go. */
	sw_port_link(t.s, &t.s->ports[1], false);
	CHECK_EQ(fm_port_of(&m, H_A, 0), -1);
	CHECK(!m.rx[1] && !m.tx[1]);
	swt_run(&t, 0);
	CHECK_EQ(fm_port_of(&m, H_C, 0), -1);
	CHECK_EQ(fm_port_of(&m, H_B, 0), 0);
	CHECK_EQ(fdb_lookup(t.s->fdb, mac, 0, t.s->now), 1);
	/* Up again: the static entry returns, A is learnt when it speaks. */
	sw_port_link(t.s, &t.s->ports[1], true);
	CHECK(m.rx[1] && m.tx[1]);
	swt_run(&t, 0);
	CHECK_EQ(fm_port_of(&m, H_C, 0), 1);
	CHECK_EQ(fm_port_of(&m, H_A, 0), -1);
	send_from(&t, 1, H_A);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 1);
	swt_destroy(&t);
}

/* A port whose peer cannot take redirected frames loses its devmap slot
 * (frames for it reach the daemon by the fast path's no_slot), while its
 * addresses stay in the map so its own frames still take the fast path. */
static void test_fwd_refuse(void)
{
	struct fake_map m = { 0 };
	struct swt t;

	swt_create(&t, conf4);
	sw_fwd_attach(t.s, &fm_ops, &m);
	send_from(&t, 1, H_A);
	sw_fwd_refuse(t.s, &t.s->ports[1], true);
	CHECK(m.rx[1] && !m.tx[1]);
	CHECK(t.s->ports[1].fwd_refused);
	swt_run(&t, 0);
	CHECK_EQ(fm_port_of(&m, H_A, 0), 1);
	send_from(&t, 1, H_B);
	CHECK_EQ(fm_port_of(&m, H_B, 0), 1);
	/* A link bounce does not give it its slot back: only the peer can. */
	sw_port_link(t.s, &t.s->ports[1], false);
	sw_port_link(t.s, &t.s->ports[1], true);
	CHECK(m.rx[1] && !m.tx[1]);
	sw_fwd_refuse(t.s, &t.s->ports[1], false);
	CHECK(m.rx[1] && m.tx[1]);
	swt_destroy(&t);
}

/* ---- eligibility at load ------------------------------------------------------------ */

static int load(const char *text, char **overrides, int n, char *err, size_t errlen)
{
	static struct sw_cfg cfg;
	char path[] = "/tmp/l2cc-fwd-XXXXXX";
	int ret = vt_conf_file(path, text);

	if (!ret)
		ret = sw_cfg_load(&cfg, path, overrides, n, err, errlen);
	unlink(path);
	return ret;
}

#define CHECK_HAS(s, sub) do {                                              \
	if (!strstr((s), (sub))) {                                          \
		printf("    %s:%d: \"%s\" not in \"%s\"\n", __FILE__, __LINE__, \
		       (sub), (s));                                         \
		check_failed_now++;                                         \
	}                                                                   \
} while (0)

static void test_fwd_eligibility(void)
{
	char err[1024];

	/* Eligible: loads. */
	CHECK_EQ(load("[switch]\nforwarding = xdp\n[port p1]\n[port p2]\n", NULL, 0, err,
		      sizeof(err)), 0);
	CHECK_EQ(load("[port p1]\nforwarding = xdp\n[port p2]\nrate = 1G\n", NULL, 0, err,
		      sizeof(err)), 0);
	/* A rate on a port that asks for it: both lines, both keys. */
	CHECK_EQ(load("[port p1]\nforwarding = xdp\nrate = 100M\n", NULL, 0, err, sizeof(err)),
		 -EINVAL);
	CHECK_HAS(err, ":2: [port p1] forwarding = xdp, but rate = 100000000 bit/s (");
	CHECK_HAS(err, ":3)");
	CHECK_HAS(err, "expected rate = unlimited, or forwarding = daemon");
	/* Flow control, asked for by [switch] for a port that says nothing. */
	CHECK_EQ(load("[switch]\nforwarding = xdp\n[port p1]\n[port p2]\nflow_control = pause\n",
		      NULL, 0, err, sizeof(err)), -EINVAL);
	CHECK_HAS(err, ":2: [switch] forwarding = xdp applies to [port p2], whose flow_control = pause (");
	CHECK_HAS(err, ":5)");
	CHECK_HAS(err, "expected flow_control = none, or forwarding = daemon in [port p2]");
	/* ... which that port can decline. */
	CHECK_EQ(load("[switch]\nforwarding = xdp\n[port p1]\n[port p2]\nflow_control = pause\n"
		      "forwarding = daemon\n", NULL, 0, err, sizeof(err)), 0);
	/* A congestion point from [switch]. */
	CHECK_EQ(load("[switch]\nmarking = naive\n[port p1]\nforwarding = xdp\n", NULL, 0, err,
		      sizeof(err)), -EINVAL);
	CHECK_HAS(err, "[switch] marking = naive (");
	CHECK_HAS(err, ":2)");
	CHECK_HAS(err, "expected marking = none");
	/* A port's own marking = none under [switch]'s naive is fine. */
	CHECK_EQ(load("[switch]\nmarking = naive\n[port p1]\nforwarding = xdp\nmarking = none\n",
		      NULL, 0, err, sizeof(err)), 0);
	/* From an override. */
	{
		char *o[] = { "port.p1.rate=10M" };

		CHECK_EQ(load("[port p1]\nforwarding = xdp\n", o, 1, err, sizeof(err)), -EINVAL);
		CHECK_HAS(err, "rate = 10000000 bit/s (an override)");
	}
}

int main(void)
{
	RUN(test_fwd_attach);
	RUN(test_fwd_none);
	RUN(test_fwd_learn_move);
	RUN(test_fwd_aging);
	RUN(test_fwd_link);
	RUN(test_fwd_refuse);
	RUN(test_fwd_eligibility);
	return check_summary();
}
