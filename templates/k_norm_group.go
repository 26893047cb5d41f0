package templates

// GroupNormalization (opsets 18 and 21): X [N, C, D...] is split into
// num_groups groups of C/num_groups channels; each (n, group) is normalised
// to zero mean and unit variance, then scaled and shifted. Version 18 has
// one scale and bias per group, version 21 one per channel.
func GroupNormalization(n *Node) error {
	if ok, err := nnViaF32(n, GroupNormalization); ok {
		return err
	}
	X, S, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || S == nil || B == nil {
		return n.Errorf("needs inputs X, scale and bias")
	}
	G := int(n.Attrs.Int("num_groups", 0))
	if len(X.Shape) < 2 || G <= 0 || X.Shape[1]%G != 0 {
		return n.Errorf("input %v with num_groups %d", X.ShapeString(), G)
	}
	C := X.Shape[1]
	np := C
	if n.Version < 21 {
		np = G
	}
	if S.Len() != np || B.Len() != np {
		return n.Errorf("scale %v and bias %v, want %d values (version %d)", S.ShapeString(), B.ShapeString(), np, n.Version)
	}
	p := nnBuf[float64](n, 2, 2*np)
	nnParams(S, p[:np])
	nnParams(B, p[np:])
	nnResize(n.Out[0], X.DType, X.Shape...)
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	inner := nnProd(X.Shape[2:])
	cpg := C / G
	rows := X.Shape[0] * G
	switch x := X.Data.(type) {
	case []float32:
		y := n.Out[0].F32()
		normRows(x, y, rows, cpg*inner, eps, nil, nil, nil)
		groupNormAffine(y, X.Shape[0], C, inner, cpg, np == C, p[:np], p[np:])
	case []float64:
		y := n.Out[0].F64()
		normRows(x, y, rows, cpg*inner, eps, nil, nil, nil)
		groupNormAffine(y, X.Shape[0], C, inner, cpg, np == C, p[:np], p[np:])
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// groupNormAffine applies scale and bias per channel (perChannel) or per
// group of cpg channels.
func groupNormAffine[T nnFloat](y []T, N, C, inner, cpg int, perChannel bool, s, b []float64) {
	for i := 0; i < N; i++ {
		for c := 0; c < C; c++ {
			k := c
			if !perChannel {
				k = c / cpg
			}
			row := y[(i*C+c)*inner : (i*C+c+1)*inner]
			for j, v := range row {
				row[j] = T(float64(v)*s[k] + b[k])
			}
		}
	}
}
