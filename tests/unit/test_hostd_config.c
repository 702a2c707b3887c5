// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for hostd's configuration schema and checks (hostd/hd_config.c):
 * a full file lands in struct hd_cfg with the right values and defaults; each
 * kind of error names the file (and line, where the parser knows it) and what
 * was expected; overrides apply after the file and before the checks.
 * hd_cfg_load() takes a path, so every case writes its text to a temp file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
/* Relative path: the Makefile's include path has no -Ihostd. */
#include "../../hostd/hostd.h"
#include "../../hostd/flow.h"
#include "../../hostd/rp.h"
#include "nic.h"

static struct hd_cfg C;
static char err[1024];
static char path[64];

/* Write text to a fresh temp file (its name in path) and load it. */
static int load(const char *text, char *const *ovr, int novr)
{
	FILE *f;
	int fd, ret;

	snprintf(path, sizeof(path), "/tmp/test_hostd_config_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		printf("    mkstemp: %s\n", strerror(errno));
		return -errno;
	}
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	ret = hd_cfg_load(&C, path, ovr, novr, err, sizeof(err));
	unlink(path);
	return ret;
}

/* err starts with "PATH:" followed by rest (e.g. "12: link_rate ..."). */
static bool err_at(const char *rest)
{
	size_t n = strlen(path);

	return !strncmp(err, path, n) && err[n] == ':' && strstr(err + n + 1, rest);
}

static const char good_conf[] =
	"# a host with two static rates\n"                  /* 1 */
	"[hostd]\n"                                         /* 2 */
	"name = h1\n"                                       /* 3 */
	"host_port = cc0\n"                                 /* 4 */
	"uplink = up0\n"                                    /* 5 */
	"link_rate = 10G\n"                                 /* 6 */
	"flow_control = credit\n"                           /* 7 */
	"granularity = 5tuple\n"                            /* 8 */
	"max_flows = 4096\n"                                /* 9 */
	"flow_idle = 0\n"                                   /* 10 */
	"queue = 64K\n"                                     /* 11 */
	"tag = no\n"                                        /* 12 */
	"cnp_interval = 50us\n"                             /* 13 */
	"slot = 500ns\n"                                    /* 14 */
	"ring_size = 2048\n"                                /* 15 */
	"xdp_mode = skb\n"                                  /* 16 */
	"\n"
	"[law]\n"
	"law = static\n"
	"rate = 200M\n"
	"\n"
	"[rate h2]\n"
	"dst = 02:00:00:00:00:02\n"
	"rate = 50M\n"
	"\n"
	"[rate h3]\n"
	"dst = 02:00:00:00:00:03\n"
	"vlan = 10\n"
	"ipd = 9\n"
	"\n"
	"[rate h3-untagged]\n"
	"dst = 02:00:00:00:00:03\n";

static void test_good(void)
{
	static const uint8_t h2[6] = { 2, 0, 0, 0, 0, 2 }, h3[6] = { 2, 0, 0, 0, 0, 3 };

	CHECK_EQ(load(good_conf, NULL, 0), 0);
	CHECK_EQ(err[0], '\0');
	CHECK(!strcmp(C.name, "h1"));
	CHECK(!strcmp(C.host_port, "cc0"));
	CHECK(!strcmp(C.uplink, "up0"));
	CHECK_EQ(C.link_rate, 10000000000ULL);
	CHECK_EQ(C.fc, HD_FC_CREDIT);
	CHECK_EQ(C.granularity, FLOW_BY_5TUPLE);
	CHECK_EQ(C.max_flows, 4096);
	CHECK_EQ(C.flow_idle, 0);
	CHECK_EQ(C.queue, 65536);
	CHECK_EQ(C.tag, false);
	CHECK_EQ(C.cnp_interval, 50000);
	CHECK_EQ(C.slot, 500);
	CHECK_EQ(C.ring_size, 2048);
	CHECK_EQ(C.xdp_mode, HD_XDP_SKB);
	CHECK(!strcmp(C.law, "static"));
	CHECK_EQ(C.rate, 200000000ULL);
	CHECK_EQ(C.ipd, -1);

	CHECK_EQ(C.nrates, 3);
	CHECK(!strcmp(C.rates[0].name, "h2"));
	CHECK_MEM(C.rates[0].dst, h2, 6);
	CHECK_EQ(C.rates[0].vlan, 0);
	CHECK_EQ(C.rates[0].rate, 50000000ULL);
	CHECK_EQ(C.rates[0].ipd, -1);
	CHECK(!strcmp(C.rates[1].name, "h3"));
	CHECK_MEM(C.rates[1].dst, h3, 6);
	CHECK_EQ(C.rates[1].vlan, 10);
	CHECK_EQ(C.rates[1].rate, 0);
	CHECK_EQ(C.rates[1].ipd, 9);
	/* Same MAC on another VLAN is another destination. */
	CHECK_EQ(C.rates[2].vlan, 0);
	CHECK_EQ(C.rates[2].rate, 0);
}

