package main

import (
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

func TestCompareData(t *testing.T) {
	ten := func(v ...float32) *onnx.Data { return tensorData(ir.NewTensorF32([]int64{int64(len(v))}, v)) }
	seq := func(es ...*onnx.Data) *onnx.Data { return &onnx.Data{Kind: ir.SequenceKind, Seq: es} }
	opt := func(e *onnx.Data) *onnx.Data { return &onnx.Data{Kind: ir.OptionalKind, Opt: e} }
	cases := []struct {
		name      string
		got, want *onnx.Data
		err       string // substring of the error, "" for none
		bad, n    int
	}{
		{"equal sequences", seq(ten(1, 2), ten(3)), seq(ten(1, 2), ten(3)), "", 0, 3},
		{"element off", seq(ten(1, 2), ten(4)), seq(ten(1, 2), ten(3)), "", 1, 3},
		{"length", seq(ten(1)), seq(ten(1), ten(2)), "sequence of 1 tensors, want 2", 0, 0},
		{"element shape", seq(ten(1, 2)), seq(ten(1)), "sequence element 0: shape", 0, 0},
		{"none vs none", opt(nil), opt(nil), "", 0, 0},
		{"none vs some", opt(nil), opt(ten(1)), "optional is none, want a value", 0, 0},
		{"some vs none", opt(ten(1)), opt(nil), "optional has a value, want none", 0, 0},
		{"some equal", opt(seq(ten(5))), opt(seq(ten(5))), "", 0, 1},
		{"kind", ten(1), seq(ten(1)), "a tensor, want a seq", 0, 0},
		{"missing", nil, ten(1), "missing value", 0, 0},
	}
	for _, c := range cases {
		d, err := compareData(c.got, c.want, 1e-3, 1e-7)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		case c.err == "" && (d.bad != c.bad || d.n != c.n):
			t.Errorf("%s: %d of %d elements bad, want %d of %d", c.name, d.bad, d.n, c.bad, c.n)
		}
	}
	d, _ := compareData(seq(ten(1), ten(9)), seq(ten(1), ten(3)), 1e-3, 1e-7)
	if !strings.HasPrefix(d.first, "sequence element 1: ") {
		t.Errorf("first mismatch %q does not say where it is", d.first)
	}
}
