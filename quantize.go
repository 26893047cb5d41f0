package cuvil

import (
	"context"
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
		if len(opts.Calibrate) > 0 || len(opts.QuantizeSkip) > 0 {
			return nil, fmt.Errorf("cuvil: calibration data or quantize-skip given without -quantize int8")
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
	return &passes.QuantConfig{Ranges: ranges, Skip: opts.QuantizeSkip}, nil
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
