# gdnbench — build, run, test.
#
# Sources are found by directory, so adding a file under src/<layer>/ needs no
# edit here.  src/main.c is the binary's entry; tests link every other object.
#
#   make [all] | run | test | check | check-macos | clean | deps | deps-run | install | uninstall
#   (deps: everything the tests need; deps-run: only what running needs, which is
#   what `make run` installs: scripts/install-deps.sh run|test)
#   BUILD=DIR          where objects and binaries go (default build; may be outside the tree)
#   CC=clang-19        any C11 compiler; warnings are errors with gcc and clang alike
#   GDNBENCH_VERSION=V, GDNBENCH_GIT_SHA=S   what --version and the JSON report say
#                      (for packagers; the sha defaults to the checkout's, none without .git)
#   PREFIX=/usr/local, DESTDIR=   where install puts $(PREFIX)/bin/gdnbench and
#                      $(PREFIX)/share/doc/gdnbench/README.md (DESTDIR: a staging root)

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
# -ffp-contract=off: a*b+c is never fused into an fma unless the code says fma().
# Apple clang fuses by default, which would change the bf16-parity references'
# rounding and the --seed inputs on arm64; gcc's -std=c11 already implies off.
STD     := -std=c11 -D_GNU_SOURCE -ffp-contract=off
UNAME_S := $(shell uname -s)

BUILD   ?= build
SAN     ?=
PKG_CONFIG ?= pkg-config

ifeq ($(UNAME_S),Darwin)
  OBJC_CFLAGS :=
  # IOKit and CoreFoundation: the machine state (power source, GPU core count).
  # CoreGraphics: macOS gives MTLCreateSystemDefaultDevice()'s default device only to
  # a process that links it, which a command-line tool must do itself.
  OBJC_LIBS   := -lobjc -framework Metal -framework Foundation -framework IOKit -framework CoreFoundation \
                 -framework CoreGraphics
  OBJC_STAGE  :=
else
  # GNU libobjc's headers sit in gcc's private include directory, which clang does
  # not search.  $(BUILD)/gen/objc-include/objc links to them alone (the rest of
  # gcc's private headers would shadow clang's own).
  OBJC_HEADERS := $(firstword $(wildcard $(shell $(CC) -print-file-name=include 2>/dev/null)/objc) \
                              $(wildcard $(shell gcc -print-file-name=include 2>/dev/null)/objc) \
                              $(wildcard /usr/lib/gcc/*/*/include/objc))
  OBJC_CFLAGS  := -I$(BUILD)/gen/objc-include
  OBJC_LIBS    := -lobjc
  OBJC_STAGE   := $(if $(OBJC_HEADERS),$(BUILD)/gen/objc-include/objc)
endif

# cJSON through pkg-config (Debian's libcjson-dev and Homebrew's cjson both ship
# libcjson.pc; Homebrew's prefix is not on the default search path).
CJSON_PC := $(shell $(PKG_CONFIG) --exists libcjson 2>/dev/null && echo yes)
ifeq ($(CJSON_PC),yes)
  CJSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcjson)
  CJSON_LIBS   := $(shell $(PKG_CONFIG) --libs libcjson)
else
  CJSON_CFLAGS :=
  CJSON_LIBS   := -lcjson
  # run/test/check install pkg-config first and build in a second make.
  ifeq ($(filter run test check check-macos check-arm64 deps deps-run clean,$(MAKECMDGOALS)),)
    $(warning pkg-config does not find libcjson: trying plain -lcjson. Install pkg-config and \
      cJSON (scripts/install-deps.sh does: libcjson-dev on Debian, brew install cjson on macOS))
  endif
endif

CPPFLAGS += -Isrc -I$(BUILD)/gen $(OBJC_CFLAGS) $(CJSON_CFLAGS)
LDLIBS   += $(CJSON_LIBS) $(OBJC_LIBS) -lpthread -lm -ldl
LDFLAGS  += -rdynamic

# tool.version / tool.git_sha (src/core/version.c): the checkout's short sha, none
# in a source archive (no .git here: a sha from an enclosing repository would be a lie).
ifeq ($(origin GDNBENCH_GIT_SHA),undefined)
  GDNBENCH_GIT_SHA := $(if $(wildcard .git),$(shell git rev-parse --short HEAD 2>/dev/null))
endif
VERSION_DEFS := -DGDNBENCH_GIT_SHA='"$(GDNBENCH_GIT_SHA)"' $(if $(GDNBENCH_VERSION),-DGDNBENCH_VERSION='"$(GDNBENCH_VERSION)"')
VERSION_STAMP := $(BUILD)/gen/version-stamp

