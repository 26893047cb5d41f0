package main

import (
	"math"
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

// TestCheckDefaultTolerance: check's default (rtol 1e-3, atol auto)
// accepts the float32 rounding of a correct BERT (max abs 1.9e-6 on
// outputs of magnitude ~1, near-zero elements included), which the ONNX
// backend tests' atol 1e-7 refuses, and still refuses real errors.
func TestCheckDefaultTolerance(t *testing.T) {
	var a atolFlag
	if err := a.Set("auto"); err != nil || a.v >= 0 {
		t.Fatalf("auto: %v, v %v", err, a.v)
	}
	// A hidden-state-like output: values of magnitude ~1, some near zero.
	n := 768
	want := make([]float32, n)
	for i := range want {
		want[i] = float32(math.Sin(float64(i)*0.37)) * 1.3
	}
	want[5], want[6] = 3e-5, -2e-6
	ref := ir.NewTensorF32([]int64{1, int64(n)}, want)
	perturb := func(f func(i int, v float32) float32) *ir.Tensor {
		g := make([]float32, n)
		for i, v := range want {
			g[i] = f(i, v)
		}
		return ir.NewTensorF32([]int64{1, int64(n)}, g)
	}
	bert := perturb(func(i int, v float32) float32 { // +-1.9e-6 everywhere
		if i%2 == 0 {
			return v + 1.9e-6
		}
		return v - 1.9e-6
	})
	for _, c := range []struct {
		name string
		got  *ir.Tensor
		atol float64
		ok   bool
	}{
		{"bert rounding, auto", bert, a.v, true},
		{"bert rounding, atol 1e-7", bert, 1e-7, false},
		{"bert rounding, atol 1e-5", bert, 1e-5, true},
		{"wrong element of magnitude 1, auto", perturb(func(i int, v float32) float32 {
			if i == 100 {
				return v * 1.01
			}
			return v
		}), a.v, false},
		{"wrong near-zero element, auto", perturb(func(i int, v float32) float32 {
			if i == 5 {
				return 1e-3
			}
			return v
		}), a.v, false},
		{"sign flip, auto", perturb(func(i int, v float32) float32 { return -v }), a.v, false},
	} {
		d, err := compare(c.got, ref, 1e-3, c.atol)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ok := d.bad == 0; ok != c.ok {
			t.Errorf("%s: accepted %v (max abs %.3g, %d bad), want %v", c.name, ok, d.maxAbs, d.bad, c.ok)
		}
	}
	// The scale follows the output: 1000x larger values tolerate 1000x
	// larger absolute errors near zero; a tiny output falls back to 1e-7.
	if got := scaledAtol([]float64{-1000, 2}); got != 1e-2 {
		t.Errorf("scaledAtol(magnitude 1000) = %g, want 1e-2", got)
	}
	if got := scaledAtol([]float64{1e-9, 0, math.Inf(1)}); got != 1e-7 {
		t.Errorf("scaledAtol(tiny) = %g, want 1e-7", got)
	}
	for _, bad := range []string{"x", "-1", "NaN"} {
		if err := a.Set(bad); err == nil {
			t.Errorf("-atol %s accepted", bad)
		}
	}
	if err := a.Set("1e-5"); err != nil || a.v != 1e-5 || a.String() != "1e-05" {
		t.Errorf("-atol 1e-5: %v, %v %q", err, a.v, a.String())
	}
}
