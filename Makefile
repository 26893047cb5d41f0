# Cuvil's tasks. `make demo` and `make test` are the two you need (README.md).

GO      ?= go
CUVIL   := bin/cuvil
SHARED  ?= $(abspath ../shared)
ONNX_NODE_TESTS := $(SHARED)/onnx-tests/node
ONNX_NODE_TESTS_122 := $(SHARED)/onnx-tests-1.22/node
MODELS  := $(SHARED)/models
# Node tests known to fail today (missing ops, sequences...); conformance
# fails on any other failure, and says when a listed test starts passing.
XFAIL   := testdata/conformance/node_xfail.txt
# Node tests that cannot pass by their nature (expected outputs from numpy's
# RNG...), each with its reason: reported as skipped.
SKIP    := testdata/conformance/node_skip.txt
FUZZTIME ?= 10s

.PHONY: all build demo test vet unit arm64 cross lite fuzz conformance generate check bench bench-breadth check-breadth truth64 clean

all: build

build:
	$(GO) build -o $(CUVIL) ./cmd/cuvil

# Compile testdata/digits (a small CNN trained by tools/train_digits.py) into
# examples/digits/digits, build and run the app: predicted and true digits,
# accuracy on the held-back images, and agreement with ONNX Runtime when
# its runner (../shared/tools/ort) is installed in ORT_DIR.
ORT_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cuvil-ort
demo: build
	cd examples/digits && $(GO) generate ./...
	$(GO) build -o bin/digits ./examples/digits
	@if [ -x $(ORT_BENCH) ] && [ -d $(ORT_DIR)/node_modules/onnxruntime-node ] && command -v node >/dev/null; then \
		ORT_DIR=$(ORT_DIR) $(ORT_BENCH) testdata/digits/model.onnx 1 0 --quiet --inputs testdata/digits/test_data_set_0 --outdir bin/digits-ort >/dev/null && \
		./bin/digits -ort bin/digits-ort; \
	else echo "demo: ONNX Runtime not found ($(ORT_DIR), $(ORT_BENCH)); comparison skipped"; ./bin/digits; fi

test: vet unit arm64 cross lite fuzz conformance

# templates/capi (the -cshared C API, cgo) is vetted where a C compiler is.
vet:
	$(GO) vet ./...
	@if command -v gcc >/dev/null; then echo "CGO_ENABLED=1 $(GO) vet -tags cuvil_capi ./templates/capi/"; \
		CGO_ENABLED=1 $(GO) vet -tags cuvil_capi ./templates/capi/; \
	else echo "vet: no gcc; templates/capi (cgo) not vetted"; fi

unit:
	$(GO) test -timeout 30m ./...

# arm64: a generated package and templates/ must build and vet for
# linux, darwin and windows on arm64; under qemu-aarch64-static (Debian:
# qemu-user-static, which .ci/run installs) a small subset of the templates
# tests (the NEON kernels, dispatch, the GEMM, NHWC conv, conv chain and
# pooling paths that reach them) and a generated package's tests run for GOARCH=arm64, with the
# NEON kernels and with purego. Skipped with a message without qemu.
QEMU_ARM64 ?= $(shell command -v qemu-aarch64-static || command -v qemu-aarch64)
ARM64_TESTS := ^(Test.*NEON|TestActivationRows.*|TestActivationKernelsWiring|TestFma32SingleRounding|TestElemNoAllocs|TestWinogradNHWCNEONExact|TestWinogradNHWCTransforms|TestFusedConvWinogradNHWC|TestFusedConvChain|TestCPUDispatchARM64|TestCPUParseAuxv|TestNHWCTaps|TestNHWCGrpTaps|TestFusedConvNHWCGrouped|TestNHWCBiasClamp|TestNHWCPWGemmCols|TestSgemm|TestSgemmSmallM|TestSgemmPackedDegenerate|TestGemm|TestGemmPrepackedB|TestConv|TestConvPrepacked|TestConvDW3x3|TestPoolNHWC|TestMaxPool)$$
arm64:
	@for os in linux darwin windows; do echo "GOOS=$$os GOARCH=arm64 $(GO) vet ./templates/ ./examples/mnist/mnist"; \
		GOOS=$$os GOARCH=arm64 $(GO) vet ./templates/ ./examples/mnist/mnist || exit 1; done
	@if [ -n "$(QEMU_ARM64)" ]; then for tags in "" purego; do \
		echo "GOARCH=arm64 $(GO) test -tags '$$tags' -exec $(QEMU_ARM64) -run '$(ARM64_TESTS)|^TestRun$$' ./templates/ ./examples/mnist/mnist"; \
		GOARCH=arm64 $(GO) test -tags "$$tags" -exec $(QEMU_ARM64) -run '$(ARM64_TESTS)|^TestRun$$' ./templates/ ./examples/mnist/mnist || exit 1; done; \
	else echo "arm64: qemu-aarch64-static not found (apt-get install qemu-user-static); arm64 tests under emulation skipped"; fi

