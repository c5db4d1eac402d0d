# Thin wrapper over CMake/CTest. `make test` is the README's test command and what CI runs.
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
DESTDIR    ?=
JOBS       ?= $(shell nproc)

.PHONY: all deps configure build test unit-test integration-test demo bench install format clean

all: build

deps:
	scripts/deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# deps + build + a private MariaDB + every unit and integration test.
test: deps
	$(MAKE) build
	scripts/run-tests.sh $(BUILD_DIR)

unit-test: build
	ctest --test-dir $(BUILD_DIR) -L unit --output-on-failure -j $(JOBS)

integration-test: build
	scripts/run-tests.sh $(BUILD_DIR) -L integration

# A local demo: private MariaDB, a local stand-in for Tencent IM, room-sim and outbox-relay.
demo: deps
	$(MAKE) build
	scripts/demo.sh $(BUILD_DIR)

bench: deps
	$(MAKE) build
	scripts/bench.sh $(BUILD_DIR)

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD_DIR) --prefix $(PREFIX)

format:
	find hook relay sim tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
