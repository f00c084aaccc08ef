# Thread registry and lifecycle: the registry stress test (TSan and
# ASan+UBSan, built from the sources, not libcollector.a) and the lifecycle
# integration driver.
# Variables here are REGISTRY_*: tests/unit/stress.mk owns the STRESS_* ones.

REGISTRY_LIBS := -lurcu-memb -lurcu-common

REGISTRY_STRESS_SRCS := tests/unit/stress_thread_registry.c user/processes/thread_registry.c
REGISTRY_STRESS_DEPS := $(REGISTRY_STRESS_SRCS) user/processes/thread_registry.h tests/unit/registry.mk
REGISTRY_STRESS_CFLAGS := -g -O1 $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser \
	$(EXTRA_CFLAGS)
REGISTRY_STRESS := $(OUTPUT)/tests/stress_thread_registry_tsan \
	$(OUTPUT)/tests/stress_thread_registry_asan
REGISTRY_TSAN_SUPP := $(OUTPUT)/tests/tsan_suppressions.h
LIFECYCLE_DRIVER := $(OUTPUT)/tests/lifecycle_driver

STRESS_BINS += $(REGISTRY_STRESS)
UNIT_EXTRA += $(REGISTRY_STRESS) $(LIFECYCLE_DRIVER)

# tests/unit/tsan.supp compiled into the binary (__tsan_default_suppressions):
# tests/run.sh runs it without any TSAN_OPTIONS
$(REGISTRY_TSAN_SUPP): tests/unit/tsan.supp tests/unit/registry.mk | $(OUTPUT)/tests
	$(call msg,GEN,$@)
	$(Q){ printf '#define TSAN_SUPPRESSIONS \\\n'; \
		sed -e '/^#/d' -e '/^[[:space:]]*$$/d' -e 's/.*/\t"&\\n" \\/' $<; \
		printf '\t""\n'; } > $@

# liburcu itself is not instrumented: see tests/unit/tsan.supp for the one
# suppression its internals need, and user/processes/thread_registry.c for how our code
# tells TSan about grace periods
$(OUTPUT)/tests/stress_thread_registry_tsan: $(REGISTRY_STRESS_DEPS) $(REGISTRY_TSAN_SUPP) \
		| $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(CLANG) $(REGISTRY_STRESS_CFLAGS) -fsanitize=thread -I$(OUTPUT)/tests \
		-DTSAN_SUPPRESSIONS_H='"tsan_suppressions.h"' $(REGISTRY_STRESS_SRCS) \
		$(REGISTRY_LIBS) -lpthread -o $@

# use after free of a reclaimed entry, and leaks at the end; UBSan must fail
# the run, not print and carry on
$(OUTPUT)/tests/stress_thread_registry_asan: $(REGISTRY_STRESS_DEPS) | $(OUTPUT)/tests
	$(call msg,STRESS,$@)
	$(Q)$(CLANG) $(REGISTRY_STRESS_CFLAGS) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer $(REGISTRY_STRESS_SRCS) \
		$(REGISTRY_LIBS) -lpthread -o $@

# run by tests/integration/test_lifecycle.sh (root: it loads BPF)
$(LIFECYCLE_DRIVER): tests/integration/lifecycle_driver.c $(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,DRIVER,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIBCOLLECTOR) $(ALL_LDFLAGS) $(LIBS) -o $@

integration: $(LIFECYCLE_DRIVER)
