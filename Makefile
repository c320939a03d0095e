# gdnbench — build, run, test.
#
# Sources are found by directory, so adding a file under src/<layer>/ needs no
# edit here.  src/main.c is the binary's entry; tests link every other object.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
STD     := -std=c11 -D_GNU_SOURCE
UNAME_S := $(shell uname -s)

BUILD   ?= build
SAN     ?=

ifeq ($(UNAME_S),Darwin)
  OBJC_CFLAGS :=
  OBJC_LIBS   := -lobjc -framework Metal -framework Foundation
else

  OBJC_CFLAGS :=
  OBJC_LIBS   := -lobjc
endif

CPPFLAGS += -Isrc -I$(BUILD)/gen $(OBJC_CFLAGS)
# tool.git_sha in the JSON report (src/core/version.h); empty outside a git checkout.
GIT_SHA  := $(shell git rev-parse --short HEAD 2>/dev/null)
CPPFLAGS += -DGDNBENCH_GIT_SHA='"$(GIT_SHA)"'
# A stamp that changes with the sha, so the report writer is rebuilt after a commit.
GIT_SHA_STAMP := $(shell mkdir -p $(BUILD)/gen && f=$(BUILD)/gen/git-sha && \
  { [ "$$(cat $$f 2>/dev/null)" = "$(GIT_SHA)" ] || echo "$(GIT_SHA)" > $$f; } && echo $$f)
LDLIBS   += -lcjson $(OBJC_LIBS) -lpthread -lm -ldl
LDFLAGS  += -rdynamic

ifneq ($(SAN),)
  CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif

SRC_ALL  := $(sort $(wildcard src/*/*.c src/*/*/*.c))
SRC_MAIN := src/main.c
OBJ      := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRC_ALL))
GEN_SRC  := $(BUILD)/gen/embedded.c
GEN_OBJ  := $(BUILD)/obj/gen/embedded.o
EMBED    := $(sort $(wildcard src/swmetal/prelude/*.h shaders/*.metal shaders/*/*.metal) src/swmetal/sw_abi.h)

TEST_SRC := $(sort $(wildcard tests/unit/*.c))
TEST_OBJ := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(TEST_SRC))

BIN      := $(BUILD)/gdnbench
TESTBIN  := $(BUILD)/gdnbench-tests

.PHONY: all run test check clean deps
all: $(BIN) $(TESTBIN)

deps:
	@bash scripts/install-deps.sh

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/io/report_json.o: $(GIT_SHA_STAMP)

$(BUILD)/obj/main.o: $(SRC_MAIN)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) -Itests -MMD -MP -c $< -o $@

# Prelude and shaders are embedded so the binary runs from anywhere; a file in
# shaders/ next to the binary still wins at run time (see src/core/embedded.h).
$(GEN_SRC): $(EMBED) scripts/embed.sh
	@mkdir -p $(dir $@)
	bash scripts/embed.sh $@ $(EMBED)

$(GEN_OBJ): $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BIN): $(BUILD)/obj/main.o $(OBJ) $(GEN_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(TESTBIN): $(TEST_OBJ) $(OBJ) $(GEN_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) kkt --T 4096

test: deps
	@$(MAKE) --no-print-directory all
	@bash tests/run.sh $(BUILD)

check: deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 all
	@ASAN_OPTIONS=detect_leaks=1:handle_segv=0:allow_user_segv_handler=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 bash tests/run.sh build-san

clean:
	rm -rf build build-san

-include $(OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/obj/main.d

# The arm64 code paths on an x86-64 Linux host: gdnbench-tests cross-built for
# aarch64 Linux into build/arm64 and run under qemu-user (make test runs the same
# script with the other CLI tests).
.PHONY: check-arm64
check-arm64: deps
	@$(MAKE) --no-print-directory all
	@GDNBENCH=$(abspath $(BIN)) GDNBENCH_ROOT=$(CURDIR) bash tests/cli/test_arm64_qemu.sh
