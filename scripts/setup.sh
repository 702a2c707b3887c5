#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install the Debian packages l2cc needs to build, test and run, if missing.
# Idempotent and quiet when everything is there. Needs root to install.
set -euo pipefail

PKGS=(
	build-essential pkg-config clang llvm
	libbpf-dev libxdp-dev bpftool xdp-tools linux-libc-dev
	libnl-3-dev libnl-route-3-dev
	iproute2 ethtool iputils-ping iperf3 tshark tcpdump
	python3 python3-yaml python3-matplotlib
	ansible-core
	libclang-rt-14-dev
	prometheus
	stress-ng
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; the answer does not matter here.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
# prometheus is here for promtool (the metrics test); its server must not
# start (no policy-rc.d: invoke-rc.d would start it where systemd runs).
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d.l2cc
if [ ! -e /usr/sbin/policy-rc.d ]; then
	mv /usr/sbin/policy-rc.d.l2cc /usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
else
	rm -f /usr/sbin/policy-rc.d.l2cc
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
