package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// diff summarises how far an output is from its reference.
type diff struct {
	maxAbs, maxRel float64
	bad            int    // elements outside the tolerance
	first          string // the first of them, described
	n              int    // elements compared
}

// compareData checks a tensor, sequence or optional against its
// reference: the same kind; sequences of the same length whose tensors
// compare elementwise (as compare does); optionals both none, or both some
// with values that compare. Structural mismatches are errors naming where
// they are; element differences accumulate in the diff.
func compareData(got, want *onnx.Data, rtol, atol float64) (diff, error) {
	var d diff
	err := compareInto(&d, got, want, rtol, atol, "")
	return d, err
}

func compareInto(d *diff, got, want *onnx.Data, rtol, atol float64, where string) error {
	at := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if where != "" {
			msg = where + ": " + msg
		}
		return errors.New(msg)
	}
	if got == nil {
		return at("missing value")
	}
	if got.Kind != want.Kind {
		return at("a %s, want a %s", got.Kind, want.Kind)
	}
	switch want.Kind {
	case ir.TensorKind:
		e, err := compare(got.Tensor, want.Tensor, rtol, atol)
		if err != nil {
			return at("%v", err)
		}
		d.maxAbs = math.Max(d.maxAbs, e.maxAbs)
		d.maxRel = math.Max(d.maxRel, e.maxRel)
		if e.bad > 0 && d.bad == 0 {
			d.first = e.first
			if where != "" {
				d.first = where + ": " + e.first
			}
		}
		d.bad += e.bad
		d.n += int(want.Tensor.NumElements())
	case ir.SequenceKind:
		if len(got.Seq) != len(want.Seq) {
			return at("sequence of %d tensors, want %d", len(got.Seq), len(want.Seq))
		}
		for i := range want.Seq {
			if err := compareInto(d, got.Seq[i], want.Seq[i], rtol, atol, fmt.Sprintf("%ssequence element %d", prefix(where), i)); err != nil {
				return err
			}
		}
	case ir.OptionalKind:
		switch {
		case got.Opt == nil && want.Opt == nil:
		case got.Opt == nil:
			return at("optional is none, want a value")
		case want.Opt == nil:
			return at("optional has a value, want none")
		default:
			return compareInto(d, got.Opt, want.Opt, rtol, atol, prefix(where)+"optional value")
		}
	case ir.MapKind:
		return compareMap(d, got, want, rtol, atol, where)
	default:
		return at("cannot compare a %s", want.Kind)
	}
	return nil
}

// compareMap checks that got has exactly want's keys, in any order, and
// compares the values key by key (as one tensor in want's key order).
func compareMap(d *diff, got, want *onnx.Data, rtol, atol float64, where string) error {
	at := func(format string, args ...any) error {
		return errors.New(prefix(where) + "map: " + fmt.Sprintf(format, args...))
	}
	if got.Keys == nil || got.Values == nil || want.Keys == nil || want.Values == nil {
		return at("keys or values missing")
	}
	if got.Keys.DType != want.Keys.DType {
		return at("keys are %s, want %s", got.Keys.DType, want.Keys.DType)
	}
	key := func(t *ir.Tensor, i int) string {
		if t.DType == ir.String {
			return "s" + t.Strings[i]
		}
		return fmt.Sprint(t.Int64s()[i])
	}
	n := int(want.Keys.NumElements())
	if m := int(got.Keys.NumElements()); m != n {
		return at("%d entries, want %d", m, n)
	}
	pos := map[string]int{}
	for i := 0; i < n; i++ {
		pos[key(got.Keys, i)] = i
	}
	if got.Values.DType != want.Values.DType {
		return at("values are %s, want %s", got.Values.DType, want.Values.DType)
	}
	reordered := &ir.Tensor{DType: got.Values.DType, Shape: []int64{int64(n)}}
	size := got.Values.DType.Size()
	for i := 0; i < n; i++ {
		j, ok := pos[key(want.Keys, i)]
		if !ok {
			return at("key %s is missing", key(want.Keys, i))
		}
		if got.Values.DType == ir.String {
			reordered.Strings = append(reordered.Strings, got.Values.Strings[j])
		} else {
			reordered.Raw = append(reordered.Raw, got.Values.Raw[j*size:(j+1)*size]...)
		}
	}
	return compareInto(d, &onnx.Data{Kind: ir.TensorKind, Tensor: reordered}, &onnx.Data{Kind: ir.TensorKind, Tensor: want.Values}, rtol, atol, prefix(where)+"map values")
}

