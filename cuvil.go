// Package cuvil is the small public API of the cuvil compiler, for
// generator programs: Compile an ONNX model into a Go package, with custom
// operators run by the user's own Go functions.
//
//	err := cuvil.Compile(cuvil.Options{
//		Model: "model.onnx", Pkg: "model", Out: "./model",
//		Ops: []cuvil.Op{{Domain: "com.acme", Type: "FastGelu", Func: "github.com/acme/ops.FastGelu"}},
//	})
//
// A custom op's function takes each input as a slice and its shape, then
// each attribute (sorted by name) as int64, float32, string, []int64,
// []float32 or []string, then for each output a pointer to a slice and to a
// shape that it sets, and returns an error; `cuvil inspect -ops` prints the
// exact signature each op of a model needs.
package cuvil

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

// Op registers a Go function as the kernel of a custom operator.
type Op struct {
	Domain string // the node's domain, e.g. "com.acme"
	Type   string // its op type, e.g. "FastGelu"
	Func   string // the function: import path, a dot, its name
}

// String is the -op flag form, "com.acme::FastGelu=github.com/acme/ops.FastGelu".
func (o Op) String() string { return o.Domain + "::" + o.Type + "=" + o.Func }

// ParseOp parses the -op flag form "domain::Type=import/path.Func".
func ParseOp(s string) (Op, error) {
	lhs, fn, ok := strings.Cut(s, "=")
	dom, typ, ok2 := strings.Cut(lhs, "::")
	if !ok || !ok2 || dom == "" || typ == "" || fn == "" {
		return Op{}, fmt.Errorf("custom op %q: want domain::Type=import/path.Func", s)
	}
	o := Op{Domain: dom, Type: typ, Func: fn}
	if _, _, err := o.split(); err != nil {
		return Op{}, err
	}
	return o, nil
}

// split returns the function's import path and name.
func (o Op) split() (string, string, error) {
	i := strings.LastIndex(o.Func, ".")
	if i <= 0 || i == len(o.Func)-1 || strings.HasSuffix(o.Func[:i], "/") {
		return "", "", fmt.Errorf("custom op %s::%s: function %q is not import/path.Func", o.Domain, o.Type, o.Func)
	}
	return o.Func[:i], o.Func[i+1:], nil
}

