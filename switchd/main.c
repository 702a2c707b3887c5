// SPDX-License-Identifier: BSD-2-Clause
/* switchd is a library (tests and fuzzers link it); this is all main does. */
#include "switch.h"

int main(int argc, char **argv)
{
	return switchd_main(argc, argv);
}
