# CodeLoom — make run (build and open the app) and make test are all a newcomer needs.
SHELL := /bin/bash
.DEFAULT_GOAL := run

GO ?= go
BIN := bin/codeloom
# The headless commands alone (no GTK/X11/OpenGL, no GUI start-up): for scripts, servers, CI.
CLI_BIN := bin/codeloom-cli
# ggml (llama.cpp) compiled by cgo without -march uses no AVX and decodes ~10x slower;
# users build on the machine they run on. `make portable` and `make package` build for any x86-64-v2 CPU.
# Keep these identical everywhere: the Go build cache is keyed on them.
export CGO_CFLAGS ?= -O3 -march=native
export CGO_CXXFLAGS ?= -O3 -march=native
export PATH := $(PATH):/usr/local/go/bin

# Debian/Ubuntu packages the build, the tests and the benchmarks need.
APT_PACKAGES := gcc g++ pkg-config git python3 \
	libgl1-mesa-dev xorg-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev \
	libgtk-3-dev xvfb xauth xdotool imagemagick graphviz universal-ctags libpython3.11-stdlib python3-pytest time
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: deps build run test test-unit tidy-check test-e2e bench portable package clean

deps: ## install missing system packages (Debian/Ubuntu); says what to install elsewhere
	@command -v $(GO) >/dev/null || { echo "Go 1.26+ is required (see go.mod): https://go.dev/dl (not found on PATH)"; exit 1; }
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
		echo "Missing system packages. On this system install the equivalents of: $$missing"; \
		echo "(a C compiler, OpenGL + X11 dev headers, GTK3 dev headers, Xvfb, xdotool, ImageMagick, Graphviz, universal-ctags, python3)"; \
		exit 1; \
	fi; \
	echo "Installing: $$missing"; \
	$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing

build: deps ## build bin/codeloom (the app; it also runs the commands) and bin/codeloom-cli (the commands alone)
	$(GO) build -o $(BIN) .
	$(GO) build -o $(CLI_BIN) ./cmd/codeloom-cli

run: build ## build and open the app (DIR=folder, default: the bundled sample project)
	./$(BIN) open $(DIR)

test: deps test-unit test-e2e ## everything that proves the project works

# tests/adversarial drives the real binary: it is given the one `build` made
# instead of building its own inside go test's time limit. Its package took
# 2 min on CI and up to 26 min on 2 cores at load 25 (BENCHMARKS.md, `ci`):
# 50 min per package is about twice that, and keeps make test (the e2e took
# 9 min at that load) within CI's 90 min.
test-unit: tidy-check build
	$(GO) vet ./...
	CODELOOM_ADV_BIN=$(CURDIR)/$(BIN) $(GO) test -timeout 50m ./...

tidy-check: ## go.mod/go.sum are exactly what `go mod tidy` writes (offline, from the module cache)
	@out=$$(GOPROXY=off GOFLAGS=-mod=mod $(GO) mod tidy -diff 2>&1); rc=$$?; \
	if [ $$rc -eq 0 ]; then echo "go.mod is tidy"; \
	elif echo "$$out" | grep -q "GOPROXY=off\|module lookup disabled"; then \
		echo "tidy-check skipped: go mod tidy needs modules not in the local cache (offline)"; \
	else echo "$$out" | head -40; echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; fi

test-e2e: build
	@if [ -x scripts/e2e-gui.sh ]; then scripts/e2e-gui.sh $(BIN); else echo "no GUI end-to-end test yet"; fi

bench: deps build ## benchmarks; figures go to BENCHMARKS.md by hand with the commands printed
	@for s in scripts/bench-*.sh; do [ -x "$$s" ] && { echo "== $$s"; "$$s" || exit 1; }; done; true
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Packages run on any x86-64-v2 CPU (2009+: SSE4.2, POPCNT), not only on CPUs like the builder's.
PORTABLE_FLAGS := -O3 -march=x86-64-v2 -mtune=generic
FYNE_TOOL := fyne.io/tools/cmd/fyne@v1.7.4

portable: deps ## a build that runs on any x86-64-v2 CPU (for packaging)
	CGO_CFLAGS="$(PORTABLE_FLAGS)" CGO_CXXFLAGS="$(PORTABLE_FLAGS)" $(GO) build -o $(BIN)-portable .
	CGO_CFLAGS="$(PORTABLE_FLAGS)" CGO_CXXFLAGS="$(PORTABLE_FLAGS)" $(GO) build -o $(CLI_BIN)-portable ./cmd/codeloom-cli

package: deps ## portable desktop package dist/CodeLoom.tar.xz with AppStream metainfo (needs: go install $(FYNE_TOOL))
	@command -v fyne >/dev/null || { echo "the fyne packaging tool is needed: go install $(FYNE_TOOL)"; exit 1; }
	@appstreamcli validate --no-net packaging/dev.codeloom.app.metainfo.xml >/dev/null 2>&1 || ! command -v appstreamcli >/dev/null || \
		{ appstreamcli validate --no-net packaging/dev.codeloom.app.metainfo.xml; exit 1; }
	@mkdir -p dist
	@# fyne package bumps Build in FyneApp.toml on every run; keep the tracked file as it was.
	@cp FyneApp.toml dist/.FyneApp.toml.keep
	@CGO_CFLAGS="$(PORTABLE_FLAGS)" CGO_CXXFLAGS="$(PORTABLE_FLAGS)" fyne package -os linux -src . -release; rc=$$?; \
		cp dist/.FyneApp.toml.keep FyneApp.toml; rm -f dist/.FyneApp.toml.keep; exit $$rc
	@# Add the AppStream metainfo and bin/codeloom-cli (packaging/finish.sh), and move the package out of the tree.
	@tmp=$$(mktemp -d) && tar -xJf CodeLoom.tar.xz -C "$$tmp" && rm -f CodeLoom.tar.xz && \
		GO="$(GO)" CGO_CFLAGS="$(PORTABLE_FLAGS)" CGO_CXXFLAGS="$(PORTABLE_FLAGS)" packaging/finish.sh "$$tmp" && \
		tar -cJf dist/CodeLoom.tar.xz -C "$$tmp" . && rm -rf "$$tmp"
	@echo "dist/CodeLoom.tar.xz (x86-64-v2; codeloom and codeloom-cli; install: tar -xJf dist/CodeLoom.tar.xz -C / or its Makefile)"

clean:
	rm -rf bin
