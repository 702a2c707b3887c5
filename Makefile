# SPDX-License-Identifier: BSD-2-Clause
# l2cc build. `make` builds everything; `make test` sets up and runs the tests;
# `make demo` sets up and runs the demo; `make bench` runs the benchmark.
# V=1 shows the full commands.

.DELETE_ON_ERROR:
.SUFFIXES:
# Keep every file a chain of rules made (the skeletons, the test programs'
# objects): deleted as intermediates, a skeleton would be remade by the next
# `make` and everything that includes it recompiled and relinked.
.SECONDARY:

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

PKGS    := libbpf libxdp libnl-3.0 libnl-route-3.0
B       := build

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	   -Idaemon -Ibpf -I$(B) $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lm
# SAN=1 (make test-asan, into build-asan/): everything with ASan and UBSan,
# any finding fatal.
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS  += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ibpf \
	   $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))

BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(BPF_SRCS:bpf/%.bpf.c=$(B)/%.bpf.o)
SKELS       := $(BPF_SRCS:bpf/%.bpf.c=$(B)/%.skel.h)

LIB_SRCS    := $(wildcard daemon/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(B)/%.o)
SW_SRCS     := $(filter-out switchd/main.c,$(wildcard switchd/*.c))
SW_OBJS     := $(SW_SRCS:%.c=$(B)/%.o)
HD_SRCS     := $(filter-out hostd/main.c,$(wildcard hostd/*.c))
HD_OBJS     := $(HD_SRCS:%.c=$(B)/%.o)

UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
BPFT_SRCS   := $(wildcard tests/bpf/test_*.c)
BPFT_BINS   := $(BPFT_SRCS:tests/bpf/%.c=$(B)/tests/%)
TOOL_BINS   := $(B)/tests/dump_ctrl
BENCH_SRCS  := $(wildcard tests/bench/*.c)
BENCH_BINS  := $(BENCH_SRCS:tests/bench/%.c=$(B)/bench/%)
FUZZ_SRCS   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS   := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz/%)

BINS := $(B)/bin/switchd $(B)/bin/hostd $(B)/bin/l2ccd $(B)/bin/l2ccctl $(B)/bin/l2cc-flowgen

all: $(BINS) $(BPF_OBJS) $(UNIT_BINS) $(BPFT_BINS) $(BENCH_BINS) $(TOOL_BINS)

$(B)/%.bpf.o: bpf/%.bpf.c bpf/l2cc_shared.h
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Every C object may include a skeleton; generate them first.
$(B)/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/libl2cc.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libswitchd.a: $(SW_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libhostd.a: $(HD_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/bin/switchd: $(B)/switchd/main.o $(B)/libswitchd.a $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/bin/hostd: $(B)/hostd/main.o $(B)/libhostd.a $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Several switchd and hostd daemons in one process (docs/l2ccd.md).
$(B)/bin/l2ccd: $(B)/l2ccd/l2ccd.o $(B)/libswitchd.a $(B)/libhostd.a $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread

$(B)/bin/l2ccctl: $(B)/l2ccctl/l2ccctl.o $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/bin/l2cc-flowgen: $(B)/flowgen/l2cc-flowgen.o $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: $(B)/tests/unit/%.o $(B)/libswitchd.a $(B)/libhostd.a $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_bpf_%: $(B)/tests/bpf/test_bpf_%.o $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Test tools that are not tests themselves (check_dissector.sh runs dump_ctrl).
$(B)/tests/dump_ctrl: $(B)/tests/wireshark/dump_ctrl.o $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/bench/%: $(B)/tests/bench/%.o $(B)/libl2cc.a
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Fuzzers: libFuzzer with ASan/UBSan, one per target (README.md, Fuzzers), built from the sources
# directly so the sanitizers see the decoder code. One compiler run over many
# sources cannot write one dependency file, so every header is a prerequisite.
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -Idaemon -Ibpf -I$(B) $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
FUZZ_HDRS := $(wildcard daemon/*.h switchd/*.h hostd/*.h bpf/*.h tests/fuzz/*.h) $(SKELS)
$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(SW_SRCS) $(HD_SRCS) $(FUZZ_HDRS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRCS) $(SW_SRCS) $(HD_SRCS) $(LDLIBS)

fuzz: $(FUZZ_BINS)

# The fuzzers for as long as you like: L2CC_FUZZ_SECONDS each (default 600),
# over the seed corpus, the corpus grown kept in build/fuzz/corpus/<target>/
# (merge what adds coverage into tests/fuzz/corpus/ by hand: README.md, Fuzzers).
fuzz-long: $(FUZZ_BINS)
	$(Q)tests/fuzz/run_long.sh $(FUZZ_BINS)

# The unit tests once more, built with ASan and UBSan (build-asan/).
# tests/run.sh's asan layer runs them.
ASAN_B := build-asan
asan-bins:
	$(Q)$(MAKE) --no-print-directory B=$(ASAN_B) SAN=1 \
		$(UNIT_SRCS:tests/unit/%.c=$(ASAN_B)/tests/%)

test-asan: asan-bins
	$(Q)L2CC_TESTS=asan tests/run.sh

# ---- the two README commands and friends --------------------------------
deps:
	$(Q)scripts/setup.sh

test: deps
	$(Q)$(MAKE) --no-print-directory all fuzz asan-bins
	$(Q)tests/run.sh

# The suite beside a CPU hog (not in CI): no test may FAIL for want of a CPU.
test-busy: deps
	$(Q)$(MAKE) --no-print-directory all fuzz
	$(Q)tests/busy.sh

# 60 s of 10x oversubscription with a misbehaving host (not in CI).
soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)flock $${L2CC_NETNS_LOCK:-/tmp/l2cc-netns.lock} tests/soak.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench.sh

bench-hostd: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench_hostd.sh

bench-lab: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench_lab.sh

PREFIX ?= /usr/local
SYSTEMD_DIR ?= /etc/systemd/system
install: $(BINS)
	install -D -m 0755 $(B)/bin/switchd $(DESTDIR)$(PREFIX)/sbin/switchd
	install -D -m 0755 $(B)/bin/hostd $(DESTDIR)$(PREFIX)/sbin/hostd
	install -D -m 0755 $(B)/bin/l2ccd $(DESTDIR)$(PREFIX)/sbin/l2ccd
	install -D -m 0755 $(B)/bin/l2ccctl $(DESTDIR)$(PREFIX)/bin/l2ccctl
	install -D -m 0755 $(B)/bin/l2cc-flowgen $(DESTDIR)$(PREFIX)/bin/l2cc-flowgen
	install -D -m 0644 config/systemd/switchd@.service $(DESTDIR)$(SYSTEMD_DIR)/switchd@.service
	install -D -m 0644 config/systemd/hostd@.service $(DESTDIR)$(SYSTEMD_DIR)/hostd@.service
	install -d $(DESTDIR)/etc/l2cc

clean:
	rm -rf $(B) $(ASAN_B)

.PHONY: all deps test test-busy soak demo bench bench-hostd bench-lab fuzz fuzz-long asan-bins test-asan install clean

-include $(shell find $(B) -name '*.d' 2>/dev/null)