/* Only the two required keys: everything else is the documented default. */
static void test_defaults(void)
{
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\n", NULL, 0), 0);
	CHECK(!strcmp(C.name, "hostd"));
	CHECK(!strcmp(C.ctl_socket, "/run/l2cc/hostd.sock"));
	CHECK_EQ(C.metrics_listen[0], '\0');
	CHECK_EQ(C.stats_file[0], '\0');
	CHECK_EQ(C.stats_interval, 100000000);
	CHECK_EQ(C.link_rate, 1000000000ULL);
	CHECK_EQ(C.burst, 0);
	CHECK_EQ(C.wire_overhead, 0);
	CHECK_EQ(C.fc, HD_FC_AUTO);
	CHECK_EQ(C.granularity, FLOW_BY_DST);
	CHECK_EQ(C.max_flows, 1024);
	CHECK_EQ(C.flow_idle, 10000000000ULL);
	CHECK_EQ(C.queue, 262144);
	CHECK_EQ(C.pass_queue, 256);
	CHECK_EQ(C.tag, true);
	CHECK_EQ(C.mode, HD_MODE_UNRELIABLE);
	CHECK_EQ(C.cnp_interval, 0);
	CHECK_EQ(C.ack_every, 1);
	CHECK_EQ(C.ack_delay, 100000);
	CHECK_EQ(C.slot, 1000);
	CHECK_EQ(C.frame_size, 0);
	CHECK_EQ(C.ring_size, 1024);
	CHECK_EQ(C.batch, 64);
	CHECK_EQ(C.umem_frames, 0);
	CHECK_EQ(C.busy_poll, 0);
	CHECK_EQ(C.xdp_mode, HD_XDP_NATIVE);
	CHECK_EQ(C.zero_copy, NIC_ZC_AUTO);
	CHECK_EQ(C.nic_pause, NIC_PAUSE_WARN);
	CHECK(!strcmp(C.rx_queues, "all"));
	CHECK_EQ(C.log_level, 2);       /* info */
	CHECK(!strcmp(C.law, "static"));
	CHECK_EQ(C.rate, 0);
	CHECK_EQ(C.ipd, -1);
	CHECK_EQ(C.nrates, 0);
	CHECK(rp_find(C.law) != NULL);
}

