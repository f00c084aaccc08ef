# Go fixtures for test_go_binary (test_gopclntab's are go_fixtures.mk's):
# real Go programs, built here with the installed toolchain (offline:
# GOCACHE under $(OUTPUT), no modules), and what the test expects of them,
# derived from that toolchain's DWARF and objdump by
# golabels_fixture_expect.py (not from the collector's table):
#   golabels_fixture               the Go linker alone (no PT_TLS), DWARF uncompressed
#   golabels_fixture_stripped      the same, -ldflags='-s -w'
#   golabels_fixture_cgo           cgo with TLS variables of its own (external link)
#   golabels_fixture_cgo_stripped  the same, stripped: g's place unknown

GOLABELS_FIXTURE_DIR := $(OUTPUT)/fixtures/golabels
GOLABELS_FIXTURES := $(addprefix $(GOLABELS_FIXTURE_DIR)/,golabels_fixture \
	golabels_fixture_stripped golabels_fixture_cgo golabels_fixture_cgo_stripped)
GOLABELS_SRC := tests/unit/fixtures/golabels_fixture/main.go
GOLABELS_CGO_SRC := tests/unit/fixtures/golabels_fixture_cgo/main.go
GOLABELS_FIXTURE_ENV := GO111MODULE=off GOFLAGS= GOPATH=$(abspath $(OUTPUT))/gopath \
	GOCACHE=$(abspath $(OUTPUT))/gocache
GOLABELS_FIXTURE_EXPECT := $(OUTPUT)/tests/golabels_fixture_expect.h

UNIT_EXTRA += $(GOLABELS_FIXTURES)
$(OUTPUT)/tests/test_go_binary: $(GOLABELS_FIXTURES) $(GOLABELS_FIXTURE_EXPECT)

$(GOLABELS_FIXTURE_DIR)/golabels_fixture: $(GOLABELS_SRC) | $(GOLABELS_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GOLABELS_FIXTURE_ENV) CGO_ENABLED=0 $(GO) build -ldflags=-compressdwarf=false \
		-o $@ $<

$(GOLABELS_FIXTURE_DIR)/golabels_fixture_stripped: $(GOLABELS_SRC) | $(GOLABELS_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GOLABELS_FIXTURE_ENV) CGO_ENABLED=0 $(GO) build -ldflags='-s -w' -o $@ $<

$(GOLABELS_FIXTURE_DIR)/golabels_fixture_cgo: $(GOLABELS_CGO_SRC) | $(GOLABELS_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GOLABELS_FIXTURE_ENV) CGO_ENABLED=1 $(GO) build -o $@ $<

$(GOLABELS_FIXTURE_DIR)/golabels_fixture_cgo_stripped: $(GOLABELS_CGO_SRC) \
		| $(GOLABELS_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GOLABELS_FIXTURE_ENV) CGO_ENABLED=1 $(GO) build -ldflags='-s -w' -o $@ $<

$(GOLABELS_FIXTURE_EXPECT): tests/unit/golabels_fixture_expect.py $(GOLABELS_FIXTURES) \
		| $(OUTPUT)/tests
	$(call msg,GEN,$@)
	$(Q)$(GOLABELS_FIXTURE_ENV) tests/unit/golabels_fixture_expect.py $(GO) \
		$(GOLABELS_FIXTURE_DIR)/golabels_fixture \
		plain=$(GOLABELS_FIXTURE_DIR)/golabels_fixture \
		cgo=$(GOLABELS_FIXTURE_DIR)/golabels_fixture_cgo > $@.tmp
	$(Q)mv $@.tmp $@

$(GOLABELS_FIXTURE_DIR):
	$(Q)mkdir -p $@
