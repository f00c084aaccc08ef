# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# ctxprof: the one build.  Everything generated lands under $(OUTPUT).
# Targets: all (default), deps, deps-cross, demo, check, integration, test, fuzz, bench,
#          format, lint, vmlinux, clean, image, test-deploy, test-kernels, test-go-versions.
#          V=1 shows the commands.

CLANG ?= clang
BPFTOOL ?= bpftool
GO ?= go
# AArch64 test fixtures (unit tests on any host): Debian's cross compiler
A64_CC ?= aarch64-linux-gnu-gcc

# ARCH: x86 or arm64; another than the host's cross-builds with Debian's cross
# toolchain (gcc-aarch64-linux-gnu / gcc-x86-64-linux-gnu) and the target's
# multiarch -dev packages (make deps-cross), into build/ARCH, collector included
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifeq ($(wildcard vmlinux/$(ARCH)/vmlinux.h),)
$(error Architecture $(ARCH) is not supported yet: run vmlinux/gen.sh $(ARCH) on such a machine)
endif
ifeq ($(ARCH),$(HOST_ARCH))
OUTPUT ?= build
COLLECTOR := collector
PKG_CONFIG := pkg-config
else
TRIPLET := $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu,x86_64-linux-gnu)
OUTPUT ?= build/$(ARCH)
COLLECTOR := $(OUTPUT)/collector
ifeq ($(origin CC),default)
CC := $(TRIPLET)-gcc
endif
ifeq ($(origin AR),default)
AR := $(TRIPLET)-ar
endif
OBJCOPY ?= $(TRIPLET)-objcopy
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET)/pkgconfig:/usr/share/pkgconfig pkg-config
endif

OBJCOPY ?= objcopy
CFLAGS ?= -g -O2
WARNINGS := -Wall -Wextra -Werror -Wno-unused-parameter
INCLUDES := -Iinclude -Iuser -I$(OUTPUT)
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE $(INCLUDES) -MMD -MP $(EXTRA_CFLAGS)
# each library once: libbpf, libdw and libelf (CFI and ELF files), zlib
# (gzipped pprof, .gnu_debuglink CRCs), liblzma (MiniDebugInfo), liburcu,
# libiberty (C++ and Rust demangling; static only, so no pkg-config), libcap
# (dropping capabilities after start-up), libmicrohttpd (/metrics, /healthz,
# /debug/pprof/profile), libcurl (--push uploads)
LIBS := $(shell $(PKG_CONFIG) --libs libbpf libdw libelf zlib liblzma libcap libmicrohttpd libcurl \
	2>/dev/null || echo -lbpf -ldw -lelf -lz -llzma -lcap -lmicrohttpd -lcurl) -lpthread -lm \
	-lurcu-memb -lurcu-common -liberty
ALL_LDFLAGS := $(LDFLAGS) $(EXTRA_LDFLAGS)

# clang's own system include dirs, so BPF code finds <asm/...> types if needed
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -Ivmlinux/$(ARCH) \
	$(CLANG_BPF_SYS_INCLUDES) -Wall -Werror -MMD -MP

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-9s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS)) $(OUTPUT)/sampler_compat.skel.h