ifneq ($(SAN),)
  CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif
# LeakSanitizer exists on Linux only: Apple's ASan on arm64 aborts every process
# that asks for detect_leaks=1.
ifeq ($(UNAME_S),Darwin)
  ASAN_LEAKS := detect_leaks=0
else
  ASAN_LEAKS := detect_leaks=1
endif

SRC_ALL  := $(sort $(wildcard src/*/*.c src/*/*/*.c))
SRC_MAIN := src/main.c
OBJ      := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRC_ALL))
# The software Metal device is a library, libswmetal.a, that the binary and the tests
# link; outside src/swmetal only its public header, swmetal/swmetal.h, is included.
# (tests/unit are white-box tests and also include its private headers.)
SW_OBJ   := $(filter $(BUILD)/obj/swmetal/%,$(OBJ))
APP_OBJ  := $(filter-out $(SW_OBJ),$(OBJ))
SWLIB    := $(BUILD)/libswmetal.a
# Every member, referenced or not: the kernels it compiles and dlopens call its
# sw_rt_* and __tsan_* entry points, which nothing in the binary itself calls.
ifeq ($(UNAME_S),Darwin)
  SWLIB_LINK := -Wl,-force_load,$(SWLIB)
else
  SWLIB_LINK := -Wl,--whole-archive $(SWLIB) -Wl,--no-whole-archive
endif
GEN_SRC  := $(BUILD)/gen/embedded.c
GEN_OBJ  := $(BUILD)/obj/gen/embedded.o
EMBED    := $(sort $(wildcard src/swmetal/prelude/*.h shaders/*.metal shaders/*/*.metal) src/swmetal/sw_abi.h)

