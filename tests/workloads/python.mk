# CPython 3.11 workloads (tests/integration/test_python.sh, bench/python.sh):
# the scripts in tests/workloads/python/ run as they are, with Debian's
# /usr/bin/python3; the C parts are built here against Debian's python3-dev
# (/usr/bin/python3-config, never the python3-config first on PATH, which
# may be another install's, e.g. pyenv's):
#   embed          a program embedding libpython3.11.so (--embed)
#   python/corrupt.so  an extension module that damages its caller's frame
#                  (3.11 internals: Py_BUILD_CORE, internal/pycore_frame.h)
# Binaries in $(OUTPUT)/workloads/ and $(OUTPUT)/workloads/python/; built
# by `all` only where python3-dev is installed (make deps installs it).

PYTHON3_CONFIG ?= /usr/bin/python3-config
PY_SRC := tests/workloads/python
PY_OUT := $(OUTPUT)/workloads/python
PY_WORKLOADS := $(OUTPUT)/workloads/embed $(PY_OUT)/corrupt.so
PY_CFLAGS := -g -O1 -fno-omit-frame-pointer -fno-inline -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-Werror -Wno-unused-parameter -MMD -MP

ifneq ($(wildcard $(PYTHON3_CONFIG)),)
all: $(PY_WORKLOADS)
endif

# python3-config's flags first: its -O2 gives way to ours
$(OUTPUT)/workloads/embed: $(PY_SRC)/embed.c | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $$($(PYTHON3_CONFIG) --embed --cflags) $(PY_CFLAGS) $< \
		$$($(PYTHON3_CONFIG) --embed --ldflags) -o $@

$(PY_OUT)/corrupt.so: $(PY_SRC)/corrupt.c | $(PY_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $$($(PYTHON3_CONFIG) --includes) $(PY_CFLAGS) -fPIC -shared $< -o $@

$(PY_OUT):
	$(Q)mkdir -p $@

-include $(wildcard $(PY_OUT)/*.d)
