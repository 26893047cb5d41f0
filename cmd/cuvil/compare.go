package main

import (
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
)

// diff summarises how far an output is from its reference.
type diff struct {
	maxAbs, maxRel float64
	bad            int    // elements outside the tolerance
	first          string // the first of them, described
}

// compare checks got against want elementwise: |got-want| <= atol +
// rtol*|want|; NaN matches NaN, an infinity matches the same infinity.
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
