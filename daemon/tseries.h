/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON-lines time series: one JSON document per line, appended to a file,
 * for plotting queue depths, rates and marks after a run.
 *
 * The file is bounded: once a line would take it past max_bytes it is
 * renamed to PATH.1 (replacing an older one) and a new PATH started, so
 * the two together hold at most about 2 * max_bytes. The path is never
 * followed through a symbolic link (a link planted where the daemon, as
 * root, writes would let it append to any file) and must be a regular file.
 */
#ifndef L2CC_TSERIES_H
#define L2CC_TSERIES_H

#include <stdint.h>

struct tseries;

/* Open (creating, mode 0640) path for appending; max_bytes 0 = no bound.
 * 0 or -errno: -ELOOP for a symbolic link, -EINVAL for something that is
 * not a regular file (a FIFO would block the daemon). */
int tseries_open(struct tseries **out, const char *path, uint64_t max_bytes);

/*
 * Append json and a newline in a single write, so concurrent writers and a
 * reader tailing the file never see half a line; rotate first if the line
 * would take the file past its bound (a line alone larger than the bound is
 * still written, to a fresh file). 0 or -errno (-EIO if the file system took
 * only part of the line).
 */
int tseries_write_line(struct tseries *ts, const char *json);

/* Rotations so far (the time series' lines before them are in PATH.1). */
uint64_t tseries_rotations(const struct tseries *ts);

/* Close the file; NULL is ok. */
void tseries_close(struct tseries *ts);

#endif
