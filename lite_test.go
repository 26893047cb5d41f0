package cuvil

import (
	"bytes"
	"context"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// writeModel encodes m into dir/name.onnx and returns the path.
func writeModel(t *testing.T, m *ir.Model, dir, name string) string {
	t.Helper()
	if m.IRVersion == 0 {
		m.IRVersion = 8
	}
	b, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLiteRefusals: what the lite profile cannot run is refused with an
// error naming the input or node, and nothing is written.
func TestLiteRefusals(t *testing.T) {
	dir := t.TempDir()
	sym := filepath.Join(dir, "sym.onnx")
	symModel(t, sym)

	// If on a condition computed at run time.
	b := &irbuild.B{G: &ir.Graph{Name: "ifm"}}
	x := b.In("x", irbuild.F32(2, 3))
	zero := b.ConstF32([]int64{}, 0)
	s := b.Op("ReduceSum", []*ir.Attr{irbuild.IntAttr("keepdims", 0)}, x)
	cond := b.Op("Greater", nil, s, zero)
	th := irbuild.Sub("then", b.G)
	th.G.Outputs = []*ir.Value{th.Op("Relu", nil, x)}
	el := irbuild.Sub("else", b.G)
	el.G.Outputs = []*ir.Value{el.Op("Neg", nil, x)}
	y := b.Op("If", []*ir.Attr{irbuild.GraphAttr("then_branch", th.G), irbuild.GraphAttr("else_branch", el.G)}, cond)
	ifPath := writeModel(t, irbuild.Model(b, y), dir, "if")

	// An op without a lite kernel.
	b = &irbuild.B{G: &ir.Graph{Name: "erf"}}
	x = b.In("x", irbuild.F32(2, 3))
	erfPath := writeModel(t, irbuild.Model(b, b.Op("Erf", nil, x)), dir, "erf")

	// A sequence.
	b = &irbuild.B{G: &ir.Graph{Name: "seq"}}
	x = b.In("x", irbuild.F32(2, 3))
	sq := b.Op("SequenceConstruct", nil, x, x)
	seqPath := writeModel(t, irbuild.Model(b, b.Op("SequenceAt", nil, sq, b.ConstI64([]int64{}, 1))), dir, "seq")

	// An int64 input.
	b = &irbuild.B{G: &ir.Graph{Name: "i64"}}
	xi := b.In("x", ir.TensorType(ir.I64, ir.ShapeOf(2, 3)))
	i64Path := writeModel(t, irbuild.Model(b, b.Op("Neg", nil, xi)), dir, "i64")

	// A conv whose plan needs 2 x 32 x 26 x 26 x 4 bytes and more.
	b = &irbuild.B{G: &ir.Graph{Name: "conv"}}
	x = b.In("x", irbuild.F32(1, 1, 28, 28))
	w := b.ConstF32([]int64{32, 1, 3, 3}, make([]float32, 288)...)
	c := b.Op("Conv", nil, x, w)
	convPath := writeModel(t, irbuild.Model(b, b.Op("Relu", nil, b.Op("Conv", nil, c, b.ConstF32([]int64{8, 32, 3, 3}, make([]float32, 8*32*9)...)))), dir, "conv")

	for _, k := range []struct {
		model  string
		budget int64
		want   []string
	}{
		{sym, 0, []string{`input "x" has the symbolic dim "N"`, "static shapes"}},
		{ifPath, 0, []string{`node "ifm_2" (If): control flow`, `node "ifm_0" (ReduceSum): op ReduceSum has no lite kernel`}},
		{erfPath, 0, []string{`node "erf_0" (Erf): op Erf has no lite kernel`, "(the lite ops: Abs, Add, AveragePool, Clip, Conv,"}},
		{seqPath, 0, []string{`node "seq_0" (SequenceConstruct): output "seq_SequenceConstruct_0" is a sequence: the lite profile has no sequences, optionals or maps`}},
		{i64Path, 0, []string{`input "x" is `, "the lite profile runs float32 only"}},
		{convPath, 64 << 10, []string{"needs 102.5 KB (104960 bytes) of arena, 38.5 KB (39424 bytes) over the 64.0 KB RAM budget", `the peak is at node "conv_1", where these values are live: "conv_Conv_0" 84.5 KB, "conv_Conv_1" 18.0 KB`}},
	} {
		out := filepath.Join(dir, "out", strings.TrimSuffix(filepath.Base(k.model), ".onnx"))
		err := Compile(Options{Model: k.model, Out: out, Pkg: "p", Profile: ProfileLite, RAMBudget: k.budget, LiteCodeGOARCH: "none"})
		if err == nil {
			t.Errorf("%s: compiled under -profile lite", k.model)
			continue
		}
		t.Logf("%s: %v", filepath.Base(k.model), err)
		for _, w := range k.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", k.model, err, w)
			}
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("%s: refused, but %s was written", k.model, out)
		}
	}
	// The same conv fits a bigger budget.
	if err := Compile(Options{Model: convPath, Out: filepath.Join(dir, "conv"), Pkg: "conv", Profile: ProfileLite, RAMBudget: 512 << 10, LiteCodeGOARCH: "none"}); err != nil {
		t.Errorf("conv within 512KB: %v", err)
	}
	if err := Compile(Options{Model: convPath, Out: filepath.Join(dir, "x"), RAMBudget: 1}); err == nil || !strings.Contains(err.Error(), "-profile lite") {
		t.Errorf("-ram-budget without -profile lite: err = %v", err)
	}
}

