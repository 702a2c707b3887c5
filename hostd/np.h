/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Notification points: the receiving host's side of a congestion-control
 * scheme. For every tagged data frame that reaches our host, hostd keeps
 * the sender's flow as a peer (its address, flow id, sequence numbers,
 * counts) and hands the frame to the notification point, which decides
 * what goes back to the sender and when: a CNP for marks (coalesced over
 * cnp_interval), an ACK per ack_every frames (reliable mode), later L2CI
 * feedback reflected to the source. One ops table per kind, one file each
 * (np_cnp.c, np_ack.c), picked by the configuration ([hostd] mode today).
 *
 * A notification point keeps its per-peer state in the peer's np_area and
 * its timers as FIFOs of peers (tfifo.h); it sends through np_send(), which
 * encodes with the control message table (daemon/ctrl_msg.h).
 */
#ifndef L2CC_HOSTD_NP_H
#define L2CC_HOSTD_NP_H

#include <stdbool.h>
#include <stdint.h>
#include "ctrl_msg.h"
#include "flow.h"

struct hd;
struct hd_cfg;
struct wire_tag;

#include "tfifo.h"

/*
 * The instance. Today's notification points answer on one timer FIFO of
 * peers each, so this is theirs, with np_fifo_create(), np_fifo_destroy()
 * and np_fifo_next() as their create, destroy and next_timer.
 */
struct np {
	struct hd *h;
	struct tfifo fifo;
};
int np_fifo_create(struct np **out, struct hd *h);
void np_fifo_destroy(struct np *np);
uint64_t np_fifo_next(const struct np *np);

#define NP_AREA_WORDS 4

/* A remote sender's flow, as the receiving side keeps it. */
struct hd_peer {
	uint8_t src[6];             /* the sender: where notifications go */
	uint8_t dst[6];             /* our host's MAC as the sender addressed it */
	uint16_t flow;              /* the sender's flow id */
	uint16_t vid;
	bool have_seq;
	uint32_t next_seq;          /* next expected sequence number */
	uint64_t frames, marked;
	uint64_t cnp_tx, ack_tx;    /* notifications sent to it */
	/* The notification point's own state (zeroed with the peer). */
	uint64_t np_area[NP_AREA_WORDS];
};

struct np_ops {
	const char *name;
	const char *help;
	/* Unmarked frames matter too (ACKs count every frame); otherwise
	 * hostd keeps no peer for a flow until one of its frames is marked. */
	bool every_frame;
	int (*create)(struct np **out, struct hd *h);
	void (*destroy)(struct np *np);
	/* A tagged frame of peer p (its flow table entry pf) arrived for our
	 * host; marked if FECN was set on the way. */
	void (*on_data)(struct np *np, struct hd_peer *p, const struct flow *pf,
			const struct wire_tag *t, uint32_t len, bool marked);
	/* Optional: a control message for the receiving side (an L2CI
	 * DISCOVER) from src to dst, our host's address. */
	void (*on_ctrl)(struct np *np, const uint8_t src[6], const uint8_t dst[6], int type,
			const union ctrl_msg *m);
	/* The absolute time on_timer() wants to run; UINT64_MAX for never. */
	uint64_t (*next_timer)(const struct np *np);
	void (*on_timer)(struct np *np, uint64_t now);
};

/* The notification point of a configuration (np.c): the law's (rp_ops.np)
 * or, without one, by [hostd] mode. */
const struct np_ops *np_for(const struct hd_cfg *cfg);

/* ---- what hostd offers a notification point (hd_path.c) ---------------------- */

uint64_t np_now(const struct hd *h);
const struct hd_cfg *np_cfg(const struct hd *h);
/* At most one CNP per peer per this interval: [hostd] cnp_interval, or
 * when that is 0 the law's (rp_ops.cnp_interval); 0 = one per mark. */
uint64_t np_cnp_interval(const struct hd *h);
/* The peer table, for tfifo_pop_due(), and the peer of one of its flows. */
const struct flow_table *np_peers(const struct hd *h);
struct hd_peer *np_peer(struct hd *h, const struct flow *pf);
uint32_t np_max_peers(const struct hd *h);
/* How full the way to the host is, in 0.01 % units: what the host port
 * was given in earlier passes and has not yet sent (its TX ring) over what
 * it holds; 10000 while frames wait in the uplink's ring for it. */
uint16_t np_host_backlog(const struct hd *h);
/* Send a message of type (L2CC_CTRL_CNP, _ACK, ...) to peer p, ahead of
 * data: counted on success, a notify_drop otherwise. 0 or -errno. */
int np_send(struct hd *h, struct hd_peer *p, int type, const union ctrl_msg *m);
/* The same to an address pair that is no peer (an echo): from src to dst. */
int np_send_to(struct hd *h, const uint8_t dst[6], const uint8_t src[6], int type,
	       const union ctrl_msg *m);

#endif
