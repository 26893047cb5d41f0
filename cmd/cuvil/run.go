package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

func cmdRun(args []string, stdout io.Writer) error {
	fs := newFlags("run")
	model := fs.String("model", "", "ONNX model file")
	data := fs.String("data", "", "folder with input_K.pb files")
	out := fs.String("out", "cuvil-out", "folder for output_K.pb files")
	var pf pipelineFlags
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	fs.Var(&pf.winograd, "winograd", winogradUsage)
	targetFlags(fs)
	pf.quantFlags(fs)
	pf.precisionFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return usagef("-data is required")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	m, _, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	ds, err := readDataSet(*data, m, false)
	if err != nil {
		return err
	}
	it := &item{name: "model", model: m, sets: []*dataSet{ds}}
	if err := runItems(context.Background(), []*item{it}, 0); err != nil {
		return err
	}
	if it.err != nil {
		return it.err
	}
	if it.runErr[0] != "" {
		return fmt.Errorf("%s", it.runErr[0])
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for k, d := range it.got[0] {
		path := filepath.Join(*out, fmt.Sprintf("output_%d.pb", k))
		d.Name = m.Graph.Outputs[k].Name
		if d.Tensor != nil {
			d.Tensor.Name = d.Name
		}
		if err := onnx.WriteDataFile(path, d); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s %s\n", path, d.Name, describeData(d))
	}
	return nil
}

func cmdCheck(args []string, stdout io.Writer) error {
	fs := newFlags("check")
	model := fs.String("model", "", "ONNX model file")
	data := fs.String("data", "", "test data folder, or a folder of test_data_set_* folders")
	rtol := fs.Float64("rtol", 1e-3, "relative tolerance")
	atolF := atolFlag{v: -1, auto: true}
	fs.Var(&atolF, "atol", atolUsage)
	atol := &atolF.v
	var pf pipelineFlags
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	fs.Var(&pf.winograd, "winograd", winogradUsage)
	pf.quantFlags(fs)
	pf.precisionFlags(fs)
	fs.BoolVar(&pf.verify, "verify", false, "verify the IR before and after every pass")
	targetFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return usagef("-data is required")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	m, _, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	dirs, err := dataSets(*data)
	if err != nil {
		return err
	}
	it := &item{name: "model", model: m}
	for _, dir := range dirs {
		ds, err := readDataSet(dir, m, true)
		if err != nil {
			return err
		}
		it.sets = append(it.sets, ds)
	}
	if err := runItems(context.Background(), []*item{it}, 0); err != nil {
		return err
	}
	if it.err != nil {
		return it.err
	}
	failed := 0
	for s, ds := range it.sets {
		name := filepath.Base(ds.dir)
		if it.runErr[s] != "" {
			fmt.Fprintf(stdout, "%s: FAIL: %s\n", name, it.runErr[s])
			failed++
			continue
		}
		for k, want := range ds.outputs {
			status, ok := describeOutput(it.got[s], k, want, *rtol, *atol)
			if !ok {
				failed++
			}
			fmt.Fprintf(stdout, "%s: output %d %q: %s\n", name, k, m.Graph.Outputs[k].Name, status)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d mismatches (rtol %g, atol %s)", *model, failed, *rtol, &atolF)
	}
	return nil
}

// describeOutput compares output k and says how it went.
func describeOutput(got []*onnx.Data, k int, want *onnx.Data, rtol, atol float64) (string, bool) {
	if k >= len(got) {
		return fmt.Sprintf("FAIL: missing (the run produced %d outputs)", len(got)), false
	}
	d, err := compareData(got[k], want, rtol, atol)
	if err != nil {
		return "FAIL: " + err.Error(), false
	}
	s := fmt.Sprintf("max abs %.3g, max rel %.3g", d.maxAbs, d.maxRel)
	if d.bad > 0 {
		return fmt.Sprintf("FAIL: %s; %d of %d elements off, first: %s", s, d.bad, d.n, d.first), false
	}
	return "ok, " + s, true
}

// describeData says what a value is: dtype and shape of a tensor, and the
// same for each element of a sequence or an optional's value.
func describeData(d *onnx.Data) string {
	switch {
	case d == nil:
		return "none"
	case d.Kind == ir.TensorKind && d.Tensor != nil:
		return fmt.Sprintf("%s%v", d.Tensor.DType, d.Tensor.Shape)
	case d.Kind == ir.SequenceKind:
		parts := make([]string, len(d.Seq))
		for i, e := range d.Seq {
			parts[i] = describeData(e)
		}
		return "sequence[" + strings.Join(parts, " ") + "]"
	case d.Kind == ir.OptionalKind:
		if d.Opt == nil {
			return "optional(none)"
		}
		return "optional(" + describeData(d.Opt) + ")"
	case d.Kind == ir.MapKind && d.Keys != nil && d.Values != nil:
		return fmt.Sprintf("map(%s,%s)[%d]", d.Keys.DType, d.Values.DType, d.Keys.NumElements())
	}
	return d.Kind.String()
}
