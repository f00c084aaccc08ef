# OpenTelemetry context readers: tests that link our OTEP publisher
# (tests/workloads/otel/otel_sdk.c) or run the fixture that carries its
# library (test_otel_tls: otel_thread_ctx_v1 located in the executable,
# in a library linked at start, in a dlopen()ed one in dynamic TLS).

OTEL_SDK_SRC := tests/workloads/otel/otel_sdk.c
OTEL_TLS_FIXTURE := $(OUTPUT)/tests/otel_tls_fixture

UNIT_EXTRA += $(OTEL_TLS_FIXTURE) $(OUTPUT)/workloads/libotel_sdk.so

$(OUTPUT)/tests/test_otel_process_ctx: tests/unit/test_otel_process_ctx.c $(OTEL_SDK_SRC) \
		$(UNIT_FIXTURES) $(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/workloads/otel $< $(OTEL_SDK_SRC) $(UNIT_FIXTURES) \
		$(LIBCOLLECTOR) $(ALL_LDFLAGS) $(LIBS) -lcmocka -o $@

# the test binary defines and exports the variable itself (the executable's case)
$(OUTPUT)/tests/test_otel_tls: tests/unit/test_otel_tls.c $(UNIT_FIXTURES) $(LIBCOLLECTOR) \
		| $(OUTPUT)/tests $(OTEL_TLS_FIXTURE) $(OUTPUT)/workloads/libotel_sdk.so
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(UNIT_FIXTURES) $(LIBCOLLECTOR) $(ALL_LDFLAGS) $(LIBS) \
		-Wl,--export-dynamic-symbol=otel_thread_ctx_v1 -ldl -lcmocka -o $@

$(OTEL_TLS_FIXTURE): tests/unit/fixtures/otel_tls_fixture.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Werror $< -ldl -o $@