func prefix(where string) string {
	if where == "" {
		return ""
	}
	return where + ", "
}

// autoAtol is the scale of cuvil check's default absolute tolerance:
// atol = max(autoAtolFloor, autoAtolScale * max|want|) per output tensor.
// Float32 results of long reductions (a BERT layer's 768-term dot
// products, softmax over a sequence) carry errors of some 1e-6 relative to
// the output's magnitude wherever cancellation leaves an element near
// zero, which rtol alone (relative to the element) does not cover; ONNX
// Runtime's own tests accept them. A wrong kernel is off by far more.
const (
	autoAtolScale = 1e-5
	autoAtolFloor = 1e-7
)

const atolUsage = "absolute tolerance: a number, or auto (the default for check): max(1e-7, 1e-5 * the largest |element| of each expected output)"

// atolFlag is -atol: a number, or "auto" (stored as a negative v, which
// compare reads as "scale to the output").
type atolFlag struct {
	v    float64
	auto bool
}

func (a *atolFlag) String() string {
	if a == nil || a.auto {
		return "auto"
	}
	return fmt.Sprint(a.v)
}

func (a *atolFlag) Set(s string) error {
	if s == "auto" {
		a.auto, a.v = true, -1
		return nil
	}
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err != nil || f < 0 || math.IsNaN(f) {
		return fmt.Errorf("want auto or a number >= 0, have %q", s)
	}
	a.auto, a.v = false, f
	return nil
}

// scaledAtol is auto's tolerance for an expected output w.
func scaledAtol(w []float64) float64 {
	m := 0.0
	for _, x := range w {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			m = math.Max(m, math.Abs(x))
		}
	}
	return math.Max(autoAtolFloor, autoAtolScale*m)
}

// compare checks got against want elementwise: |got-want| <= atol +
// rtol*|want|; NaN matches NaN, an infinity matches the same infinity.
// A negative atol is scaled to want (scaledAtol).
// The dtypes and shapes must agree.
func compare(got, want *ir.Tensor, rtol, atol float64) (diff, error) {
	var d diff
	if got.DType != want.DType {
		return d, fmt.Errorf("dtype %s, want %s", got.DType, want.DType)
	}
	if !equalShape(got.Shape, want.Shape) {
		return d, fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	if want.DType == ir.String {
		for i := range want.Strings {
			if got.Strings[i] != want.Strings[i] {
				if d.bad == 0 {
					d.first = fmt.Sprintf("element %d is %q, want %q", i, got.Strings[i], want.Strings[i])
				}
				d.bad++
			}
		}
		return d, nil
	}
	g, w := got.Float64s(), want.Float64s()
	if atol < 0 {
		atol = scaledAtol(w)
	}
	for i := range w {
		a, b := g[i], w[i]
		var abs float64
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			if math.IsNaN(a) && math.IsNaN(b) {
				continue
			}
			abs = math.Inf(1)
		case math.IsInf(b, 0) || math.IsInf(a, 0):
			if a == b {
				continue
			}
			abs = math.Inf(1)
		default:
			abs = math.Abs(a - b)
		}
		d.maxAbs = math.Max(d.maxAbs, abs)
		if b != 0 {
			d.maxRel = math.Max(d.maxRel, abs/math.Abs(b))
		} else if abs != 0 {
			d.maxRel = math.Inf(1)
		}
		if !(abs <= atol+rtol*math.Abs(b)) {
			if d.bad == 0 {
				d.first = fmt.Sprintf("element %d is %g, want %g", i, a, b)
			}
			d.bad++
		}
	}
	return d, nil
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
