package templates

import (
	"math"
)

// CuvilLayerNorm is cuvil::LayerNorm: LayerNormalization for models whose
// opset predates it (the fuse-layernorm pass makes it from the
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add chain).
func CuvilLayerNorm(n *Node) error {
	if len(n.Out) > 1 {
		return n.Errorf("has %d outputs, want 1", len(n.Out))
	}
	return LayerNormalization(n)
}

// SkipLayerNorm is cuvil::SkipLayerNorm: LayerNorm(X + Skip) over the last
// axis, one row at a time (the sum never leaves cache unless Sum is asked
// for).
func SkipLayerNorm(n *Node) error {
	if ok, err := nnViaF32(n, SkipLayerNorm); ok {
		return err
	}
	X, Skip, S, B := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || Skip == nil || S == nil {
		return n.Errorf("needs inputs X, Skip and Scale")
	}
	r := len(X.Shape)
	if r < 1 {
		return n.Errorf("X must have rank >= 1")
	}
	if Skip.DType != X.DType || S.DType != X.DType || B != nil && B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	inner := X.Shape[r-1]
	rows := nnProd(X.Shape[:r-1])
	if Skip.Len() != X.Len() && Skip.Len() != inner {
		return n.Errorf("Skip %v must have X's shape %v or its last dim", Skip.ShapeString(), X.ShapeString())
	}
	if S.Len() != inner || B != nil && B.Len() != inner {
		return n.Errorf("Scale %v and B must have %d elements", S.ShapeString(), inner)
	}
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	nnResize(n.Out[0], X.DType, X.Shape...)
	var sum *Tensor
	if len(n.Out) > 1 && n.Out[1] != nil {
		sum = n.Out[1]
		nnResize(sum, X.DType, X.Shape...)
	}
	switch x := X.Data.(type) {
	case []float32:
		var sb, bb []float32
		if sum != nil {
			sb = sum.F32()
		}
		if B != nil {
			bb = B.F32()
		}
		layerNorm32(n, x, Skip.F32(), S.F32(), bb, n.Out[0].F32(), sb, rows, inner, eps, nil, nil)
	case []float64:
		var sb, bb []float64
		if sum != nil {
			sb = sum.F64()
		}
		if B != nil {
			bb = B.F64()
		}
		skipLayerNorm(x, Skip.F64(), S.F64(), bb, n.Out[0].F64(), sb, rows, inner, eps)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func skipLayerNorm[T nnFloat](x, skip, scale, bias, y, sum []T, rows, inner int, eps float64) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
		sr := skip[:inner]
		if len(skip) != inner {
			sr = skip[r*inner : (r+1)*inner]
		}
		var s float64
		for i, v := range xr {
			t := v + sr[i]
			yr[i] = t
			s += float64(t)
		}
		if sum != nil {
			copy(sum[r*inner:(r+1)*inner], yr)
		}
		mean := s / float64(inner)
		var ss float64
		for _, v := range yr {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(inner)+eps)
		for i, v := range yr {
			o := (float64(v) - mean) * inv * float64(scale[i])
			if bias != nil {
				o += float64(bias[i])
			}
			yr[i] = T(o)
		}
	}
}
