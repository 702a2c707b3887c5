// SPDX-License-Identifier: BSD-2-Clause
/* hostd is a library (tests link it); this is all main does. */
#include "hostd.h"

int main(int argc, char **argv)
{
	return hostd_main(argc, argv);
}
