# libctxprof, the application-side library (lib/ctxprof/, include/ctxprof.h,
# include/ctxprof_abi.h): the static and the shared library.  Included by the
# top Makefile; its tests and benchmark link $(LIBCTXPROF_A).
#
# One set of objects serves both libraries: -fPIC so the .a links into PIEs
# and shared objects, -fvisibility=hidden so the .so exports only the
# CTXPROF_API functions of include/ctxprof.h.

LIBCTXPROF_SRCS := $(wildcard lib/ctxprof/*.c)
LIBCTXPROF_HDRS := include/ctxprof.h include/ctxprof_abi.h lib/ctxprof/internal.h
LIBCTXPROF_OBJS := $(patsubst lib/ctxprof/%.c,$(OUTPUT)/lib/ctxprof/%.o,$(LIBCTXPROF_SRCS))
LIBCTXPROF_A := $(OUTPUT)/libctxprof.a
LIBCTXPROF_SO := $(OUTPUT)/libctxprof.so
LIBCTXPROF := $(LIBCTXPROF_A) $(LIBCTXPROF_SO)
# the library sees include/ only: it must not depend on the collector's headers
LIBCTXPROF_CFLAGS := $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -fPIC \
	-fvisibility=hidden -MMD -MP $(EXTRA_CFLAGS)

.PHONY: libctxprof
libctxprof: $(LIBCTXPROF)

$(OUTPUT)/lib/ctxprof/%.o: lib/ctxprof/%.c | $(OUTPUT)/lib/ctxprof
	$(call msg,CC,$@)
	$(Q)$(CC) $(LIBCTXPROF_CFLAGS) -c $< -o $@

$(LIBCTXPROF_A): $(LIBCTXPROF_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# nodelete: thread-exit destructors and atfork handlers point into the library
$(LIBCTXPROF_SO): $(LIBCTXPROF_OBJS)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -Wl,-soname,libctxprof.so -Wl,-z,nodelete -Wl,--no-undefined \
		$(ALL_LDFLAGS) $^ -lpthread -o $@

$(OUTPUT)/lib/ctxprof:
	$(Q)mkdir -p $@

-include $(wildcard $(OUTPUT)/lib/ctxprof/*.d)