// compileLiteMnist compiles the mnist model with -profile lite into
// dir/mnist of a module in dir and returns the -v report.
func compileLiteMnist(t *testing.T, dir string) (report, model, data string) {
	t.Helper()
	model, data = mnistModel(t)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module litemnist\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var v bytes.Buffer
	if err := Compile(Options{Model: model, Out: filepath.Join(dir, "mnist"), Profile: ProfileLite, Verbose: &v}); err != nil {
		t.Fatal(err)
	}
	return v.String(), model, data
}

func goCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false"), env...)
	return cmd
}

// TestLiteImports: a lite package imports errors and math only, its
// dependencies hold no sync, runtime/debug, fmt, reflect or os, and its
// sources start no goroutine and carry no assembly.
func TestLiteImports(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles mnist and runs go list; skipped in -short mode")
	}
	dir := t.TempDir()
	report, _, _ := compileLiteMnist(t, dir)
	t.Log(report)
	out, err := goCmd(dir, nil, "list", "-f", "{{join .Imports \" \"}}", "./mnist").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "errors math" {
		t.Errorf("imports %q, want \"errors math\"", got)
	}
	out, err = goCmd(dir, nil, "list", "-deps", "./mnist").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "sync", "runtime/debug", "fmt", "reflect", "os", "time", "syscall":
			t.Errorf("go list -deps names %s", dep)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "mnist"))
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`\bgo func|\bgo [a-zA-Z_]+\(|\b(unsafe|sync|runtime|fmt|reflect)\.[A-Z]|AddCleanup|SetFinalizer`)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") {
			t.Errorf("%s: a lite package holds only Go files", e.Name())
			continue
		}
		if strings.HasSuffix(e.Name(), "_test.go") || e.Name() == "weights.go" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, "mnist", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if m := bad.Find(src); m != nil {
			t.Errorf("%s uses %q", e.Name(), m)
		}
	}
	// Its own tests: no allocation after New, a caller's arena.
	if out, err := goCmd(dir, nil, "test", "-count=1", "./mnist").CombinedOutput(); err != nil {
		t.Errorf("go test: %v\n%s", err, out)
	}
}

