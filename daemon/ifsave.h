/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Interface settings a daemon changes and must give back, even after it
 * was killed: today net.ipv6.conf.IF.disable_ipv6, which both daemons set
 * to 1 on the interfaces they own (the kernel's router solicitations and
 * MLD reports would otherwise leave through them).
 *
 * Before the change the original value is saved in a file under the
 * runtime directory, named by the network namespace (the inode of
 * /proc/self/ns/net: every hostd's ports are called cc0 and up0) and the
 * interface, and holding the value with the interface's ifindex and the
 * namespace's cookie (SO_NETNS_COOKIE, never reused, unlike the inode). A
 * clean stop writes the value back and removes the file. A daemon killed
 * before that leaves the file; the next start in the same namespace on the
 * same interface takes the value from it instead of reading the 1 its
 * predecessor wrote, so that its own clean stop restores the original. A
 * file whose ifindex or cookie do not match (the interface or namespace was
 * made anew) is stale and replaced.
 */
#ifndef L2CC_IFSAVE_H
#define L2CC_IFSAVE_H

#include <stdbool.h>

/*
 * Turn IPv6 off on ifname, the original value saved under dir first (dir
 * "" = not saved; a missing dir is created, one level). Returns the
 * original value (0 or 1) to hand to ifsave_ipv6_restore(), or -errno
 * (-ENOENT: no IPv6 on this kernel or no such interface): nothing changed.
 */
int ifsave_ipv6_off(const char *dir, const char *ifname);

/* Write was back (unless negative) and remove the saved file. */
void ifsave_ipv6_restore(const char *dir, const char *ifname, int was);

/* The saved file's path for ifname in this namespace, in buf: for tests and
 * the documentation's examples. 0 or -errno. */
int ifsave_path(const char *dir, const char *ifname, char *buf, unsigned len);

/*
 * The same for another small setting, kind naming the file
 * (DIR/KIND-NETNS-IFNAME; nic.c saves its pause bits as "pause"): cur is
 * the value now, 0..max. Returns the original: the one a killed
 * predecessor saved (*from_crash set, its file kept), else cur once it is
 * saved; -errno when it could not be saved (nothing changed: the caller
 * decides whether to go on).
 */
int ifsave_begin(const char *dir, const char *kind, const char *ifname, int cur, int max,
		 bool *from_crash);
/* The value a killed predecessor saved for (kind, ifname), or -errno
 * (-ENOENT: none; -ESTALE: the interface or namespace is a new one). */
int ifsave_peek(const char *dir, const char *kind, const char *ifname, int max);
/* Remove the saved file (the original is back). */
void ifsave_end(const char *dir, const char *kind, const char *ifname);

#endif
