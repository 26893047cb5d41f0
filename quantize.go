package cuvil

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

// Static post-training quantization (Options.Quantize "int8"): the model
// is compiled once in float with the inputs of every convolution and GEMM
// the quantize pass would rewrite added as graph outputs (the pass's
// observe mode), built and run through the harness on the calibration
// inputs, and the observed ranges of those values drive the quantize pass
// of the real compile (passes/quantize.go).

// Observers of the activation ranges.
const (
	ObserverMinMax     = "minmax"     // the smallest and largest value seen
	ObserverPercentile = "percentile" // per input, the Percentile-th and (100-Percentile)-th percentiles; averaged over the inputs
)

// DefaultPercentile is the percentile observer's default.
const DefaultPercentile = 99.99

// quantConfig calibrates the model (opts.Calibrate) and returns the
// quantize pass's configuration; nil when opts.Quantize is "".
func quantConfig(opts Options, lo onnx.LoadOptions, debug map[string]string, wino passes.WinogradMode) (*passes.QuantConfig, error) {
	switch opts.Quantize {
	case "":
		if len(opts.Calibrate) > 0 || len(opts.QuantizeSkip) > 0 || opts.QuantizeReduceRange {
			return nil, fmt.Errorf("cuvil: calibration data, quantize-skip or quantize-reduce-range given without -quantize int8")
		}
		return nil, nil
	case "int8":
	default:
		return nil, fmt.Errorf("cuvil: -quantize %q: only int8 (static, calibrated) is supported", opts.Quantize)
	}
	observer := opts.Observer
	switch observer {
	case "":
		observer = ObserverMinMax
	case ObserverMinMax, ObserverPercentile:
	default:
		return nil, fmt.Errorf("cuvil: observer %q: minmax or percentile", opts.Observer)
	}
	pct := opts.Percentile
	if pct == 0 {
		pct = DefaultPercentile
	}
	if pct <= 50 || pct > 100 {
		return nil, fmt.Errorf("cuvil: percentile %v: must be in (50, 100]", pct)
	}
	sets, err := calibrationSets(opts.Calibrate)
	if err != nil {
		return nil, err
	}
	m, err := onnx.LoadWith(opts.Model, lo)
	if err != nil {
		return nil, err
	}
	// The calibration model runs the same passes as the real compile, so
	// the values the quantize pass sees have the same names in both.
	off := map[string]string{}
	for name, a := range debug {
		if a == passes.ActionOff {
			off[name] = a
		}
	}
	cfg := &passes.QuantConfig{Observe: true, Skip: opts.QuantizeSkip}
	if err := runPasses(m, passes.Options{Debug: off, Winograd: wino, Quant: cfg}); err != nil {
		return nil, fmt.Errorf("%s: calibration model: %w", opts.Model, err)
	}
	ranges, err := observe(m, cfg.Observed, sets, observer, pct)
	if err != nil {
		return nil, fmt.Errorf("%s: calibration: %w", opts.Model, err)
	}
	return &passes.QuantConfig{Ranges: ranges, Skip: opts.QuantizeSkip, ReduceRange: opts.QuantizeReduceRange}, nil
}

// calibrationSets expands the calibration entries (folders or globs of
// them) into data set folders: a folder's test_data_set_* subfolders, or
// the folder itself.
func calibrationSets(entries []string) ([]string, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("cuvil: -quantize int8 needs calibration data (-calibrate DIR: folders of input_K.pb files)")
	}
	var sets []string
	for _, e := range entries {
		matches, err := filepath.Glob(e)
		if err != nil {
			return nil, fmt.Errorf("cuvil: -calibrate %q: %v", e, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("cuvil: -calibrate %q: no such folder", e)
		}
		sort.Strings(matches)
		for _, dir := range matches {
			st, err := os.Stat(dir)
			if err != nil {
				return nil, err
			}
			if !st.IsDir() {
				return nil, fmt.Errorf("cuvil: -calibrate %q: %s is not a folder", e, dir)
			}
			sub, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
			var dirs []string
			for _, s := range sub {
				if st, err := os.Stat(s); err == nil && st.IsDir() {
					dirs = append(dirs, s)
				}
			}
			sort.Slice(dirs, func(i, j int) bool { return setIndex(dirs[i]) < setIndex(dirs[j]) })
			if len(dirs) == 0 {
				dirs = []string{dir}
			}
			sets = append(sets, dirs...)
		}
	}
	return sets, nil
}