// Options control Compile.
type Options struct {
	Model string // the .onnx file
	Pkg   string // Go package name (default: the base name of Out)
	Out   string // folder of the generated package, replaced atomically
	// Force replaces Out even when it holds files cuvil did not write
	// (by default such a folder is refused, so a mistaken Out deletes
	// nothing).
	Force bool
	// MaxArena and MaxWeights bound the memory NewSession allocates and
	// the weights.bin size, in bytes (0: gen.DefaultMaxArena, 8 GiB, and
	// gen.DefaultMaxWeights, 4 GiB; -1: no limit).
	MaxArena, MaxWeights int64
	// MaxNodes and MaxDepth bound the nodes once model-local functions are
	// inlined and the nesting of subgraphs (0: the importer's defaults,
	// 2^21 nodes and 256 levels; -1: no limit).
	MaxNodes int64
	MaxDepth int
	Ops      []Op // custom operators
	// CShared adds capi/ (a main package to build with
	// -buildmode=c-shared) and python/<Pkg>.py (a ctypes wrapper).
	CShared bool
	// Winograd chooses the 3x3 stride-1 convs that run Winograd
	// F(4x4,3x3) or F(2x2,3x3): "auto" (or "", the default) where the
	// prepack pass's per-layer rules say it beats im2col+GEMM, "on" for
	// every one, "off" for none.
	Winograd string
	// Quantize "int8" runs static post-training quantization (the
	// quantize pass, passes/quantize.go): convolutions and GEMMs with
	// constant weights become int8 ops, with activation ranges observed by
	// running the float model on the Calibrate data sets (folders, or
	// globs of folders, of input_K.pb files in the test_data_set layout; a
	// folder of test_data_set_* folders stands for them). Observer is
	// ObserverMinMax (the default) or ObserverPercentile at Percentile
	// (default DefaultPercentile); QuantizeSkip names nodes or op types
	// (Conv, Gemm, MatMul) that stay float. "" (the default) quantizes
	// nothing. QuantizeReduceRange quantizes the weights to 7 bits
	// ([-64, 64], ONNX Runtime's reduce_range), which CPUs with AVX2 but
	// no VNNI multiply faster (docs/quantization.md), at some accuracy.
	Quantize            string
	Calibrate           []string
	Observer            string
	Percentile          float64
	QuantizeSkip        []string
	QuantizeReduceRange bool
	// Precision (-precision) is "bf16" or "fp16" (or "", the default:
	// none): the precision pass (passes/precision.go) keeps numerically
	// sensitive ops whose inputs are half (Softmax, normalisations,
	// reductions, Exp/Log, attention) in f32 with explicit casts. KeepF32
	// (-keep-f32) names more nodes or op types that run in f32.
	Precision string
	KeepF32   []string
	// Verify runs the IR verifier around every pass; Debug is the -d flag.
	Verify bool
	Debug  string
	// Dump receives IR dumps (-d=pass/dump); Verbose, when set, a summary
	// of what was written; Progress a progress line for compiles that take
	// longer than a second or two.
	Dump, Verbose, Progress io.Writer
	// AllowOps, when set, is the op allow-list (-allow-ops; ParseAllowOps,
	// LoadAllowList, DefaultAllowList): a model with a node, in any
	// subgraph or inlined function body, whose domain, op and version it
	// does not allow is refused, naming the node.
	AllowOps *AllowList
	// Sandbox (-sandbox) is for models from untrusted sources: external
	// data is refused, subgraphs may nest SandboxMaxDepth deep unless
	// MaxDepth says otherwise, dims may reach SandboxMaxDim unless MaxDim
	// does, and AllowOps defaults to DefaultAllowList.
	Sandbox bool
	// MaxDim bounds every constant dim of every value, declared or
	// inferred (0: no limit, or SandboxMaxDim with Sandbox; -1: no limit).
	MaxDim int64
	// Weights (-weights) is where the weights live: "embed" (or "", the
	// default) embeds weights.bin in the package, and New reads it in
	// place; "file" writes weights.bin beside the package (or to
	// WeightsPath) without embedding it, and the generated NewFromFile(path)
	// or NewFromReader(r, size) loads it at run time, checking its size and
	// checksum; New then returns an error saying so.
	Weights string
	// WeightsPath (-weights-path), with Weights "file", is where
	// weights.bin is written instead of beside the package.
	WeightsPath string
	// Profile (-profile) is "" (the default: the full runtime) or "lite":
	// a pure-Go package for microcontroller-class targets (docs/lite.md,
	// gen/lite.go) with one caller-suppliable arena, float32 kernels and
	// no unsafe, sync, fmt or goroutines. A model the lite profile cannot
	// run (symbolic dims, control flow, sequences, optionals or maps, ops
	// without a lite kernel) is refused, naming the input or node, and
	// nothing is written.
	Profile string
	// RAMBudget (-ram-budget), with Profile "lite", refuses a memory plan
	// whose arena needs more bytes, saying by how much and which values
	// are live at the peak (0: no budget).
	RAMBudget int64
	// LiteCodeGOARCH is the GOARCH (GOARM 7 for arm) the lite profile's
	// code size is measured for (default arm); "none" skips measuring.
	LiteCodeGOARCH string
}

