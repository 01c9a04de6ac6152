# perfconv — GNU make build.  CFLAGS/LDFLAGS are the user's; project flags live in ALL_CFLAGS.
PREFIX ?= /usr/local
bindir ?= $(PREFIX)/bin
mandir ?= $(PREFIX)/share/man
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
PKGS := libelf libdw libzstd zlib json-c minizip libtraceevent liblzma
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

ALL_CFLAGS = -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -I. $(PKG_CFLAGS) $(DEVELOPER_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(LDFLAGS)
LIBS = $(PKG_LIBS) -liberty -lm

ifeq ($(DEVELOPER),1)
DEVELOPER_CFLAGS = -Werror
endif

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '  CC      '$@;
QUIET_LINK = @echo '  LINK    '$@;
endif

BUILD ?= build
LIB_SRCS := $(wildcard converter/*.c) $(wildcard formats/*.c)
CLI_SRCS := $(wildcard cli/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

all: perfconv

perfconv: $(BUILD)/perfconv
	$(Q)cp $< $@

$(BUILD)/perfconv: $(LIB_OBJS) $(CLI_OBJS)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

unit: $(UNIT_BINS)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)

clean:
	rm -rf $(BUILD) build-asan perfconv

.PHONY: all clean unit