// liteMain runs the lite mnist on a raw little-endian float32 input file
// in a package-level arena and prints the arena's bytes, the heap's
// growth over ten runs after New and the outputs.
const liteMain = `package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"

	"litemnist/mnist"
)

var arena [mnist.ArenaLen]float32

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	m, err := mnist.New()
	if err != nil {
		panic(err)
	}
	s, err := m.NewSession(arena[:])
	if err != nil {
		panic(err)
	}
	in := make([]float32, len(raw)/4)
	for i := range in {
		in[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		copy(s.Input(0), in)
		s.Run()
	}
	runtime.ReadMemStats(&after)
	fmt.Println("arena", 4*len(s.Arena()), mnist.ArenaBytes)
	fmt.Println("heap", after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc, int64(after.HeapAlloc)-int64(before.HeapAlloc))
	fmt.Print("out")
	for _, v := range s.Output(0) {
		fmt.Print(" ", math.Float32bits(v))
	}
	fmt.Println()
}
`

// TestLiteARM runs the lite mnist for GOARCH=arm GOARM=7 under qemu-arm
// (internal/harness Target): its outputs match the reference, the heap
// does not grow after New, and the arena is the size the plan reported.
func TestLiteARM(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles mnist and runs it under qemu-arm; skipped in -short mode")
	}
	tgt := harness.Target{GOARCH: "arm", GOARM: "7"}
	run, err := tgt.ExecArgs(t.TempDir())
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	report, _, data := compileLiteMnist(t, dir)
	m := regexp.MustCompile(`arena \(RAM\) +(\d+) bytes`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no arena in the report:\n%s", report)
	}
	planned, _ := strconv.Atoi(m[1])
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", "main.go"), []byte(liteMain), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := onnx.ReadTensorFile(filepath.Join(data, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := onnx.ReadTensorFile(filepath.Join(data, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "input_0.f32")
	if err := os.WriteFile(raw, in.Raw, 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "litemnist")
	if out, err := goCmd(dir, tgt.Env(), "build", "-o", exe, "./run").CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", tgt.Env(), err, out)
	}
	out, err := exec.Command(run[0], append(run[1:], exe, raw)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", run, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%s", out)
	}
	t.Logf("qemu-arm: %s; %s", lines[0], lines[1])
	if f := strings.Fields(lines[0]); len(f) != 3 || f[1] != strconv.Itoa(planned) || f[2] != f[1] {
		t.Errorf("%q: want the planned %d bytes", lines[0], planned)
	}
	if f := strings.Fields(lines[1]); len(f) != 4 || f[1] != "0" || f[2] != "0" {
		t.Errorf("%q: the heap grew after New", lines[1])
	}
	f := strings.Fields(lines[2])[1:]
	ref := want.Float64s()
	if len(f) != len(ref) {
		t.Fatalf("%d outputs, want %d", len(f), len(ref))
	}
	worst := 0.0
	for i, s := range f {
		bits, _ := strconv.ParseUint(s, 10, 32)
		got := float64(math.Float32frombits(uint32(bits)))
		d := math.Abs(got - ref[i])
		if d > 1e-4*(1+math.Abs(ref[i])) {
			t.Errorf("log_probs[%d] = %v, want %v", i, got, ref[i])
		}
		worst = math.Max(worst, d)
	}
	t.Logf("qemu-arm: log_probs within %.3g of the reference", worst)
}

