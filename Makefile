# Cuvil's tasks. `make demo` and `make test` are the two you need (README.md).

GO      ?= go
CUVIL   := bin/cuvil
SHARED  ?= $(abspath ../shared)
ONNX_NODE_TESTS := $(SHARED)/onnx-tests/node
MODELS  := $(SHARED)/models
# Node tests known to fail today (missing ops, sequences...); conformance
# fails on any other failure, and says when a listed test starts passing.
XFAIL   := testdata/conformance/node_xfail.txt
FUZZTIME ?= 10s

.PHONY: all build demo test vet unit fuzz conformance generate check bench clean

all: build

build:
	$(GO) build -o $(CUVIL) ./cmd/cuvil

# Compile testdata/mnist into examples/mnist/mnist, build and run the app.
demo: build
	cd examples/mnist && $(GO) generate ./...
	$(GO) build -o bin/mnist ./examples/mnist
	./bin/mnist

test: vet unit fuzz conformance

vet:
	$(GO) vet ./...

unit:
	$(GO) test ./...

fuzz:
	@if grep -qs '^func FuzzDecode' ir/onnx/*_test.go; then \
		echo "$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./ir/onnx"; \
		$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./ir/onnx; \
	else echo "fuzz: ir/onnx has no FuzzDecode; skipped"; fi

conformance: build
	@if [ -d "$(ONNX_NODE_TESTS)" ]; then \
		echo "$(CUVIL) conformance -xfail $(XFAIL) -report conformance.md $(ONNX_NODE_TESTS)"; \
		$(CUVIL) conformance -xfail $(XFAIL) -report conformance.md $(ONNX_NODE_TESTS); \
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

bench: build
	@if [ -d "$(MODELS)" ]; then \
		for m in mnist_cnn_op13 squeezenet1_1_op13 mobilenet_v2_op13; do \
			$(CUVIL) bench -model $(MODELS)/$$m/model.onnx -threads 1 -runs 20 || exit 1; \
		done; \
		$(CUVIL) bench -model $(MODELS)/bert_dynseq_op13/model.onnx -threads 1 -runs 10 -dim seq=128; \
	else $(CUVIL) bench -model testdata/mnist/model.onnx -threads 1 -runs 20; fi

clean:
	rm -rf bin conformance.md