static void test_missing_required(void)
{
	CHECK_EQ(load("[hostd]\nuplink = up0\n", NULL, 0), -EINVAL);
	CHECK(err_at(" host_port is not set, expected the host stack's veth peer"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\n", NULL, 0), -EINVAL);
	CHECK(err_at(" uplink is not set, expected the interface toward the switch"));
	/* An empty file has neither; the first missing one is named. */
	CHECK_EQ(load("", NULL, 0), -EINVAL);
	CHECK(err_at(" host_port is not set"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = cc0\n", NULL, 0), -EINVAL);
	CHECK(err_at(" host_port and uplink are both cc0, expected two interfaces"));
}

static void test_bad_values(void)
{
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nlink_rate = fast\n", NULL, 0),
		 -EINVAL);
	CHECK(err_at("4: link_rate \"fast\" is not a rate, expected e.g. 100M, 1G"));

	/* The uplink must be paced: no unlimited link rate. */
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nlink_rate = unlimited\n", NULL, 0), -EINVAL);
	CHECK(err_at("3: link_rate unlimited is out of range, expected 1k..400G"));

	CHECK_EQ(load("[hostd]\ngranularity = flow\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: granularity \"flow\" is not valid, expected one of: dst, 5tuple, prio"));
	CHECK_EQ(load("[hostd]\nflow_control = xon\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: flow_control \"xon\" is not valid, expected one of: auto, none, pause, pfc, credit"));
	CHECK_EQ(load("[hostd]\nmax_flows = 1\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: max_flows 1 is out of range, expected 2..65535"));
	CHECK_EQ(load("[hostd]\nqueue = 1K\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: queue 1K is out of range, expected 2K..256M"));
	CHECK_EQ(load("[hostd]\nslot = 10ns\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: slot 10ns is out of range, expected 100ns..1ms"));
	CHECK_EQ(load("[hostd]\nbogus = 1\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: unknown key \"bogus\" in [hostd], expected one of: name, ctl_socket"));
	CHECK_EQ(load("[law]\nipd = -2\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: ipd -2 is out of range, expected -1..65535"));
	CHECK_EQ(load("[rate x]\nvlan = 4096\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: vlan 4096 is out of range, expected 0..4095"));

	CHECK_EQ(load("[hostd]\nxdp_mode = generic\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: xdp_mode \"generic\" is not valid, expected one of: native, skb, auto"));
	CHECK_EQ(load("[hostd]\nzero_copy = yes\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: zero_copy \"yes\" is not valid, expected one of: auto, on, off"));
	CHECK_EQ(load("[hostd]\nnic_pause = on\n", NULL, 0), -EINVAL);
	CHECK(err_at("2: nic_pause \"on\" is not valid, expected one of: warn, off, keep"));

	/* Checks across keys, after parsing: the file, no line. */
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nzero_copy = on\nxdp_mode = skb\n",
		      NULL, 0), -EINVAL);
	CHECK(err_at(" zero_copy = on with xdp_mode = skb, expected xdp_mode native or auto"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nzero_copy = on\nxdp_mode = auto\n"
		      "nic_pause = off\n", NULL, 0), 0);
	CHECK_EQ(C.zero_copy, NIC_ZC_ON);
	CHECK_EQ(C.xdp_mode, HD_XDP_AUTO);
	CHECK_EQ(C.nic_pause, NIC_PAUSE_OFF);
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nzero_copy = off\nxdp_mode = skb\n"
		      "nic_pause = keep\n", NULL, 0), 0);
	CHECK_EQ(C.zero_copy, NIC_ZC_OFF);
	CHECK_EQ(C.nic_pause, NIC_PAUSE_KEEP);
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nring_size = 1000\n", NULL, 0),
		 -EINVAL);
	CHECK(err_at(" ring_size 1000 is not a power of two"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nframe_size = 3000\n", NULL, 0),
		 -EINVAL);
	CHECK(err_at(" frame_size 3000, expected 0, 2048 or 4096"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nmode = reliable\ntag = no\n",
		      NULL, 0), -EINVAL);
	CHECK(err_at(" mode = reliable with tag = no, expected tag = yes"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\n[law]\nrate = 1G\nipd = 3\n",
		      NULL, 0), -EINVAL);
	CHECK(err_at(" [law] sets both rate and ipd, expected one of them"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nrx_queues = 0\n", NULL, 0), -EINVAL);
	CHECK(err_at(" [hostd] rx_queues \"0\": expected all, a count 1..64, or queues and ranges "
		     "0..63 with a comma or a dash"));
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nrx_queues = 1-2\n", NULL, 0), 0);
	CHECK(!strcmp(C.rx_queues, "1-2"));
}

static void test_unknown_law(void)
{
	char want[256];
	size_t n = 0;

	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\n[law]\nlaw = fastest\n", NULL, 0),
		 -EINVAL);
	CHECK(err_at(" [law] law \"fastest\" is not known, expected one of: "));
	/* Every law is listed, in rp_names order. */
	for (int i = 0; rp_names[i]; i++)
		n += snprintf(want + n, sizeof(want) - n, "%s%s", i ? ", " : "", rp_names[i]);
	CHECK(strstr(err, want));
}

static void test_rate_sections(void)
{
	static const char head[] = "[hostd]\nhost_port = cc0\nuplink = up0\n";
	char text[512];

	snprintf(text, sizeof(text), "%s[rate a]\ndst = 02:00:00:00:00:02\nrate = 1M\n"
		 "[rate b]\ndst = 02:00:00:00:00:02\nrate = 2M\n", head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at(" [rate a] and [rate b] both set dst 02:00:00:00:00:02 vlan 0, "
		     "expected one [rate] section per destination"));

	snprintf(text, sizeof(text), "%s[rate a]\nrate = 1M\n", head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at(" [rate a] has no dst, expected dst = aa:bb:cc:dd:ee:ff"));

	snprintf(text, sizeof(text), "%s[rate a]\ndst = 01:00:5e:00:00:01\n", head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at(" [rate a] dst 01:00:5e:00:00:01 is a multicast address, expected a unicast"));

	snprintf(text, sizeof(text), "%s[rate a]\ndst = 02:00:00:00:00:02\nrate = 1M\nipd = 0\n",
		 head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at(" [rate a] sets both rate and ipd"));

	snprintf(text, sizeof(text), "%s[rate a]\ndst = 02:00:00:00:00:0x\n", head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at("5: dst \"02:00:00:00:00:0x\" is not a MAC address, expected aa:bb:cc:dd:ee:ff"));

	/* The parser itself refuses a repeated label, with both lines. */
	snprintf(text, sizeof(text), "%s[rate a]\ndst = 02:00:00:00:00:02\n"
		 "[rate a]\ndst = 02:00:00:00:00:03\n", head);
	CHECK_EQ(load(text, NULL, 0), -EINVAL);
	CHECK(err_at("6: section [rate a] repeats the one at line 4"));
}

static void test_overrides(void)
{
	char *ovr[] = { "law.rate=50M", "rate.h2.rate=7M", "hostd.granularity=prio" };
	char *bad[] = { "rate.h9.rate=1M" };
	char *req[] = { "hostd.host_port=cc1", "hostd.uplink=up1" };

	CHECK_EQ(load(good_conf, ovr, 3), 0);
	CHECK_EQ(C.rate, 50000000ULL);
	CHECK_EQ(C.rates[0].rate, 7000000ULL);
	CHECK_EQ(C.granularity, FLOW_BY_PRIO);
	CHECK_EQ(C.link_rate, 10000000000ULL);  /* the file's, untouched */

	CHECK_EQ(load(good_conf, bad, 1), -EINVAL);
	CHECK(strstr(err, "override \"rate.h9.rate=1M\": no [rate h9] to override"));

	/* [hostd] may be absent from the file: overrides still reach it, and
	 * the checks run after them. */
	CHECK_EQ(load("[law]\nrate = 1M\n", req, 2), 0);
	CHECK(!strcmp(C.host_port, "cc1"));
	CHECK(!strcmp(C.uplink, "up1"));
	CHECK_EQ(load("[law]\nrate = 1M\n", req, 1), -EINVAL);
	CHECK(err_at(" uplink is not set"));
}

static void test_missing_file(void)
{
	CHECK_EQ(hd_cfg_load(&C, "/nonexistent/hostd.conf", NULL, 0, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "cannot open /nonexistent/hostd.conf: "));
}

/* The reference prints every section and key of the schema. */
static void test_reference(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cfg_print_reference(f, hd_cfg_sections, hd_cfg_nsections);
	fclose(f);
	CHECK(strstr(buf, "### [hostd]"));
	CHECK(strstr(buf, "### [law]"));
	CHECK(strstr(buf, "### [rate <label>]"));
	CHECK(strstr(buf, "| link_rate | rate (bit/s) | 1G | 1k..400G |"));
	CHECK(strstr(buf, "| granularity | dst\\|5tuple\\|prio | dst |  | restart |"));
	/* What a reload does with each key is in the table. */
	CHECK(strstr(buf, "| link_rate | rate (bit/s) | 1G | 1k..400G | live |"));
	CHECK(strstr(buf, "| queue | size (bytes) | 256K | 2K..256M | kept |"));
	CHECK(strstr(buf, "| law | string | static | at most 15 characters | restart |"));
	CHECK(strstr(buf, "Sections added, removed or reordered on reload: live."));
	free(buf);
}

/* The reload decision with hostd's tables (what hostd.c had as two lists). */
static struct cfg_change notes[16];
static char note_keys[16][24];
static int nnotes;

static void collect(void *arg, const struct cfg_change *c)
{
	if (nnotes < 16) {
		notes[nnotes] = *c;
		snprintf(note_keys[nnotes], sizeof(note_keys[0]), "%s", c->item ? c->item->key : "");
	}
	nnotes++;
}

static void test_reload(void)
{
	static struct hd_cfg o, n;
	const char *base = "[hostd]\nhost_port = cc0\nuplink = up0\nqueue = 64K\n[law]\nlaw = fimd\n"
			   "[rate h2]\ndst = 02:00:00:00:00:02\nrate = 50M\n";

	CHECK_EQ(load(base, NULL, 0), 0);
	o = C;
	/* Live: link_rate, [law] m and a [rate] section's rate; kept: queue. */
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nqueue = 128K\nlink_rate = 10G\n"
		      "[law]\nlaw = fimd\nm = 1.5\n[rate h2]\ndst = 02:00:00:00:00:02\nrate = 60M\n",
		      NULL, 0), 0);
	n = C;
	nnotes = 0;
	CHECK_EQ(cfg_reload_diff(hd_cfg_sections, hd_cfg_nsections, &o, &n, NULL, collect, NULL, err,
				 sizeof(err)), 0);
	CHECK_EQ(nnotes, 4);
	CHECK(!strcmp(note_keys[0], "link_rate") && notes[0].how == CFG_LIVE);
	CHECK(!strcmp(note_keys[1], "queue") && notes[1].how == CFG_KEEP);
	CHECK(!strcmp(note_keys[2], "m") && notes[2].how == CFG_LIVE);
	CHECK(!strcmp(note_keys[3], "rate") && !strcmp(notes[3].new_val, "60M"));
	CHECK_EQ(n.queue, 65536);           /* kept */
	CHECK_EQ(n.link_rate, 10000000000ULL);
	/* [rate] sections added or removed apply. */
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nqueue = 64K\n[law]\nlaw = fimd\n",
		      NULL, 0), 0);
	n = C;
	nnotes = 0;
	CHECK_EQ(cfg_reload_diff(hd_cfg_sections, hd_cfg_nsections, &o, &n, NULL, collect, NULL, err,
				 sizeof(err)), 0);
	CHECK_EQ(nnotes, 1);
	CHECK(notes[0].item == NULL && notes[0].how == CFG_LIVE);
	/* Restart: the law, the granularity, the tag; all named. */
	CHECK_EQ(load("[hostd]\nhost_port = cc0\nuplink = up0\nqueue = 64K\ngranularity = prio\n"
		      "tag = no\n[law]\nlaw = lipd\n[rate h2]\ndst = 02:00:00:00:00:02\nrate = 50M\n",
		      NULL, 0), 0);
	n = C;
	CHECK_EQ(cfg_reload_diff(hd_cfg_sections, hd_cfg_nsections, &o, &n, NULL, NULL, NULL, err,
				 sizeof(err)), -EBUSY);
	CHECK(strstr(err, "[hostd] granularity dst -> prio needs a restart"));
	CHECK(strstr(err, "[hostd] tag yes -> no needs a restart"));
	CHECK(strstr(err, "[law] law fimd -> lipd needs a restart"));
}

int main(void)
{
	RUN(test_good);
	RUN(test_defaults);
	RUN(test_missing_required);
	RUN(test_bad_values);
	RUN(test_unknown_law);
	RUN(test_rate_sections);
	RUN(test_overrides);
	RUN(test_missing_file);
	RUN(test_reference);
	RUN(test_reload);
	return check_summary();
}
