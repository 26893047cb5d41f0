package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// skipError marks a test the harness cannot express, with the reason.
type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

// dataSet is one folder of input_K.pb (and, for checks, output_K.pb): each
// value a tensor, sequence or optional, read as the model declares it.
type dataSet struct {
	dir     string
	inputs  []*onnx.Data
	inTypes []ir.DType // per input, the innermost tensors' dtype (for empty sequences and none optionals)
	outputs []*onnx.Data
}

// tensorData wraps a tensor as a test data value.
func tensorData(t *ir.Tensor) *onnx.Data {
	return &onnx.Data{Kind: ir.TensorKind, Name: t.Name, Tensor: t}
}

// dataSets returns dir's test_data_set_* folders, or dir itself when it has
// none.
func dataSets(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var sets []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "test_data_set_") {
			sets = append(sets, filepath.Join(dir, e.Name()))
		}
	}
	sort.Slice(sets, func(i, j int) bool { return setNumber(sets[i]) < setNumber(sets[j]) })
	if len(sets) == 0 {
		sets = []string{dir}
	}
	return sets, nil
}

func setNumber(dir string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "test_data_set_"))
	if err != nil {
		return 1 << 30
	}
	return n
}

// countFiles counts prefix_K.pb files for K = 0, 1, ... without gaps.
func countFiles(dir, prefix string) int {
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, n))); err != nil {
			return n
		}
		n++
	}
}

// readDataSet reads the inputs the model's graph inputs ask for, in order,
// and (when outputs) the reference outputs. Each file is read as the kind
// of value (tensor, sequence, optional) the model declares for it; outputs
// by their inferred type.
func readDataSet(dir string, m *ir.Model, outputs bool) (*dataSet, error) {
	ds := &dataSet{dir: dir}
	g := m.Graph
	if n := countFiles(dir, "input"); n != len(g.Inputs) {
		return nil, fmt.Errorf("%s: has %d input_K.pb files, the model has %d inputs (initializers excluded)", dir, n, len(g.Inputs))
	}
	for k, v := range g.Inputs {
		d, err := readValue(filepath.Join(dir, fmt.Sprintf("input_%d.pb", k)), "input", v)
		if err != nil {
			return nil, err
		}
		ds.inputs = append(ds.inputs, d)
		ds.inTypes = append(ds.inTypes, gen.ElemDType(v.Type))
	}
	if !outputs {
		return ds, nil
	}
	if n := countFiles(dir, "output"); n != len(g.Outputs) {
		return nil, fmt.Errorf("%s: has %d output_K.pb files, the model has %d outputs", dir, n, len(g.Outputs))
	}
	for k, v := range g.Outputs {
		d, err := readValue(filepath.Join(dir, fmt.Sprintf("output_%d.pb", k)), "output", v)
		if err != nil {
			return nil, err
		}
		ds.outputs = append(ds.outputs, d)
	}
	return ds, nil
}

// readValue reads one data file as the kind of value v's type says.
func readValue(path, what string, v *ir.Value) (*onnx.Data, error) {
	switch v.Type.Kind {
	case ir.TensorKind, ir.SequenceKind, ir.OptionalKind, ir.MapKind:
	default:
		return nil, skipError{fmt.Sprintf("%s %q is a %s, the harness exchanges tensors, sequences, optionals and maps only", what, v.Name, v.Type)}
	}
	d, err := onnx.ReadDataFile(path, v.Type.Kind)
	if err != nil {
		return nil, err
	}
	if err := checkKinds(d, v.Type); err != nil {
		return nil, fmt.Errorf("%s: %s %q: %v", path, what, v.Name, err)
	}
	asDeclared(d, gen.ElemDType(v.Type))
	return d, nil
}

// checkKinds reports a value whose nesting contradicts the declared type
// (where the type says).
func checkKinds(d *onnx.Data, t ir.Type) error {
	if d.Kind != t.Kind {
		return fmt.Errorf("holds a %s, the model declares a %s", d.Kind, t)
	}
	if t.Elem == nil || t.Kind == ir.MapKind {
		return nil
	}
	for _, e := range d.Seq {
		if err := checkKinds(e, *t.Elem); err != nil {
			return err
		}
	}
	if d.Opt != nil {
		return checkKinds(d.Opt, *t.Elem)
	}
	return nil
}

