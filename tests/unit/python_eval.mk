# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# test_python_eval's program, built twice from one object: with its symbol
# table (eval.cold named: the test's answer) and stripped (what the
# collector meets).  -O2: GCC partitions eval into hot and cold parts.
PY_EVAL_FIXTURE := $(ELF_FIXTURE_DIR)/python_eval_fixture
UNIT_EXTRA += $(PY_EVAL_FIXTURE) $(PY_EVAL_FIXTURE).stripped
$(OUTPUT)/tests/test_python_eval: $(PY_EVAL_FIXTURE) $(PY_EVAL_FIXTURE).stripped

$(PY_EVAL_FIXTURE): tests/unit/fixtures/python_eval_fixture.c | $(ELF_FIXTURE_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 -fno-omit-frame-pointer -std=gnu11 -Wall -Werror $(ELF_FIXTURE_LDFLAGS) $< -o $@

$(PY_EVAL_FIXTURE).stripped: $(PY_EVAL_FIXTURE)
	$(call msg,FIXTURE,$@)
	$(Q)$(STRIP) -o $@ $<
