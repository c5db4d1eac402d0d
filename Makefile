# Thin wrapper over CMake/CTest. `make test` is the README's test command and what CI runs.
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
DESTDIR    ?=
JOBS       ?= $(shell nproc)

.PHONY: all deps configure build test test-build unit-test integration-test demo bench install format clean
.PHONY: deb deb-check hook-only-check image image-check
.PHONY: test-sanitize test-tsan fuzz asan-build tsan-build fuzz-build deb-verify image-check-build

# Every target that needs the system packages depends on $(DEPS); `make DEPS= ...` skips that
# check, for a make that runs beside another that already made it (.ci/run's background builds).
DEPS ?= deps

all: build

deps:
	scripts/deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CCACHE_FLAG)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The passes select tests by ctest label, never by test name; tests/sources.cmake gives each
# integration source file (and each script test) its labels: `integration` on all of them,
# `no_sql` on the tests that send no statement of their own choosing (the installed hook and its
# C, Go and ABI checks, the publisher against the fake IM, the metrics server, the wake listener
# and the loop's clock), `tsan` on the threaded ones (test-tsan below). ctest's -L and -LE are
# regular expressions over the labels, hence the anchors. LabelGroups.EveryPassSelectsTests (a
# unit test) fails if a label selected here has no test.
MYSQL_PASS_LABELS = -L '^integration$$' -LE '^no_sql$$'

# deps + build + a private MariaDB + every unit and integration test, then the integration suite
# a second time with the MySQL statement set forced (every commit, claim, mark, purge and operator
# command through the portable statements; MariaDB accepts them), without the no_sql tests. The
# benchmarks are built too (not run), so a change that breaks them fails here.
test: test-build
	scripts/run-tests.sh $(BUILD_DIR)
	ROOM_OUTBOX_TEST_MYSQL_DIALECT=mysql scripts/run-tests.sh $(BUILD_DIR) $(MYSQL_PASS_LABELS)

# What make test runs its tests on: deps, the build and the benchmarks.
test-build: deps
	$(MAKE) build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target outbox-bench

unit-test: build
	ctest --test-dir $(BUILD_DIR) -L '^unit$$' --output-on-failure -j $(JOBS)

integration-test: build
	scripts/run-tests.sh $(BUILD_DIR) -L '^integration$$'
	ROOM_OUTBOX_TEST_MYSQL_DIALECT=mysql scripts/run-tests.sh $(BUILD_DIR) $(MYSQL_PASS_LABELS)

# A local demo: private MariaDB, a local stand-in for Tencent IM, room-sim and outbox-relay.
demo: deps
	$(MAKE) build
	scripts/demo.sh $(BUILD_DIR)

bench: deps
	$(MAKE) build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target outbox-bench
	scripts/bench.sh $(BUILD_DIR)

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Debian packages (debian/): dpkg-buildpackage from a copy of the tree into DEB_DIR, then
# lintian's verdict and the package sizes. deb-check installs them on this machine (root),
# checks them and purges them again, then checks the upgrade from an older outbox-relay package
# on a database at the older schema (check-deb-upgrade.sh, which prints its transcript).
DEB_DIR ?= $(BUILD_DIR)/deb

deb: $(DEPS)
	scripts/build-deb.sh $(DEB_DIR) $(JOBS)

deb-check: deb
	$(MAKE) deb-verify

# The checks of deb-check on the packages a `make deb` left in DEB_DIR, without building them.
deb-verify:
	tests/install/check-deb.sh $(DEB_DIR)
	tests/install/check-deb-upgrade.sh $(DEB_DIR) $(JOBS)

# The hook alone (-DROOM_OUTBOX_BUILD_RELAY=OFF) in a fresh HOOK_ONLY_BUILD_DIR, with cpp-httplib,
# libsystemd, CLI11, spdlog and asciidoctor made unfindable: configured, built, installed into a
# scratch DESTDIR and checked (tests/install/check-hook-only.sh). ccache keeps a rerun cheap.
HOOK_ONLY_BUILD_DIR ?= build-hook-only

hook-only-check: deps
	JOBS=$(JOBS) tests/install/check-hook-only.sh $(HOOK_ONLY_BUILD_DIR) $(CCACHE_FLAG)

