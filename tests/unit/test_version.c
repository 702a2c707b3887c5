// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every binary says which build it is: `NAME --version` exits 0 and prints
 * "NAME (l2cc) VERSION" with the version the library was built with
 * (daemon/version.h: git describe of the tree, or "unknown"), the same for
 * all five; and each one's --help lists --version (its options are data,
 * so that is the table's row). The binaries are found beside this test's
 * own directory (build/tests/.. /bin); a build without them (the ASan
 * build makes only the unit tests) is a SKIP.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "version.h"

static const char *const bins[] = { "switchd", "hostd", "l2ccd", "l2ccctl", "l2cc-flowgen" };
static char bindir[PATH_MAX + 16];

/* Run bindir/name arg with stdout into out (n bytes); its exit status, or -1. */
static int run(const char *name, const char *arg, char *out, size_t n)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 128];
	size_t len = 0, r;
	FILE *p;
	int st;

	snprintf(path, sizeof(path), "%s/%s", bindir, name);
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", path, arg);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (len + 1 < n && (r = fread(out + len, 1, n - 1 - len, p)) > 0)
		len += r;
	out[len] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_version_every_binary(void)
{
	char out[8192], want[256];

	/* One token: git describe's, or "unknown". */
	CHECK(l2cc_version[0] != '\0');
	CHECK(strcspn(l2cc_version, " \t\n\"\\") == strlen(l2cc_version));
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		snprintf(want, sizeof(want), "%s (l2cc) %s\n", bins[i], l2cc_version);
		CHECK_EQ(run(bins[i], "--version", out, sizeof(out)), 0);
		if (strcmp(out, want))
			printf("    %s --version printed \"%s\", expected \"%.*s\"\n", bins[i], out,
			       (int)strlen(want) - 1, want);
		CHECK(!strcmp(out, want));
		CHECK_EQ(run(bins[i], "--help", out, sizeof(out)), 0);
		if (!strstr(out, "--version"))
			printf("    %s --help does not list --version\n", bins[i]);
		CHECK(strstr(out, "--version") != NULL);
	}
}

int main(void)
{
	char self[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		printf("SKIP test_version_every_binary: /proc/self/exe: %s\n", strerror(errno));
		return check_summary();
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(bindir, sizeof(bindir), "%s/../bin", self);
	snprintf(probe, sizeof(probe), "%s/switchd", bindir);
	if (access(probe, X_OK)) {
		printf("SKIP test_version_every_binary: no binaries in %s (this build makes the "
		       "unit tests only)\n", bindir);
		return check_summary();
	}
	RUN(test_version_every_binary);
	return check_summary();
}