// TestLiteHostile compiles the hostile corpus (hostile_test.go) under
// -profile lite: no case may panic, hang or leave files behind when
// refused; what the full profile refuses the lite one refuses too, and
// what it compiles has files that parse.
func TestLiteHostile(t *testing.T) {
	refused, compiled := 0, 0
	for _, tc := range hostileCorpus(t) {
		dir := t.TempDir()
		path := filepath.Join(dir, "model.onnx")
		if err := os.WriteFile(path, tc.model, 0o644); err != nil {
			t.Fatal(err)
		}
		for name, b := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "out", "pkg")
		label := tc.cat + "/" + tc.name
		start := time.Now()
		err, panicked := func() (err error, p any) {
			defer func() { p = recover() }()
			return Compile(Options{Model: path, Pkg: "pkg", Out: out, Profile: ProfileLite, LiteCodeGOARCH: "none"}), nil
		}()
		switch {
		case panicked != nil:
			t.Errorf("%s: panic: %v", label, panicked)
		case time.Since(start) > 20*time.Second:
			t.Errorf("%s: took %v", label, time.Since(start))
		case err != nil && hasAny(err.Error(), panicWords):
			t.Errorf("%s: a recovered panic, not a refusal: %v", label, err)
		case err != nil:
			refused++
			if left, _ := os.ReadDir(filepath.Join(dir, "out")); len(left) > 0 {
				t.Errorf("%s: refused but left %v behind", label, left)
			}
		case len(tc.want) > 0 && !tc.either:
			t.Errorf("%s: compiled under -profile lite, want a refusal saying %q", label, tc.want)
		default:
			compiled++
			if perr := parseAll(out); perr != nil {
				t.Errorf("%s: %v", label, perr)
			}
		}
	}
	t.Logf("hostile corpus under -profile lite: %d refused, %d compiled", refused, compiled)
}

// liteMix is a model over most lite kernels: a strided padded conv, Clip,
// a dilated depthwise conv, AveragePool counting pads, broadcast Mul and
// Sub, MaxPool, Flatten, MatMul, Tanh, Gemm (alpha, beta, transB),
// LeakyRelu, Softmax, and a second output (Sigmoid).
func liteMix(r *rand.Rand) *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "mix"}}
	rnd := func(shape ...int64) *ir.Value {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.5)
		}
		return b.ConstF32(shape, v...)
	}
	fa := func(name string, f float32) *ir.Attr { return &ir.Attr{Name: name, Kind: ir.AttrFloat, F: f} }
	x := b.In("x", irbuild.F32(1, 3, 9, 7))
	c1 := b.Op("Conv", []*ir.Attr{irbuild.IntsAttr("pads", 1, 1, 1, 1), irbuild.IntsAttr("strides", 2, 2)}, x, rnd(4, 3, 3, 3), rnd(4))
	c1r := b.Op("Clip", nil, c1, b.ConstF32([]int64{}, 0), b.ConstF32([]int64{}, 0.8))
	dw := b.Op("Conv", []*ir.Attr{irbuild.IntAttr("group", 4), irbuild.IntsAttr("dilations", 2, 2), irbuild.IntsAttr("pads", 2, 2, 2, 2)}, c1r, rnd(4, 1, 3, 3))
	ap := b.Op("AveragePool", []*ir.Attr{irbuild.IntsAttr("kernel_shape", 3, 3), irbuild.IntsAttr("strides", 2, 2), irbuild.IntsAttr("pads", 1, 1, 1, 1), irbuild.IntAttr("count_include_pad", 1)}, dw)
	a := b.Op("Sub", nil, b.Op("Mul", nil, ap, rnd(1, 4, 1, 1)), rnd())
	mp := b.Op("MaxPool", []*ir.Attr{irbuild.IntsAttr("kernel_shape", 2, 2)}, a)
	mm := b.Op("MatMul", nil, b.Op("Flatten", nil, mp), rnd(8, 5))
	g := b.Op("Gemm", []*ir.Attr{irbuild.IntAttr("transB", 1), fa("alpha", 0.7), fa("beta", 0.3)}, b.Op("Tanh", nil, mm), rnd(6, 5), rnd(6))
	y := b.Op("Softmax", nil, b.Op("LeakyRelu", []*ir.Attr{fa("alpha", 0.1)}, g))
	z := b.Op("Sigmoid", nil, mm)
	y.Name, z.Name = "y", "z"
	return irbuild.Model(b, y, z)
}