# The outbox-relay container image (deploy/outbox-relay.Containerfile) with podman, and the
# im-stub image from the same build (scripts/image.sh; the Debian 12 base image is made by
# debootstrap when podman does not have it). image-check builds it and runs it against a private
# MariaDB and the stand-in: delivery, /readyz, the SIGTERM drain (tests/install/check-image.sh).
IMAGE         ?= localhost/room-outbox/outbox-relay:latest
IM_STUB_IMAGE ?= localhost/room-outbox/im-stub:latest

image:
	scripts/image.sh $(IMAGE) $(IM_STUB_IMAGE)

image-check: deps
	tests/install/check-image.sh

# The two images under the tags check-image.sh builds and runs: its own build then takes every
# step from podman's layer cache.
image-check-build: $(DEPS)
	scripts/image.sh localhost/room-outbox/outbox-relay:check localhost/room-outbox/im-stub:check

format:
	find core hook relay sim tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

# --- Hardening: sanitizer builds and fuzzers ---------------------------------------------------
# Each has its own build directory; `make test` above is unchanged.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS   ?= 30
# integration_tests builds every integration test executable (one per label group) and what the
# tests run (tests/sources.cmake).
SANITIZE_TARGETS = unit_tests integration_tests outbox-relay room-sim im-stub \
  room_outbox_hook_dist room_outbox_hook_shared
# The TSan pass runs the unit tests and the tsan-labelled integration tests only: it builds the two
# integration executables that hold them (tests/sources.cmake), not the SQL one. The SQL
# executable's discovered tests then read NOT_BUILT in that tree; they carry no label, so no pass
# selects them.
TSAN_TARGETS = unit_tests integration_tests_tsan integration_tests_no_sql outbox-relay room-sim \
  im-stub room_outbox_hook_dist room_outbox_hook_shared
# A sanitized test runs 2-10x slower; a test that misses one of its deadlines on a loaded machine
# gets another try. A sanitizer report still fails the run (run-sanitized-tests.sh keeps every
# report of every try).
SANITIZE_RETRY = --repeat until-pass:3
CCACHE_FLAG := $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 and line tables: what sanitizers need for exact reports with symbolized stacks, at about
# half the compile time of -O2 -g.
HARDENING_FLAGS = -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"

# Every unit and integration test, real outbox-relay processes included, under ASan + UBSan.
test-sanitize: asan-build
	scripts/run-sanitized-tests.sh $(ASAN_BUILD_DIR) \
	  scripts/run-tests.sh $(ASAN_BUILD_DIR) $(SANITIZE_RETRY)

asan-build: $(DEPS)
	cmake -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE_FLAG) \
	  $(HARDENING_FLAGS) -DROOM_OUTBOX_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS) --target $(SANITIZE_TARGETS)

# The unit tests and the threaded integration tests under ThreadSanitizer: those labelled tsan,
# whose threads matter under TSan: signal handling, metrics server, worker and publisher (curl
# multi + the fake IM server's threads), the hook's sync publish and its background publisher
# thread, the wake listener; the worker's stop signal on the real clock (tests/sources.cmake
# lists their files).
test-tsan: tsan-build
	scripts/run-sanitized-tests.sh $(TSAN_BUILD_DIR) \
	  ctest --test-dir $(TSAN_BUILD_DIR) -L '^unit$$' --output-on-failure --timeout 300 -j 2 \
	  $(SANITIZE_RETRY)
	scripts/run-sanitized-tests.sh $(TSAN_BUILD_DIR) \
	  scripts/run-tests.sh $(TSAN_BUILD_DIR) -L '^tsan$$' $(SANITIZE_RETRY)

tsan-build: $(DEPS)
	cmake -S . -B $(TSAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE_FLAG) \
	  $(HARDENING_FLAGS) -DROOM_OUTBOX_SANITIZE=thread
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target $(TSAN_TARGETS)

# Each libFuzzer target of tests/fuzz for FUZZ_SECONDS (clang, ASan + UBSan), JOBS at a time.
fuzz: fuzz-build
	FUZZ_JOBS=$(JOBS) tests/fuzz/run-fuzzers.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS)

fuzz-build: $(DEPS)
	cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE_FLAG) \
	  $(HARDENING_FLAGS) -DCMAKE_CXX_COMPILER=clang++ -DROOM_OUTBOX_SANITIZE=address,undefined -DROOM_OUTBOX_FUZZ=ON \
	  -DROOM_OUTBOX_WERROR=OFF
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzzers
# --- end hardening ------------------------------------------------------------------------------
