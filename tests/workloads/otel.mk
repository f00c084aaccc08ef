# OpenTelemetry-instrumented workloads (tests/integration/test_otel*.sh): a
# publisher of OTEP 4719/4947 written from the OTEP texts (otel_sdk.c), in
# a fake service and a hostile program, built two ways:
#   otel_service      otel_thread_ctx_v1 in the executable's TLS (exported
#                     with --export-dynamic-symbol; the linker relaxes the
#                     accesses to local-exec)
#   otel_service_lib  in libotel_sdk.so, built with -mtls-dialect=gnu2
#                     (TLSDESC; arm64's only dynamic dialect is desc), linked at start
# Sources in tests/workloads/otel/; binaries in $(OUTPUT)/workloads/.

OTEL_SRC := tests/workloads/otel
OTEL_OUT := $(OUTPUT)/workloads
OTEL_WORKLOADS := $(addprefix $(OTEL_OUT)/,otel_service otel_service_lib libotel_sdk.so \
	otel_hostile)
OTEL_CFLAGS := -g -O1 -fno-omit-frame-pointer -fno-inline -std=gnu11 -D_GNU_SOURCE -Wall \
	-Wextra -Werror -Wno-unused-parameter -MMD -MP \
	-mtls-dialect=$(if $(filter arm64,$(ARCH)),desc,gnu2)

all: $(OTEL_WORKLOADS)

$(OTEL_OUT)/otel_service $(OTEL_OUT)/otel_hostile: $(OTEL_OUT)/%: $(OTEL_SRC)/%.c \
		$(OTEL_SRC)/otel_sdk.c | $(OTEL_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(OTEL_CFLAGS) -fPIE -pie $^ -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 \
		-lpthread -o $@

$(OTEL_OUT)/libotel_sdk.so: $(OTEL_SRC)/otel_sdk.c | $(OTEL_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(OTEL_CFLAGS) -fPIC -shared $< -o $@

$(OTEL_OUT)/otel_service_lib: $(OTEL_SRC)/otel_service.c $(OTEL_OUT)/libotel_sdk.so | $(OTEL_OUT)
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(OTEL_CFLAGS) -fPIE -pie $< -L$(OTEL_OUT) -lotel_sdk -Wl,-rpath,'$$ORIGIN' \
		-lpthread -o $@

-include $(wildcard $(OTEL_OUT)/*.d)