# cross: the mnist package's generated tests, and cuvil check against its
# reference outputs (through the harness Target, as -goarch does), for
# GOARCH=arm GOARM=7, s390x (big-endian) and riscv64 under qemu-user and
# GOOS=wasip1 GOARCH=wasm under Node.js's WASI (TestCross); a target whose
# emulator is missing is skipped with a message (docs/lite.md). CROSS_ALL=1
# adds arm GOARM=6, ppc64le, ppc64 (big-endian) and loong64.
CROSS_ALL ?=
cross:
	CUVIL_CROSS_ALL=$(CROSS_ALL) $(GO) test -count=1 -run '^TestCross$$' -v .

# lite: the -profile lite tests (refusals, imports, the lite mnist under
# qemu-arm: reference outputs, no heap growth, arena = plan) and
# examples/lite (the keyword-spotting DS-CNN) with its generated package's
# tests for GOARCH=arm GOARM=7 under qemu-arm (docs/lite.md).
QEMU_ARM ?= $(shell command -v qemu-arm-static || command -v qemu-arm)
lite:
	$(GO) test -count=1 -run '^TestLite' -v .
	$(GO) test -count=1 -v ./examples/lite/...
	@if [ -n "$(QEMU_ARM)" ]; then echo "GOARCH=arm GOARM=7 $(GO) test -exec $(QEMU_ARM) ./examples/lite/..."; \
		GOARCH=arm GOARM=7 $(GO) test -count=1 -exec $(QEMU_ARM) ./examples/lite/...; \
	else echo "lite: qemu-arm-static not found (apt-get install qemu-user-static); GOARCH=arm tests skipped"; fi

# Each fuzz target runs briefly; crashers land in testdata/fuzz/ as
# regression seeds, which go test then always runs.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./ir/onnx
	$(GO) test -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzGuard$$' -fuzztime $(FUZZTIME) ./examples/mnist/mnist
	$(GO) test -run '^$$' -fuzz '^FuzzCAPI$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzReadTensor$$' -fuzztime $(FUZZTIME) ./templates

# The four ONNX backend suites of ONNX 1.12 (opsets to 17) and of ONNX 1.22
# (opsets to 27) in one run (one go build; a 1.22 test whose folder is
# byte-identical to a 1.12 one is judged from it, not built again); the
# report is docs/conformance.md. List entries are test names (every suite)
# or SUITE/test_x, e.g. onnx-tests-1.22/node/test_x (that suite only).
ONNX_KINDS  := node simple pytorch-converted pytorch-operator
ONNX_SUITES := $(addprefix $(SHARED)/onnx-tests/,$(ONNX_KINDS)) \
	$(if $(wildcard $(ONNX_NODE_TESTS_122)),$(addprefix $(SHARED)/onnx-tests-1.22/,$(ONNX_KINDS)))

conformance: build
	@if [ -d "$(ONNX_NODE_TESTS)" ]; then \
		echo "$(CUVIL) conformance -xfail $(XFAIL) -skip $(SKIP) -report docs/conformance.md $(ONNX_SUITES)"; \
		$(CUVIL) conformance -xfail $(XFAIL) -skip $(SKIP) -report docs/conformance.md $(ONNX_SUITES); \
	else echo "conformance: $(ONNX_NODE_TESTS) not found (no ../shared); skipped"; fi

# Regenerate every generated file: go generate in each folder with a
# //go:generate line, in path order (asmgen writes templates/ before
# examples/ copy from it; generated packages, which go generate would visit
# while they are being replaced, have none). ir/onnx's protobuf code needs
# protoc and protoc-gen-go, so it is regenerated only where they exist.
GENERATE_DIRS = $(shell grep -rl --include='*.go' '^//go:generate' . | xargs -n1 dirname | sort -u | grep -v '^./ir/onnx$$')

