/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The version every binary reports (--version, the daemons' `status` and
 * l2cc_build_info): `git describe --always --dirty --abbrev=12` of the
 * source tree when it was built, or "unknown" outside a git checkout. The
 * Makefile writes it into build/gen/l2cc_version.h, and only when it
 * changed; version.c is the one object that includes that header, so a new
 * commit recompiles one file and relinks, and a rebuild without one does
 * neither.
 */
#ifndef L2CC_VERSION_H
#define L2CC_VERSION_H

#include <stdio.h>

extern const char l2cc_version[];

/* --version's line: "PROG (l2cc) VERSION". */
void l2cc_version_print(FILE *f, const char *prog);

#endif
