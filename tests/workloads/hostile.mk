# Workloads for the hostile-input tests (tests/integration/test_hostile.sh):
# a PIE that execs itself (samples before an exec named from the old image),
# a program that dlopen()s a library whose path is then given to an impostor
# (frames named from the file mapped, not the path).  Sources in
# tests/workloads/hostile/; binaries in $(OUTPUT)/workloads/.

HOSTILE_SRC := tests/workloads/hostile
HOSTILE_OUT := $(OUTPUT)/workloads
HOSTILE_WORKLOADS := $(addprefix $(HOSTILE_OUT)/,exec_switch plant libplant_real.so \
	libplant_fake.so)
HOSTILE_CFLAGS := -g -O1 -fno-inline -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -MMD -MP

all: $(HOSTILE_WORKLOADS)

$(HOSTILE_OUT)/exec_switch $(HOSTILE_OUT)/plant: $(HOSTILE_OUT)/%: $(HOSTILE_SRC)/%.c \
		| $(HOSTILE_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(HOSTILE_CFLAGS) -fPIE -pie $< -ldl -o $@

$(HOSTILE_OUT)/libplant_%.so: $(HOSTILE_SRC)/libplant_%.c | $(HOSTILE_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(HOSTILE_CFLAGS) -fPIC -shared $< -o $@

-include $(wildcard $(HOSTILE_OUT)/*.d)