func setIndex(dir string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "test_data_set_"))
	if err != nil {
		return 1 << 30
	}
	return n
}

// rangeObserver accumulates one value's range.
type rangeObserver struct {
	lo, hi float64 // minmax; percentile: sums of the per-input percentiles
	n      int
}

func (o *rangeObserver) add(vals []float64, observer string, pct float64) {
	finite := vals[:0:0]
	for _, v := range vals {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	if len(finite) == 0 {
		return
	}
	var lo, hi float64
	if observer == ObserverPercentile {
		sort.Float64s(finite)
		at := func(p float64) float64 {
			i := int(math.Round(p / 100 * float64(len(finite)-1)))
			return finite[max(0, min(len(finite)-1, i))]
		}
		lo, hi = at(100-pct), at(pct)
		if o.n == 0 {
			o.lo, o.hi = 0, 0
		}
		o.lo += lo
		o.hi += hi
		o.n++
		return
	}
	lo, hi = finite[0], finite[0]
	for _, v := range finite {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if o.n == 0 {
		o.lo, o.hi = lo, hi
	} else {
		o.lo, o.hi = math.Min(o.lo, lo), math.Max(o.hi, hi)
	}
	o.n++
}

func (o *rangeObserver) result(observer string) [2]float32 {
	if o.n == 0 {
		return [2]float32{0, 0}
	}
	if observer == ObserverPercentile {
		return [2]float32{float32(o.lo / float64(o.n)), float32(o.hi / float64(o.n))}
	}
	return [2]float32{float32(o.lo), float32(o.hi)}
}

// observe builds m (whose graph outputs include the observed values) in a
// harness, runs it on every data set and returns the observed ranges.
func observe(m *ir.Model, names []string, sets []string, observer string, pct float64) (map[string][2]float32, error) {
	g := m.Graph
	ranges := map[string][2]float32{}
	if len(names) == 0 {
		return ranges, nil
	}
	inIdx, outIdx := map[string]int{}, map[string]int{}
	for i, v := range g.Inputs {
		inIdx[v.Name] = i
	}
	for i, v := range g.Outputs {
		outIdx[v.Name] = i
	}
	obs := make([]rangeObserver, len(names))
	h, err := harness.New()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.Add("calibrate", m); err != nil {
		return nil, err
	}
	ctx := context.Background()
	exe, err := h.Build(ctx)
	if err != nil {
		return nil, err
	}
	if reason, failed := h.Failed["calibrate"]; failed {
		return nil, fmt.Errorf("the float model did not build: %s", reason)
	}
	const batch = 8 // data sets a harness process runs at once
	for start := 0; start < len(sets); start += batch {
		end := min(start+batch, len(sets))
		var jobs []harness.Job
		inputs := make([][]*onnx.Data, 0, end-start)
		for s := start; s < end; s++ {
			dir := filepath.Join(h.Dir, "data", strconv.Itoa(s))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			job := harness.Job{Model: "calibrate", Out: dir}
			var ins []*onnx.Data
			for k, v := range g.Inputs {
				src := filepath.Join(sets[s], fmt.Sprintf("input_%d.pb", k))
				if v.Type.Kind != ir.TensorKind {
					return nil, fmt.Errorf("input %q is a %s: calibration takes tensor inputs", v.Name, v.Type)
				}
				d, err := onnx.ReadDataFile(src, ir.TensorKind)
				if err != nil {
					return nil, fmt.Errorf("calibration data: %w", err)
				}
				if d.Tensor == nil {
					return nil, fmt.Errorf("calibration data %s: not a tensor", src)
				}
				path := filepath.Join(dir, fmt.Sprintf("input_%d.cuvt", k))
				if err := harness.WriteDataFile(path, d, gen.ElemDType(v.Type)); err != nil {
					return nil, err
				}
				job.Inputs = append(job.Inputs, path)
				ins = append(ins, d)
			}
			if _, err := os.Stat(filepath.Join(sets[s], fmt.Sprintf("input_%d.pb", len(g.Inputs)))); err == nil {
				return nil, fmt.Errorf("calibration data %s: more input_K.pb files than the model's %d inputs", sets[s], len(g.Inputs))
			}
			jobs = append(jobs, job)
			inputs = append(inputs, ins)
		}
		results, err := h.Run(ctx, exe, jobs, 0)
		if err != nil {
			return nil, err
		}
		for j, r := range results {
			if r.Err != "" {
				return nil, fmt.Errorf("running on %s: %s", sets[start+j], r.Err)
			}
			for i, name := range names {
				var t *ir.Tensor
				if k, ok := inIdx[name]; ok {
					t = inputs[j][k].Tensor
				} else if k, ok := outIdx[name]; ok && k < r.Outputs {
					d, _, err := harness.ReadDataFile(filepath.Join(jobs[j].Out, fmt.Sprintf("output_%d.cuvt", k)))
					if err != nil {
						return nil, err
					}
					t = d.Tensor
				}
				if t == nil {
					return nil, fmt.Errorf("value %s was not observed", name)
				}
				obs[i].add(t.Float64s(), observer, pct)
			}
		}
	}
	for i, name := range names {
		ranges[name] = obs[i].result(observer)
	}
	return ranges, nil
}

// WriteQDQ calibrates opts.Model as Compile does with opts.Quantize
// "int8" (the default here) and returns the same decisions as a standard
// QDQ ONNX model (what `cuvil quantize` writes), so that other runtimes
// run the model Cuvil compiles: every Conv, Gemm and MatMul the quantize
// pass rewrites reads its input through QuantizeLinear -> DequantizeLinear
// (u8, the observed scale and zero point), its weights through a
// DequantizeLinear of the s8 per-output-channel weights and its bias
// (Conv, Gemm with a bias of N) through one of the int32 bias; the rest of
// the model is as imported.
func WriteQDQ(opts Options) ([]byte, error) {
	if opts.Quantize == "" {
		opts.Quantize = "int8"
	}
	if opts.Model == "" {
		return nil, fmt.Errorf("cuvil: a model file is required")
	}
	debug, err := passes.ParseDebug(opts.Debug)
	if err != nil {
		return nil, err
	}
	wino, err := passes.ParseWinograd(opts.Winograd)
	if err != nil {
		return nil, fmt.Errorf("cuvil: %v", err)
	}
	lo := onnx.LoadOptions{MaxData: opts.MaxWeights, MaxNodes: opts.MaxNodes, MaxDepth: opts.MaxDepth}
	cfg, err := quantConfig(opts, lo, debug, wino)
	if err != nil {
		return nil, err
	}
	// Which imported nodes the pass quantizes, and the value each reads.
	m, err := onnx.LoadWith(opts.Model, lo)
	if err != nil {
		return nil, err
	}
	off := map[string]string{}
	for name, a := range debug {
		if a == passes.ActionOff {
			off[name] = a
		}
	}
	// Without chains every integer op reads a QuantizeLinear of the
	// float value, which names it.
	nc := *cfg
	nc.NoChain = true
	if err := runPasses(m, passes.Options{Debug: off, Winograd: wino, Quant: &nc}); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Model, err)
	}
	reads := map[string]string{} // imported Conv/Gemm/MatMul name -> its input's name
	for _, n := range m.Graph.Nodes {
		if n.Domain != ir.CuvilDomain || (n.Op != "QConv" && n.Op != "QGemm") || n.Input(0) == nil || n.Input(0).Def == nil || n.Input(0).Def.Op != "QuantizeLinear" {
			continue
		}
		x := n.Input(0).Def.Input(0)
		for _, o := range n.Fused {
			if (o.Op == "Conv" || o.Op == "Gemm" || o.Op == "MatMul") && x != nil {
				reads[o.Name] = x.Name
			}
		}
	}
	orig, err := onnx.LoadWith(opts.Model, lo)
	if err != nil {
		return nil, err
	}
	if err := writeQDQ(orig, reads, cfg.Ranges, passes.QuantWeightMax(cfg.ReduceRange)); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Model, err)
	}
	return onnx.Encode(orig)
}