TEST_SRC := $(sort $(wildcard tests/unit/*.c))
TEST_OBJ := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(TEST_SRC))
# gdnbench-testdata: the fixture writer of the CLI tests (tests/tools/testdata.c).  The
# unit tests link the one part they test (the inverse normal CDF) with the tests.
TOOLS_SRC := $(sort $(wildcard tests/tools/*.c))
TOOLS_OBJ := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(TOOLS_SRC))
TOOLS_UNIT_OBJ := $(BUILD)/obj/tests/tools/normal_quantile.o
# libFuzzer targets: linked by tests/fuzz/run.sh; compiled here only by `objects`.
FUZZ_OBJ := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(sort $(wildcard tests/fuzz/*.c)))

BIN      := $(BUILD)/gdnbench
TESTBIN  := $(BUILD)/gdnbench-tests
TESTDATA := $(BUILD)/gdnbench-testdata

.PHONY: all objects run test check check-macos clean deps deps-run install uninstall FORCE
.DELETE_ON_ERROR:
all: $(BIN) $(TESTBIN) $(TESTDATA) $(SWLIB)

# Every object, nothing linked: what tests/cli/test_macos_cross.sh compiles for macOS.
objects: $(BUILD)/obj/main.o $(OBJ) $(TEST_OBJ) $(TOOLS_OBJ) $(FUZZ_OBJ) $(GEN_OBJ)

deps:
	@bash scripts/install-deps.sh test

deps-run:
	@bash scripts/install-deps.sh run

$(BUILD)/obj/%.o: src/%.c | $(OBJC_STAGE)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/main.o: $(SRC_MAIN) | $(OBJC_STAGE)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c | $(OBJC_STAGE)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -Itests -MMD -MP -c $< -o $@

$(BUILD)/obj/core/version.o: CPPFLAGS += $(VERSION_DEFS)
$(BUILD)/obj/core/version.o: $(VERSION_STAMP)

# Rewritten only when the sha or version changes, so a commit rebuilds version.o alone.
$(VERSION_STAMP): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' "sha=$(GDNBENCH_GIT_SHA) version=$(GDNBENCH_VERSION)" >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

FORCE:

# The software device's front-end cache (src/swmetal/front_cache.c) is keyed by a hash
# of the sources that make a front-end result, so a changed front end never reads an
# entry an older one wrote; rewritten only when they change, like the version stamp.
FRONT_SRC   := $(sort $(wildcard src/msl/*.[ch] src/swmetal/*.[ch]))
FRONT_STAMP := $(BUILD)/gen/front-id-stamp
$(BUILD)/obj/swmetal/front_cache.o: CPPFLAGS += -DSW_FRONT_ID='"$(shell cat $(FRONT_STAMP) 2>/dev/null)"'
$(BUILD)/obj/swmetal/front_cache.o: $(FRONT_STAMP)
$(FRONT_STAMP): STAMP_SRC := $(FRONT_SRC)

# Likewise the IR passes (src/swmetal/ir_pass.h, each pass's file): what they insert
# is part of every instrumented variant's cache key through a hash of their sources,
# so an edited pass never meets an object an older one made, whether or not its
# version was bumped.  A new pass's file goes into this list.
IR_SRC   := $(sort $(wildcard src/swmetal/llir.[ch] src/swmetal/ir_*.[ch]) src/swmetal/count_pass.c)
IR_STAMP := $(BUILD)/gen/ir-id-stamp
$(BUILD)/obj/swmetal/ir_pass.o: CPPFLAGS += -DSW_IR_ID='"$(shell cat $(IR_STAMP) 2>/dev/null)"'
$(BUILD)/obj/swmetal/ir_pass.o: $(IR_STAMP)
$(IR_STAMP): STAMP_SRC := $(IR_SRC)

# A stamp holds a hash of its sources, rewritten only when they change.
$(FRONT_STAMP) $(IR_STAMP): FORCE
	@mkdir -p $(dir $@)
	@cat $(STAMP_SRC) | { command -v sha256sum >/dev/null && sha256sum || shasum -a 256; } | cut -c1-32 >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

ifneq ($(OBJC_STAGE),)
$(OBJC_STAGE):
	@mkdir -p $(dir $@)
	ln -sfn $(OBJC_HEADERS) $@
endif

# Prelude and shaders are embedded so the binary runs from anywhere; a file in
# shaders/ next to the binary still wins at run time (see src/core/embedded.h).
$(GEN_SRC): $(EMBED) scripts/embed.sh
	@mkdir -p $(dir $@)
	bash scripts/embed.sh $@ $(EMBED)

$(GEN_OBJ): $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(SWLIB): $(SW_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/obj/main.o $(APP_OBJ) $(GEN_OBJ) $(SWLIB)
	$(CC) $(LDFLAGS) $(filter-out $(SWLIB),$^) $(SWLIB_LINK) $(LDLIBS) -o $@

$(TESTBIN): $(TEST_OBJ) $(TOOLS_UNIT_OBJ) $(APP_OBJ) $(GEN_OBJ) $(SWLIB)
	$(CC) $(LDFLAGS) $(filter-out $(SWLIB),$^) $(SWLIB_LINK) $(LDLIBS) -o $@

$(TESTDATA): $(TOOLS_OBJ)
	$(CC) $(LDFLAGS) $^ $(CJSON_LIBS) -lm -o $@

# Only the binary: the test binaries are make test's.
run: deps-run
	@$(MAKE) --no-print-directory $(BIN)
	$(BIN) kkt --T 4096

test: deps
	@$(MAKE) --no-print-directory all
	@bash tests/run.sh $(BUILD)

check: deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 all
ifeq ($(UNAME_S),Darwin)
	@echo "check: no leak checks on macOS (LeakSanitizer is Linux-only); the Linux CI job runs them"
endif
	@ASAN_OPTIONS=$(ASAN_LEAKS):handle_segv=0:allow_user_segv_handler=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 bash tests/run.sh build-san

# Every .c of src/ and tests/ and the software device's kernel C++ compiled for
# arm64 macOS against Zig's macOS SDK headers (Linux only; part of make test too).
check-macos: deps
	@$(MAKE) --no-print-directory all
	@GDNBENCH=$(abspath $(BIN)) GDNBENCH_ROOT=$(CURDIR) bash tests/cli/test_macos_cross.sh

clean:
	rm -rf $(BUILD) build-san

# The binary carries its shaders and the MSL prelude (embedded.c), so it is the one
# file installed besides its documentation.  DESTDIR stages a package's root.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DOCDIR  ?= $(PREFIX)/share/doc/gdnbench
INSTALL ?= install

install: $(BIN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(BIN) $(DESTDIR)$(BINDIR)/gdnbench
	$(INSTALL) -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md

# Removes what install put there and the documentation directory once empty; other
# directories under PREFIX are not ours to remove.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gdnbench $(DESTDIR)$(DOCDIR)/README.md
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

-include $(OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TOOLS_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(BUILD)/obj/main.d

# The arm64 code paths on an x86-64 Linux host: gdnbench-tests cross-built for
# aarch64 Linux into build/arm64 and run under qemu-user (make test runs the same
# script with the other CLI tests).
.PHONY: check-arm64
check-arm64: deps
	@$(MAKE) --no-print-directory all
	@GDNBENCH=$(abspath $(BIN)) GDNBENCH_ROOT=$(CURDIR) bash tests/cli/test_arm64_qemu.sh