// liteRunMain runs package PKG of module litecmp on a raw float32 input
// file and prints each output's float32 bits on a line.
const liteRunMain = `package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"litecmp/PKG"
)

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	m, err := PKG.New()
	if err != nil {
		panic(err)
	}
	s, err := m.NewSession(nil)
	if err != nil {
		panic(err)
	}
	in := s.Input(0)
	for i := range in {
		in[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	s.Run()
	for i := 0; s.Output(i) != nil; i++ {
		for _, v := range s.Output(i) {
			fmt.Print(math.Float32bits(v), " ")
		}
		fmt.Println()
	}
}
`

// TestLiteMatchesFull: the lite package of liteMix gives the full
// profile's outputs (through the harness), on the host and, where qemu is
// installed, on big-endian s390x and on arm.
func TestLiteMatchesFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two profiles of a model; skipped in -short mode")
	}
	r := rand.New(rand.NewSource(7))
	dir := t.TempDir()
	model := writeModel(t, liteMix(r), dir, "mix")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module litecmp\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Compile(Options{Model: model, Out: filepath.Join(dir, "mix"), Profile: ProfileLite, LiteCodeGOARCH: "none"}); err != nil {
		t.Fatal(err)
	}
	in := make([]float32, 3*9*7)
	for i := range in {
		in[i] = float32(r.NormFloat64())
	}
	inT := ir.NewTensorF32([]int64{1, 3, 9, 7}, in)
	raw := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(raw, inT.Raw, 0o644); err != nil {
		t.Fatal(err)
	}

	// The full profile through the harness.
	full, _, err := Load(Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	h, err := harness.New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Add("mix", full); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exe, err := h.Build(ctx)
	if err != nil || len(h.Failed) > 0 {
		t.Fatal(err, h.Failed)
	}
	xin := filepath.Join(h.Dir, "x.cuvt")
	if err := harness.WriteTensorFile(xin, inT); err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(ctx, exe, []harness.Job{{Model: "mix", Inputs: []string{xin}, Out: h.Dir}}, 1)
	if err != nil || res[0].Err != "" {
		t.Fatal(err, res[0].Err)
	}
	var want [][]float64
	for i := 0; i < 2; i++ {
		o, err := harness.ReadTensorFile(filepath.Join(h.Dir, "output_"+strconv.Itoa(i)+".cuvt"))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, o.Float64s())
	}

	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", "main.go"), []byte(strings.ReplaceAll(liteRunMain, "PKG", "mix")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tgt := range []harness.Target{{}, {GOARCH: "s390x"}, {GOARCH: "arm", GOARM: "7"}} {
		name := crossName(tgt)
		if name == "" {
			name = "host"
		}
		run, err := tgt.ExecArgs(dir)
		if err != nil {
			t.Logf("skipping %s: %v", name, err)
			continue
		}
		prog := filepath.Join(dir, "mix-"+name)
		if out, err := goCmd(dir, tgt.Env(), "build", "-o", prog, "./run").CombinedOutput(); err != nil {
			t.Fatalf("%s: go build: %v\n%s", name, err, out)
		}
		argv := append(run, prog, raw)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %v\n%s", name, argv, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: output:\n%s", name, out)
		}
		worst := 0.0
		for i, l := range lines {
			f := strings.Fields(l)
			if len(f) != len(want[i]) {
				t.Fatalf("%s: output %d has %d values, the full profile %d", name, i, len(f), len(want[i]))
			}
			for j, s := range f {
				bits, _ := strconv.ParseUint(s, 10, 32)
				got := float64(math.Float32frombits(uint32(bits)))
				d := math.Abs(got - want[i][j])
				if d > 1e-5*(1+math.Abs(want[i][j])) {
					t.Errorf("%s: output %d [%d] = %v, full profile %v", name, i, j, got, want[i][j])
				}
				worst = math.Max(worst, d)
			}
		}
		t.Logf("%s: lite within %.3g of the full profile", name, worst)
	}
}