// writeQDQ rewrites the imported model m in place (see WriteQDQ).
func writeQDQ(m *ir.Model, reads map[string]string, ranges map[string][2]float32, qmax float64) error {
	g := m.Graph
	version := func(op string) (int, error) {
		s := ir.LookupOp("", op)
		if s == nil {
			return 0, fmt.Errorf("no %s in the op table", op)
		}
		v, ok := s.VersionFor(m.Opset(""))
		if !ok || v < 13 {
			return 0, fmt.Errorf("a QDQ model needs ai.onnx opset 13 or later (per-axis DequantizeLinear); the model has %d", m.Opset(""))
		}
		return v, nil
	}
	names := map[string]bool{}
	for _, v := range g.Consts {
		names[v.Name] = true
	}
	for _, v := range g.Inputs {
		names[v.Name] = true
	}
	for _, n := range g.Nodes {
		names[n.Name] = true
		for _, v := range n.Outputs {
			if v != nil {
				names[v.Name] = true
			}
		}
	}
	fresh := func(base string) string {
		name := base
		for i := 1; names[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		names[name] = true
		return name
	}
	constant := func(base string, t *ir.Tensor) *ir.Value {
		t.Name = fresh(base)
		v := &ir.Value{Name: t.Name, Type: t.Type(), Const: t}
		g.Consts = append(g.Consts, v)
		return v
	}
	f32 := func(vals ...float32) *ir.Tensor {
		t := &ir.Tensor{DType: ir.F32, Raw: make([]byte, 4*len(vals))}
		if len(vals) != 1 {
			t.Shape = []int64{int64(len(vals))}
		}
		for i, f := range vals {
			binary.LittleEndian.PutUint32(t.Raw[4*i:], math.Float32bits(f))
		}
		return t
	}
	var qv, dqv int
	dq := func(name string, x, s, z *ir.Value, axis int, typ ir.Type) (*ir.Node, *ir.Value) {
		out := &ir.Value{Name: fresh(name), Type: typ}
		n := &ir.Node{Name: out.Name, Op: "DequantizeLinear", Version: dqv, Inputs: []*ir.Value{x, s, z}, Outputs: []*ir.Value{out}}
		if z == nil {
			n.Inputs = n.Inputs[:2]
		}
		if axis >= 0 {
			n.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: int64(axis)})
		}
		out.Def = n
		return n, out
	}
	seen := map[*ir.Value]*ir.Value{} // activation -> its DequantizeLinear
	replaced := map[*ir.Value]bool{}  // float weights and biases now dequantized
	var nodes []*ir.Node
	for _, n := range g.Nodes {
		xname, ok := reads[n.Name]
		x := n.Input(0)
		if !ok || !(n.Domain == "" || n.Domain == "ai.onnx") || x == nil || x.Name != xname || !n.Input(1).IsConst() {
			nodes = append(nodes, n)
			continue
		}
		rg, ok := ranges[xname]
		if !ok {
			nodes = append(nodes, n)
			continue
		}
		if qv == 0 {
			var err error
			if qv, err = version("QuantizeLinear"); err != nil {
				return err
			}
			if dqv, err = version("DequantizeLinear"); err != nil {
				return err
			}
		}
		xd := seen[x]
		if xd == nil {
			scale, zero := quantU8(rg[0], rg[1])
			s := constant(xname+"_scale", f32(scale))
			z := constant(xname+"_zero_point", &ir.Tensor{DType: ir.U8, Raw: []byte{zero}})
			qt := ir.Type{Kind: ir.TensorKind, Unranked: true} // unknown: inferred on import
			if x.Type.Known() {
				qt = ir.TensorType(ir.U8, x.Type.Shape)
			}
			q := &ir.Value{Name: fresh(xname + "_QuantizeLinear"), Type: qt}
			qn := &ir.Node{Name: q.Name, Op: "QuantizeLinear", Version: qv, Inputs: []*ir.Value{x, s, z}, Outputs: []*ir.Value{q}}
			q.Def = qn
			var dn *ir.Node
			dn, xd = dq(xname+"_DequantizeLinear", q, s, z, -1, x.Type)
			nodes = append(nodes, qn, dn)
			seen[x] = xd
		}
		sx := xd.Def.Inputs[1].Const
		sxv := math.Float32frombits(binary.LittleEndian.Uint32(sx.Raw))
		w := n.Inputs[1]
		if w.Const.DType != ir.F32 {
			nodes = append(nodes, n)
			continue
		}
		axis := 0 // the output channel axis of W
		if n.Op == "MatMul" || n.Op == "Gemm" && n.AttrInt("transB", 0) == 0 {
			axis = 1
		}
		wq, ws := quantPerAxis(w.Const, axis, qmax)
		chans := len(ws)
		wsv := constant(w.Name+"_scale", f32(ws...))
		wzv := constant(w.Name+"_zero_point", &ir.Tensor{DType: ir.I8, Shape: []int64{int64(chans)}, Raw: make([]byte, chans)})
		wqv := constant(w.Name+"_quantized", &ir.Tensor{DType: ir.I8, Shape: append([]int64(nil), w.Const.Shape...), Raw: wq})
		wn, wd := dq(w.Name+"_DequantizeLinear", wqv, wsv, wzv, axis, w.Type)
		nodes = append(nodes, wn)
		ins := append([]*ir.Value(nil), n.Inputs...)
		ins[0], ins[1] = xd, wd
		replaced[w] = true
		if b := n.Input(2); b != nil && b.IsConst() && b.Const.DType == ir.F32 && len(b.Const.Shape) == 1 && int(b.Const.Shape[0]) == chans && n.Op != "MatMul" &&
			(n.Op == "Conv" || n.AttrFloat("beta", 1) == 1) {
			bv := b.Const.Float64s()
			bs := make([]float32, chans)
			raw := make([]byte, 4*chans)
			for c := range bs {
				bs[c] = sxv * ws[c]
				q := math.RoundToEven(bv[c] / float64(bs[c]))
				binary.LittleEndian.PutUint32(raw[4*c:], uint32(int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, q)))))
			}
			bsv := constant(b.Name+"_scale", f32(bs...))
			bqv := constant(b.Name+"_quantized", &ir.Tensor{DType: ir.I32, Shape: []int64{int64(chans)}, Raw: raw})
			bn, bd := dq(b.Name+"_DequantizeLinear", bqv, bsv, nil, 0, b.Type)
			nodes = append(nodes, bn)
			ins[2] = bd
			replaced[b] = true
		}
		n.Inputs = ins
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	// Drop the float weights the rewrite replaced (and only those).
	used := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		used[v] = true
	}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, v := range n.Inputs {
				used[v] = true
			}
		}
	})
	consts := g.Consts[:0]
	for _, v := range g.Consts {
		if used[v] || !replaced[v] {
			consts = append(consts, v)
		}
	}
	g.Consts = consts
	return nil
}

