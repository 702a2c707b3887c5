/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON-lines time series: one JSON document per line, appended to a file,
 * for plotting queue depths, rates and marks after a run.
 */
#ifndef L2CC_TSERIES_H
#define L2CC_TSERIES_H

struct tseries;

/* Open (creating, mode 0644) path for appending. 0 or -errno. */
int tseries_open(struct tseries **out, const char *path);

/*
 * Append json and a newline in a single write, so concurrent writers and a
 * reader tailing the file never see half a line. 0 or -errno (-EIO if the
 * file system took only part of the line).
 */
int tseries_write_line(struct tseries *ts, const char *json);

/* Close the file; NULL is ok. */
void tseries_close(struct tseries *ts);

#endif