// asDeclared reinterprets uint16 tensors as bfloat16 when the model
// declares bfloat16 (dt, the innermost dtype): ONNX's backend test data
// stores bfloat16 values as their uint16 bits.
func asDeclared(d *onnx.Data, dt ir.DType) {
	switch {
	case d == nil:
	case d.Kind == ir.TensorKind:
		if d.Tensor.DType == ir.U16 && dt == ir.BF16 {
			c := *d.Tensor
			c.DType = ir.BF16
			d.Tensor = &c
		}
	case d.Kind == ir.SequenceKind:
		for _, e := range d.Seq {
			asDeclared(e, dt)
		}
	case d.Kind == ir.OptionalKind:
		asDeclared(d.Opt, dt)
	}
}

// item is one model to run on some data sets.
type item struct {
	name  string
	model *ir.Model
	sets  []*dataSet
	err   error // import, compile or data failure: the item failed
	skip  string

	got [][]*onnx.Data // per data set, the outputs
	// runErr per data set, when the run failed.
	runErr []string
}

// buildTarget is the harness target of run, check and conformance
// (-goarch, -tags: targetFlags).
var buildTarget harness.Target

// targetFlags adds -goarch and -tags to fs, filling buildTarget.
func targetFlags(fs *flag.FlagSet) {
	fs.StringVar(&buildTarget.GOARCH, "goarch", "", "build the harness for this GOARCH (arm64, arm (GOARM 7), s390x, riscv64...) and run it under qemu-user (qemu-<arch>-static); wasm builds for GOOS=wasip1 and runs under Node.js's WASI")
	fs.StringVar(&buildTarget.Tags, "tags", "", "go build tags of the harness (e.g. purego: the pure-Go kernels)")
}

// runItems builds one harness for all items that have no error, runs each
// data set once and reads back the outputs. Build and run failures are
// recorded on the items.
func runItems(ctx context.Context, items []*item, threads int) error {
	h, err := harness.New()
	if err != nil {
		return err
	}
	h.Target = buildTarget
	defer h.Close()
	for _, it := range items {
		if it.err != nil || it.skip != "" {
			continue
		}
		if err := addModel(h, it.name, it.model); err != nil {
			it.err = err
		}
	}
	if len(h.Keys()) == 0 {
		return nil
	}
	exe, err := h.Build(ctx)
	if err != nil {
		return err
	}
	type ref struct {
		it  *item
		set int
		out string
	}
	var jobs []harness.Job
	var refs []ref
	for _, it := range items {
		if reason, failed := h.Failed[it.name]; failed {
			it.err = errors.New(reason)
		}
		if it.err != nil || it.skip != "" {
			continue
		}
		it.got = make([][]*onnx.Data, len(it.sets))
		it.runErr = make([]string, len(it.sets))
		for s, ds := range it.sets {
			dir := filepath.Join(h.Dir, "data", strconv.Itoa(len(jobs)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			job := harness.Job{Model: it.name, Out: dir}
			for k, d := range ds.inputs {
				path := filepath.Join(dir, fmt.Sprintf("input_%d.cuvt", k))
				dt := ir.Undefined
				if k < len(ds.inTypes) {
					dt = ds.inTypes[k]
				}
				if err := harness.WriteDataFile(path, d, dt); err != nil {
					return err
				}
				job.Inputs = append(job.Inputs, path)
			}
			jobs = append(jobs, job)
			refs = append(refs, ref{it, s, dir})
		}
	}
	results, err := h.Run(ctx, exe, jobs, threads)
	if err != nil {
		return err
	}
	for i, r := range results {
		it, s := refs[i].it, refs[i].set
		if r.Err != "" {
			it.runErr[s] = r.Err
			continue
		}
		for k := 0; k < r.Outputs; k++ {
			t, _, err := harness.ReadDataFile(filepath.Join(refs[i].out, fmt.Sprintf("output_%d.cuvt", k)))
			if err != nil {
				it.runErr[s] = err.Error()
				break
			}
			it.got[s] = append(it.got[s], t)
		}
	}
	return nil
}

// addModel generates a model's package, turning a panic in gen into an
// error.
func addModel(h *harness.Harness, name string, m *ir.Model) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gen: panic: %v", r)
		}
	}()
	return h.Add(name, m)
}
