# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Go fixtures for test_gopclntab: one small program (tests/unit/fixtures/
# go_fixture.go) built by Debian's go (golang-go, make deps) three ways:
#   go_fixture          as go build makes it: .symtab, DWARF (.debug_frame)
#   go_fixture_stripped -ldflags='-s -w': neither, only .gopclntab
#   go_fixture_pie      -buildmode=pie, stripped (the table in .data.rel.ro.gopclntab)
#   go_fixture_extpie   the same linked by gcc (-linkmode=external, cgo): the
#                       table merged into .data.rel.ro, .eh_frame for the C parts
# Static (CGO_ENABLED=0) but the last, offline, the build cache under $(OUTPUT).

GO_FIXTURE_DIR := $(OUTPUT)/fixtures/go
GO_FIXTURES := $(addprefix $(GO_FIXTURE_DIR)/,go_fixture go_fixture_stripped go_fixture_pie \
	go_fixture_extpie)
GO_FIXTURE_SRC := tests/unit/fixtures/go_fixture.go
GO_FIXTURE_ENV := GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOCACHE=$(abspath $(OUTPUT))/gocache \
	GOPATH=$(abspath $(OUTPUT))/gopath

UNIT_EXTRA += $(GO_FIXTURES)
$(OUTPUT)/tests/test_gopclntab: $(GO_FIXTURES)

$(GO_FIXTURE_DIR)/go_fixture: $(GO_FIXTURE_SRC) | $(GO_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GO_FIXTURE_ENV) $(GO) build -o $@ $<

$(GO_FIXTURE_DIR)/go_fixture_stripped: $(GO_FIXTURE_SRC) | $(GO_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GO_FIXTURE_ENV) $(GO) build -ldflags='-s -w' -o $@ $<

$(GO_FIXTURE_DIR)/go_fixture_pie: $(GO_FIXTURE_SRC) | $(GO_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GO_FIXTURE_ENV) $(GO) build -buildmode=pie -ldflags='-s -w' -o $@ $<

$(GO_FIXTURE_DIR)/go_fixture_extpie: $(GO_FIXTURE_SRC) | $(GO_FIXTURE_DIR)
	$(call msg,GO,$@)
	$(Q)$(GO_FIXTURE_ENV) CGO_ENABLED=1 $(GO) build -buildmode=pie \
		-ldflags='-linkmode=external -s -w' -o $@ $<

$(GO_FIXTURE_DIR):
	$(Q)mkdir -p $@