generate:
	@for d in $(GENERATE_DIRS); do echo "go generate $$d"; (cd $$d && $(GO) generate) || exit 1; done
	@if command -v protoc >/dev/null && command -v protoc-gen-go >/dev/null; then \
		$(GO) generate ./ir/onnx; \
	else echo "generate: protoc or protoc-gen-go not found; ir/onnx's generated code left as committed"; fi

# Fails when the committed generated files are not what `make generate`
# produces.
check: generate
	git diff --exit-code
	@test -z "$$(git status --porcelain --untracked-files=all -- examples testdata)" || \
		{ git status --porcelain --untracked-files=all -- examples testdata; echo "check: make generate left untracked files"; exit 1; }

# Cuvil and ONNX Runtime (../shared/tools/ort) side by side in one run, per
# model and thread count, with the cuvil/ORT ratio of medians. ORT is
# skipped (ratio "-") where its runner is missing. BENCH_THREADS and
# BENCH_RUNS override the defaults.
ORT_BENCH     := $(SHARED)/tools/ort/bench.sh
RESNET50      ?= $(HOME)/.cache/cuvil-models/resnet50_op13/model.onnx
BENCH_THREADS ?= 1 2
BENCH_RUNS    ?= 20
BENCH_TRUTH   ?= 0
bench: build
	@printf '%-22s %-7s %12s %12s %8s\n' model threads cuvil_ms ort_ms ratio; \
	for spec in mnist_cnn_op13 lstm_small_op13 squeezenet1_1_op13 mobilenet_v2_op13 bert_dynseq_op13:seq=128 resnet50; do \
		name=$${spec%%:*}; dim=; case $$spec in *:*) dim=$${spec#*:};; esac; \
		model=$(MODELS)/$$name/model.onnx; [ $$name = resnet50 ] && model=$(RESNET50); \
		[ -f $$model ] || { echo "$$name: $$model missing, skipped"; continue; }; \
		runs=$(BENCH_RUNS); [ $$name = resnet50 ] && runs=$$(( $(BENCH_RUNS) / 2 )); \
		for t in $(BENCH_THREADS); do \
			c=$$($(CUVIL) bench -model $$model -threads $$t -runs $$runs $${dim:+-dim $$dim} | awk '{for(i=1;i<NF;i++) if($$i=="median") print $$(i+1)}'); \
			o=-; [ -x $(ORT_BENCH) ] && o=$$($(ORT_BENCH) $$model $$t $$runs $${dim:+--dim $$dim} 2>/dev/null | awk '$$1=="median"{print $$2}'); \
			r=$$(awk -v c="$$c" -v o="$$o" 'BEGIN{ if (o+0 > 0 && c+0 > 0) printf "%.2f", c/o; else print "-" }'); \
			printf '%-22s %-7s %12s %12s %8s\n' $$name $$t "$${c:--}" "$${o:--}" $$r; \
		done; \
	done

# The breadth benchmark: every model in ../shared/models and every model
# ../shared/tools/export/model.sh offers that is in ~/.cache/cuvil-models,
# side by side with ONNX Runtime at BENCH_THREADS, with the geometric mean
# of the ratios; a markdown table for docs/performance.md. BENCH_MODELS
# picks a subset, BENCH_EXPORT=1 exports missing models, BENCH_OUT=F.md
# also writes the table to F.md (scripts/bench-breadth.sh says the rest).
bench-breadth: build
	SHARED=$(SHARED) CUVIL=$(CUVIL) BENCH_THREADS="$(BENCH_THREADS)" BENCH_RUNS=$(BENCH_RUNS) scripts/bench-breadth.sh

# The same models checked on their reference data (cuvil check -rtol 1e-3
# -atol 1e-4): one row per model, pass/FAIL/does not compile. With
# BENCH_TRUTH=1, against the float64 ground truth make truth64 wrote.
check-breadth: build
	SHARED=$(SHARED) CUVIL=$(CUVIL) BENCH_CHECK=1 BENCH_TRUTH=$(BENCH_TRUTH) scripts/bench-breadth.sh

# Float64 ground truth for the model.sh models in the cache (their
# truth64/ folders; scripts/truth64.py says why): the exporter's PyTorch
# build run in double on each test_data_set's inputs.
truth64:
	/usr/bin/python3 scripts/truth64.py --shared $(SHARED)

clean:
	rm -rf bin