// Compile compiles opts.Model into a Go package in opts.Out. Writing the
// same package again leaves unchanged files (and their times) alone.
func Compile(opts Options) error {
	if opts.Out == "" {
		return fmt.Errorf("cuvil: Out is required")
	}
	if opts.Pkg == "" {
		opts.Pkg = filepath.Base(filepath.Clean(opts.Out))
	}
	if err := checkWeightsOptions(&opts); err != nil {
		return err
	}
	switch opts.Profile {
	case "":
		if opts.RAMBudget != 0 {
			return fmt.Errorf("cuvil: a RAM budget (-ram-budget) needs -profile lite")
		}
	case ProfileLite:
		return compileLite(opts)
	default:
		return fmt.Errorf("cuvil: profile %q: want lite (or none)", opts.Profile)
	}
	pr := startProgress(opts.Progress)
	defer pr.stop()
	pr.phase("loading", 0)
	m, ran, err := load(opts, pr)
	if err != nil {
		return err
	}
	pr.phase("checking custom ops", 55)
	custom, err := resolveOps(m, opts.Ops, opts.Out)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Model, err)
	}
	pr.phase("generating", 65)
	testPath := ""
	if opts.WeightsPath != "" {
		if testPath, err = weightsTestPath(opts.Out, opts.WeightsPath); err != nil {
			return err
		}
	}
	files, err := gen.Generate(m, gen.Options{Package: opts.Pkg, Source: filepath.Base(opts.Model), Passes: ran, CustomOps: custom,
		MaxArena: opts.MaxArena, MaxWeights: opts.MaxWeights, Weights: opts.Weights, WeightsTestPath: testPath})
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Model, err)
	}
	if opts.CShared {
		path, err := gen.ImportPath(opts.Out)
		if err != nil {
			return err
		}
		extra, err := gen.CShared(m, gen.CSharedOptions{Package: opts.Pkg, ImportPath: path, Source: filepath.Base(opts.Model)})
		if err != nil {
			return fmt.Errorf("%s: %w", opts.Model, err)
		}
		for name, b := range extra {
			files[name] = b
		}
	}
	pr.phase("writing", 90)
	var blob []byte
	if opts.WeightsPath != "" {
		blob = files["weights.bin"]
		delete(files, "weights.bin")
	}
	if err := gen.WritePackageWith(opts.Out, files, gen.WriteOptions{Force: opts.Force}); err != nil {
		return err
	}
	if opts.WeightsPath != "" {
		if err := writeFileAtomic(opts.WeightsPath, blob); err != nil {
			return err
		}
	}
	pr.done()
	if opts.Verbose != nil {
		names := make([]string, 0, len(files))
		total := 0
		for name, b := range files {
			names = append(names, name)
			total += len(b)
		}
		sort.Strings(names)
		fmt.Fprintf(opts.Verbose, "%s: %d nodes, passes %v\n", opts.Model, len(m.Graph.Nodes), ran)
		for _, name := range names {
			fmt.Fprintf(opts.Verbose, "  %-24s %9d bytes\n", name, len(files[name]))
		}
		fmt.Fprintf(opts.Verbose, "wrote package %s to %s (%d files, %d bytes)\n", opts.Pkg, opts.Out, len(files), total)
		if opts.WeightsPath != "" {
			fmt.Fprintf(opts.Verbose, "wrote the weights to %s (%d bytes)\n", opts.WeightsPath, len(blob))
		}
	}
	return nil
}

// checkWeightsOptions checks Weights and WeightsPath.
func checkWeightsOptions(opts *Options) error {
	switch opts.Weights {
	case "", gen.WeightsEmbed:
		if opts.WeightsPath != "" {
			return fmt.Errorf("cuvil: a weights path (%s) needs the file weights mode (-weights file)", opts.WeightsPath)
		}
	case gen.WeightsFile:
		if opts.CShared {
			return fmt.Errorf("cuvil: the C API (-cshared) loads the model with New, which needs the weights embedded: drop -weights file")
		}
	default:
		return fmt.Errorf("cuvil: weights mode %q: want embed or file", opts.Weights)
	}
	return nil
}

// weightsTestPath is the weights file's path as the generated tests,
// which run in the package folder out, find it: relative to out where it
// can be, else absolute.
func weightsTestPath(out, path string) (string, error) {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", fmt.Errorf("cuvil: %v", err)
	}
	absPath, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("cuvil: %v", err)
	}
	if rel, err := filepath.Rel(absOut, absPath); err == nil {
		return filepath.ToSlash(rel), nil
	}
	return absPath, nil
}

// writeFileAtomic writes b to path through a temporary file beside it, so
// a model loading path meanwhile sees the old file or the new one whole.
func writeFileAtomic(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil // unchanged: keep its modification time, as WritePackage does
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cuvil: %v", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("cuvil: %v", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cuvil: writing the weights: %v", err)
	}
	return nil
}

// Load imports opts.Model and runs the pass pipeline on it as Compile does,
// with opts.Verify, opts.Debug, opts.Dump and opts.Winograd (and the limits
// the importer checks). It
// returns the model and the names of the passes that ran.
func Load(opts Options) (*ir.Model, []string, error) { return load(opts, nil) }

func load(opts Options, pr *progress) (*ir.Model, []string, error) {
	m, ran, _, err := loadWith(opts, pr, nil)
	return m, ran, err
}

