package templates

import "math"

// RMSNormalization is ONNX RMSNormalization (opset 23):
// Y = X / sqrt(mean(X², over axes axis..) + epsilon) * scale, the scale
// broadcasting to X's trailing dims from axis; Y has the scale's dtype.
// It computes in float64 (stash_type float32 or wider).
func RMSNormalization(n *Node) error {
	X, S := n.Input(0), n.Input(1)
	if X == nil || S == nil {
		return n.Errorf("needs inputs X and scale")
	}
	if !tfFloat(X.DType) || !tfFloat(S.DType) {
		return n.Errorf("unsupported dtypes %v, %v", X.DType, S.DType)
	}
	r := len(X.Shape)
	axis, err := nnAxis(n, n.Attrs.Int("axis", -1), r)
	if err != nil {
		return err
	}
	inner := nnProd(X.Shape[axis:])
	rows := nnProd(X.Shape[:axis])
	sc := tfBuf(n, 0, X.Len()+inner+S.Len())
	x, scale, raw := sc[:X.Len()], sc[X.Len():X.Len()+inner], sc[X.Len()+inner:]
	tfRead(X, x)
	tfRead(S, raw)
	if err := tfBroadcast(n, scale, raw, S.Shape, X.Shape[axis:]); err != nil {
		return err
	}
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	for i := 0; i < rows; i++ {
		row := x[i*inner : (i+1)*inner]
		var ss float64
		for _, v := range row {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(inner)+eps)
		for j, v := range row {
			row[j] = v * inv * scale[j]
		}
	}
	tfWrite(n.Out[0], S.DType, x, X.Shape...)
	return nil
}

// tfBroadcast expands src (shape ss) to dst of shape ds by numpy
// broadcasting (ss right-aligned against ds).
func tfBroadcast(n *Node, dst, src []float64, ss, ds []int) error {
	if len(ss) > len(ds) {
		return n.Errorf("shape %v does not broadcast to %v", ss, ds)
	}
	r := len(ds)
	str := n.ScratchInts(r)
	acc := 1
	for i := r - 1; i >= 0; i-- {
		j := i - (r - len(ss))
		str[i] = 0
		if j < 0 {
			continue
		}
		switch ss[j] {
		case ds[i]:
			str[i] = acc
		case 1:
		default:
			return n.Errorf("shape %v does not broadcast to %v", ss, ds)
		}
		acc *= ss[j]
	}
	for e := range dst {
		rem, off := e, 0
		for i := r - 1; i >= 0; i-- {
			off += rem % ds[i] * str[i]
			rem /= ds[i]
		}
		dst[e] = src[off]
	}
	return nil
}