// quantU8 is the quantize pass's activation quantization (passes/quantize.go
// quantU8Params): the range widened to hold 0, 255 steps.
func quantU8(lo, hi float32) (float32, uint8) {
	l, h := math.Min(float64(lo), 0), math.Max(float64(hi), 0)
	if h-l < 1e-30 {
		return 1, 0
	}
	scale := float32((h - l) / 255)
	z := math.RoundToEven(-l / float64(scale))
	return scale, uint8(math.Max(0, math.Min(255, z)))
}

// quantPerAxis quantizes the f32 tensor t to symmetric s8 in [-qmax, qmax]
// per index along axis (scale max|w|/qmax, as the quantize pass does).
func quantPerAxis(t *ir.Tensor, axis int, qmax float64) ([]byte, []float32) {
	w := t.Float64s()
	chans := int(t.Shape[axis])
	inner := 1
	for _, d := range t.Shape[axis+1:] {
		inner *= int(d)
	}
	ch := func(i int) int { return (i / inner) % chans }
	mx := make([]float64, chans)
	for i, v := range w {
		mx[ch(i)] = math.Max(mx[ch(i)], math.Abs(v))
	}
	scales := make([]float32, chans)
	for c := range scales {
		s := float32(mx[c] / qmax)
		if s == 0 || math.IsInf(float64(s), 0) || math.IsNaN(float64(s)) {
			s = 1
		}
		scales[c] = s
	}
	out := make([]byte, len(w))
	for i, v := range w {
		q := math.RoundToEven(v / float64(scales[ch(i)]))
		out[i] = byte(int8(math.Max(-qmax, math.Min(qmax, q))))
	}
	return out, scales
}