// loadWith is load with a hook called after each pass; it also returns
// the precision report (nil without -precision/-keep-f32).
func loadWith(opts Options, pr *progress, after func(*passes.Pass, *ir.Model)) (*ir.Model, []string, *passes.PrecisionConfig, error) {
	if opts.Model == "" {
		return nil, nil, nil, fmt.Errorf("cuvil: a model file is required")
	}
	debug, err := passes.ParseDebug(opts.Debug)
	if err != nil {
		return nil, nil, nil, err
	}
	wino, err := passes.ParseWinograd(opts.Winograd)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cuvil: %v", err)
	}
	lo := onnx.LoadOptions{MaxData: opts.MaxWeights, MaxNodes: opts.MaxNodes, MaxDepth: opts.MaxDepth}
	allow, maxDim := opts.AllowOps, opts.MaxDim
	if opts.Sandbox {
		lo.NoExternalData = true
		if lo.MaxDepth == 0 {
			lo.MaxDepth = SandboxMaxDepth
		}
		if allow == nil {
			allow = DefaultAllowList()
		}
		if maxDim == 0 {
			maxDim = SandboxMaxDim
		}
	}
	m, err := onnx.LoadWith(opts.Model, lo)
	if err != nil {
		return nil, nil, nil, err
	}
	if allow != nil {
		if err := allow.Check(m); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", opts.Model, err)
		}
	}
	if maxDim > 0 {
		if err := checkDims(m, maxDim); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", opts.Model, err)
		}
	}
	var quant *passes.QuantConfig
	if opts.Quantize != "" || len(opts.Calibrate) > 0 || len(opts.QuantizeSkip) > 0 || opts.QuantizeReduceRange {
		pr.phase("calibrating", 10)
		if quant, err = quantConfig(opts, lo, debug, wino); err != nil {
			return nil, nil, nil, err
		}
	}
	prec, err := precisionConfig(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	pr.phase("running passes", 20)
	if err := runPasses(m, passes.Options{Verify: opts.Verify, Debug: debug, Dump: opts.Dump, Winograd: wino, Quant: quant, Precision: prec, AfterPass: after}); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", opts.Model, err)
	}
	if maxDim > 0 { // the dims shape inference found
		if err := checkDims(m, maxDim); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", opts.Model, err)
		}
	}
	var ran []string
	for _, name := range passes.PassNames() {
		if debug[name] != passes.ActionOff {
			ran = append(ran, name)
		}
	}
	return m, ran, prec, nil
}

// runPasses runs the pipeline, turning a panic that escapes it into an
// error.
func runPasses(m *ir.Model, opts passes.Options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in the pass pipeline: %v", r)
		}
	}()
	return passes.Run(m, opts)
}

// progress prints "cuvil: <phase> (NN%)" on a writer once a compile has
// run for a while, rewriting the line as phases change.
type progress struct {
	w     io.Writer
	now   func() time.Time
	delay time.Duration // how long a compile runs before the line shows
	start time.Time
	mu    sync.Mutex
	cur   string // the current phase
	last  string // the phase on the line, "" while none is shown
	quit  chan struct{}
	fin   chan struct{}
}

const progressDelay = 1500 * time.Millisecond

func newProgress(w io.Writer, delay time.Duration, now func() time.Time) *progress {
	return &progress{w: w, now: now, delay: delay, start: now()}
}

// startProgress returns a progress that also shows a long phase once the
// delay has passed while it runs.
func startProgress(w io.Writer) *progress {
	p := newProgress(w, progressDelay, time.Now)
	if w == nil {
		return p
	}
	p.quit = make(chan struct{})
	p.fin = make(chan struct{})
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer close(p.fin)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			p.show()
		case <-p.quit:
			return
		}
	}
}

func (p *progress) phase(name string, pct int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	p.cur = fmt.Sprintf("%s (%d%%)", name, pct)
	p.mu.Unlock()
	p.show()
}

// show writes the current phase once the delay has passed, and again only
// when it changes.
func (p *progress) show() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == "" || p.cur == p.last || p.now().Sub(p.start) < p.delay {
		return
	}
	fmt.Fprintf(p.w, "\rcuvil: %-40s", p.cur)
	p.last = p.cur
}

func (p *progress) done() { p.phase("done", 100) }

// stop ends the ticker and clears the line if one was shown.
func (p *progress) stop() {
	if p == nil || p.w == nil {
		return
	}
	if p.quit != nil {
		close(p.quit)
		<-p.fin
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last != "" {
		fmt.Fprintf(p.w, "\r%-48s\r", "")
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