# the collector, one folder per component (docs/ARCHITECTURE.md) and one per
# runtime (user/runtimes/<name>/); every user/*/*.c and user/runtimes/*/*.c but
# the main goes into one static library; test and fuzz binaries link it, and
# the linker takes only the objects they use
USER_MAIN := user/collector/collector.c
USER_SRCS := $(filter-out $(USER_MAIN),$(wildcard user/*/*.c user/runtimes/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
USER_DIRS := $(sort $(dir $(USER_OBJS)))
LIBCOLLECTOR := $(OUTPUT)/libcollector.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
UNIT_FIXTURES := $(OUTPUT)/tests/fixtures.o
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
PPROF := $(OUTPUT)/pprof

.PHONY: all deps deps-cross demo check integration test fuzz bench format lint vmlinux clean \
	test-kernels test-go-versions
.DELETE_ON_ERROR:
.SECONDARY:

all: $(COLLECTOR) $(WORKLOADS) $(OUTPUT)/workloads/burner libctxprof

# --- dependencies (Debian 12), idempotent: apt-get runs only when something is missing
# chromium, npm (for node) and speedscope: the real-browser check (tests/integration/viewer.sh)
# python3-dev: CPython 3.11's internal headers, test_python_layout's reference
# nodejs and default-jdk-headless (javac, jcmd: the JRE has neither): JIT names (test_jit_names.sh)
# gcc-aarch64-linux-gnu: AArch64 fixtures (test_elf_syms_lookup: PLT names); make deps-cross adds the
# arm64 libraries for make ARCH=arm64
# the collector's own build packages are also deploy/Dockerfile's build stage's
DEB_PKGS := make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev \
	liblzma-dev libiberty-dev libcap-dev libmicrohttpd-dev libcurl4-openssl-dev \
	libcmocka-dev liburcu-dev golang-go golang-github-google-pprof-dev \
	linux-perf bpftrace libclang-rt-14-dev g++ python3-minimal python3 python3-dev xz-utils sqlite3 openssl \
	python3-protobuf protobuf-compiler \
	podman buildah runc debootstrap prometheus curl jq nodejs chromium default-jdk-headless \
	gcc-aarch64-linux-gnu qemu-system-x86 qemu-system-arm busybox-static cpio
# speedscope's built web app, from the npm registry, pinned by version and by the
# tarball's SHA-512 (the registry's "integrity", in hex).  It goes in DEPS_DIR, not
# under $(OUTPUT): it survives make clean and every clone on the machine (a fresh CI
# clone too) shares one install, as with the Debian packages; the version is in the
# directory's name, so branches that pin different versions do not collide.
SPEEDSCOPE_VERSION := 1.25.0
SPEEDSCOPE_SHA512 := 7297fd1d64d97f58a32d7049ae4f3b55eff9e2d9d8c7aae57f48144e1be7de8a24ea1eb784b5d539088c7f8e0f4fe5e8579d3770f7ef7e24f980fe6fa23a7a02
DEPS_DIR ?= /opt/ctxprof-deps
SPEEDSCOPE_DIR := $(DEPS_DIR)/speedscope-$(SPEEDSCOPE_VERSION)
export SPEEDSCOPE_DIR
deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done; command -v npm >/dev/null || echo npm); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS      installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:" $$missing >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
			|| { echo "make deps: apt-get install failed for:" $$missing >&2; exit 1; }; \
	fi
	$(Q)if [ ! -f $(SPEEDSCOPE_DIR)/dist/release/index.html ]; then \
		echo "  DEPS      speedscope $(SPEEDSCOPE_VERSION) (npm) into $(SPEEDSCOPE_DIR)"; \
		tests/integration/install_speedscope.sh $(SPEEDSCOPE_VERSION) $(SPEEDSCOPE_SHA512) \
			$(SPEEDSCOPE_DIR); \
	fi

# the cross toolchain and the other architecture's -dev packages (multiarch),
# for make ARCH=arm64 on x86-64 (or ARCH=x86 on arm64)
CROSS_ARCH := $(if $(filter x86,$(HOST_ARCH)),arm64,amd64)
CROSS_PKGS := $(if $(filter x86,$(HOST_ARCH)),gcc-aarch64-linux-gnu,gcc-x86-64-linux-gnu) \
	$(addsuffix :$(CROSS_ARCH),libbpf-dev libelf-dev libdw-dev zlib1g-dev liblzma-dev \
	libiberty-dev libcap-dev libmicrohttpd-dev libcurl4-openssl-dev liburcu-dev \
	libpython3.11-dev)
deps-cross: deps
	$(Q)dpkg --print-foreign-architectures | grep -qx $(CROSS_ARCH) || \
		{ dpkg --add-architecture $(CROSS_ARCH) && apt-get update -qq; }
	$(Q)missing=$$(for p in $(CROSS_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); [ -z "$$missing" ] || { echo "  DEPS      installing:" $$missing; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }

# --- BPF objects and skeletons
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# the sampler for kernels without bpf_loop (bpf/sampler.bpf.c's header): driven
# through the first one's skeleton, so their skeletons' structs must be the same
$(OUTPUT)/sampler_compat.bpf.o: bpf/sampler.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSAMPLER_NO_LOOP -c $< -o $@

$(OUTPUT)/sampler_compat.skel.h: $(OUTPUT)/sampler_compat.bpf.o $(OUTPUT)/sampler.skel.h
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sampler_compat_bpf > $@
	$(Q)sed -n '/^struct sampler_compat_bpf {/,/^};/p' $@ | sed 's/sampler_compat_bpf/SKEL/g' \
		> $@.struct && sed -n '/^struct sampler_bpf {/,/^};/p' $(OUTPUT)/sampler.skel.h | \
		sed 's/sampler_bpf/SKEL/g' | cmp -s - $@.struct || { rm -f $@ $@.struct; \
		echo "$@: its struct differs from sampler_bpf's: keep the maps," \
			"programs and variables of bpf/sampler.bpf.c the same in both builds" >&2; \
		exit 1; }; rm -f $@.struct

# --- userspace
$(OUTPUT)/user/%.o: user/%.c $(SKELS) | $(USER_DIRS) $(OUTPUT)/user/collector
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBCOLLECTOR): $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(COLLECTOR): $(OUTPUT)/user/collector/collector.o $(LIBCOLLECTOR)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LIBS) -o $@

# --- tests
# a test links the objects its rule lists (the fixtures, and helpers a .mk adds to it)
$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(UNIT_FIXTURES) $(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(filter %.o,$^) $(LIBCOLLECTOR) $(ALL_LDFLAGS) $(LIBS) -lcmocka \
		-o $@

# workloads keep frame pointers and stay un-inlined so their stacks are known
$(OUTPUT)/workloads/%: tests/workloads/%.c | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O1 -fno-omit-frame-pointer -fno-inline -std=gnu11 -D_GNU_SOURCE \
		-Wall -Werror -Iinclude $< $(WORKLOAD_LIBS) -lpthread -o $@

# two hundred short-lived processes, each in a function of its own (--all test)
$(OUTPUT)/workloads/burner.c: tests/workloads/gen_burner.sh | $(OUTPUT)/workloads
	$(Q)tests/workloads/gen_burner.sh > $@
$(OUTPUT)/workloads/burner: $(OUTPUT)/workloads/burner.c
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O1 -fno-omit-frame-pointer -fno-inline -Wall -Werror $< -o $@

# the reference pprof tool, built offline from Debian's source package
$(PPROF): | $(OUTPUT)
	$(call msg,GO,$@)
	$(Q)GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(abspath $(OUTPUT))/gocache \
		$(GO) build -o $@ github.com/google/pprof

# fuzz targets: clang + libFuzzer with ASan/UBSan over the whole collector
# library, compiled once for all of them (fuzzer-no-link: coverage, no main)
FUZZ_SAN := -g -O1 -std=gnu11 -D_GNU_SOURCE $(INCLUDES)
FUZZ_CFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer,address,undefined
FUZZ_OBJS := $(patsubst user/%.c,$(OUTPUT)/fuzz/obj/%.o,$(USER_SRCS))
$(OUTPUT)/fuzz/obj/%.o: user/%.c $(SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_OBJS) $(LIBS) -o $@

include lib/ctxprof/ctxprof.mk bench/bench.mk deploy/deploy.mk
-include tests/unit/*.mk tests/workloads/*.mk

# workloads instrumented with libctxprof link it statically
CTXPROF_WORKLOADS := $(OUTPUT)/workloads/requests $(OUTPUT)/workloads/recycle \
	$(OUTPUT)/workloads/phases $(OUTPUT)/workloads/bad_utf8 $(OUTPUT)/workloads/offcpu_requests
$(CTXPROF_WORKLOADS): $(LIBCTXPROF_A)
$(CTXPROF_WORKLOADS): WORKLOAD_LIBS = $(LIBCTXPROF_A)

TEST_DEPS := all $(UNIT_BINS) $(FUZZ_BINS) $(PPROF) $(STRESS_BINS)

# unit tests, plus the sanitizer stress tests (no root needed)
check: $(UNIT_BINS) $(PPROF) $(UNIT_EXTRA) $(STRESS_BINS)
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) tests/run.sh unit $(UNIT_BINS) $(STRESS_BINS)

integration: all $(PPROF)
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) tests/run.sh integration tests/integration/test_*.sh

# every fuzz target for FUZZ_SECONDS (default 20) each, then executions per target
fuzz: $(FUZZ_BINS)
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh fuzz $(FUZZ_BINS)

# SUITE:MINOR, each Go of Debian's suites (1.19: the host's, in test_go*.sh)
GO_VERSIONS_ALL := bookworm-backports:21 bookworm-backports:22 bookworm-backports:23 trixie:24 \
	trixie-backports:25 sid:26 sid:27

# each fuzz target's smoke run in make test (make fuzz runs them longer)
TEST_FUZZ_SECONDS ?= 3

# the README's test command: everything, dependencies included; the arm64
# build too, for its guest in test_kernels.sh (the test machines are x86-64)
test: deps deps-cross
	$(Q)$(MAKE) --no-print-directory $(TEST_DEPS) $(UNIT_EXTRA)
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(OUTPUT)/arm64 all
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) \
		tests/run.sh all $(UNIT_BINS) $(STRESS_BINS) $(FUZZ_BINS) tests/integration/test_*.sh

# every kernel of the matrix (tests/kernels/README.md): minutes per kernel under TCG
test-kernels: deps deps-cross
	$(Q)$(MAKE) --no-print-directory all $(PPROF)
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(OUTPUT)/arm64 all
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) ARM64_OUTPUT=$(OUTPUT)/arm64 tests/kernels/matrix.sh

# every Go toolchain Debian ships, each in its root (make test: the ends of
# each layout range, tests/integration/test_go_versions.sh)
test-go-versions: deps
	$(Q)$(MAKE) --no-print-directory all $(PPROF)
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) GO_VERSIONS="$(GO_VERSIONS_ALL)" \
		tests/run.sh integration tests/integration/test_go_versions.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(PPROF)
	$(Q)PPROF=$(abspath $(PPROF)) OUTPUT=$(OUTPUT) tests/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(PPROF) $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) bench/run.sh

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')

# formatting, then clang-tidy's bug finders (.clang-tidy says which and why)
# over the collector and libctxprof; what it finds in generated skeletons is
# bpftool's, not ours
CLANG_TIDY ?= clang-tidy
TIDY_SRCS := $(USER_MAIN) $(USER_SRCS) $(LIBCTXPROF_SRCS)
lint: $(SKELS)
	$(call msg,LINT,clang-format)
	$(Q)clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')
	$(call msg,LINT,layers)
	$(Q)python3 tests/lint/check_layers.py
	$(call msg,LINT,clang-tidy)
	$(Q)printf '%s\n' $(TIDY_SRCS) | xargs -P 2 -n 4 sh -c '$(CLANG_TIDY) --quiet "$$@" -- \
		-std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -Ilib/ctxprof -isystem $(OUTPUT)' tidy \
		2>&1 | grep -E '(warning|error):' | grep -v -e '^$(OUTPUT)/' -e '^$(abspath $(OUTPUT))/' | { ! grep . ; }

vmlinux:
	$(Q)vmlinux/gen.sh $(ARCH)

$(OUTPUT) $(USER_DIRS) $(OUTPUT)/user/collector $(OUTPUT)/tests $(OUTPUT)/workloads \
		$(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) collector

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/user/runtimes/*/*.d $(OUTPUT)/tests/*.d \
	$(OUTPUT)/fuzz/obj/*/*.d $(OUTPUT)/fuzz/obj/runtimes/*/*.d)
