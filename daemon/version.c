// SPDX-License-Identifier: BSD-2-Clause
/* The build's version: see version.h. */
#include "version.h"
#include "gen/l2cc_version.h"

const char l2cc_version[] = L2CC_VERSION;

void l2cc_version_print(FILE *f, const char *prog)
{
	fprintf(f, "%s (l2cc) %s\n", prog, l2cc_version);
}
