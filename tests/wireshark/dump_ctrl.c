// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes a pcap of one frame per row of the control message table
 * (daemon/ctrl_msg.h), each encoding its row's sample message, and prints
 * each row's number and name, so check_dissector.sh can ask tshark to
 * dissect every type the daemons speak: a type added to the table without
 * a dissector fails the check.
 *
 * usage: dump_ctrl OUT.pcap
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctrl_msg.h"

static void put32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }

int main(int argc, char **argv)
{
	static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint8_t buf[2048];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: dump_ctrl OUT.pcap\n");
		return 2;
	}
	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	/* classic pcap, microseconds, LINKTYPE_ETHERNET (host byte order) */
	put32(f, 0xa1b2c3d4);
	fwrite(&(uint16_t){ 2 }, 2, 1, f);
	fwrite(&(uint16_t){ 4 }, 2, 1, f);
	put32(f, 0);
	put32(f, 0);
	put32(f, 65535);
	put32(f, 1);
	for (size_t i = 0; i < ctrl_ntypes; i++) {
		const struct ctrl_type *t = &ctrl_types[i];
		int n = t->encode(buf, sizeof(buf), dst, src, t->sample);

		if (n <= 0) {
			fprintf(stderr, "dump_ctrl: %s: its sample does not encode (%d)\n", t->name, n);
			fclose(f);
			return 1;
		}
		put32(f, (uint32_t)i);
		put32(f, 0);
		put32(f, (uint32_t)n);
		put32(f, (uint32_t)n);
		fwrite(buf, 1, (size_t)n, f);
		printf("%zu %u %s\n", i + 1, t->type, t->name);
	}
	return fclose(f) ? 1 : 0;
}
