package templates

// ScaleShift is cuvil::ScaleShift: activation(X*scale + shift) with one
// scale and shift per channel (axis 1), in one pass.
func ScaleShift(n *Node) error {
	if ok, err := nnViaF32(n, ScaleShift); ok {
		return err
	}
	X, S, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || S == nil || B == nil {
		return n.Errorf("needs inputs X, scale and shift")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	if len(X.Shape) < 2 {
		return n.Errorf("X %v must have rank >= 2", X.ShapeString())
	}
	if S.DType != X.DType || B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	N, C := X.Shape[0], X.Shape[1]
	nhwc := nhwcLayout(n)
	ldx := 0
	if nhwc {
		// Channels last (k_conv_nhwc.go): N is then every other axis.
		N, C = nnProd(X.Shape[:len(X.Shape)-1]), X.Shape[len(X.Shape)-1]
		ldx = C
		if ch := int(n.Attrs.Int("channels", 0)); ch != 0 {
			// The first ch channels of wider rows (concat-into).
			if ch < 0 || ch > C {
				return n.Errorf("channels %d must be in [1, %d]", ch, C)
			}
			C = ch
		}
	} else if n.Attrs.Int("channels", 0) != 0 {
		return n.Errorf("channels needs layout NHWC")
	}
	if S.Len() != C || B.Len() != C {
		return n.Errorf("scale %v and shift %v must have %d elements", S.ShapeString(), B.ShapeString(), C)
	}
	inner := nnProd(X.Shape[2:])
	Y := n.Out[0]
	if nhwc {
		sc := n.ScratchInts(len(X.Shape))
		copy(sc, X.Shape)
		sc[len(sc)-1] = C
		nnResize(Y, X.DType, sc...)
		switch x := X.Data.(type) {
		case []float32:
			// Rows split over the pool: each row is one vector
			// affine and one activation call, so an element's bits
			// depend on its row's length only, not on the split
			// (densenet's ScaleShift + Relu is ~15% of its run).
			t := parTaskOf[scaleShiftNHWCTask](n)
			*t = scaleShiftNHWCTask{x: x, scale: S.F32(), shift: B.F32(), y: Y.F32(), C: C, ldx: ldx, act: act}
			parts := 1
			if N*C >= parMinFlops/4 {
				parts = min(n.Pool.Threads(), N)
			}
			n.Pool.Run(parts, t)
			*t = scaleShiftNHWCTask{}
		case []float64:
			scaleShiftNHWC(x, S.F64(), B.F64(), Y.F64(), N, C, ldx, act)
		default:
			return n.Errorf("unsupported dtype %v", X.DType)
		}
		return nil
	}
	nnResize(Y, X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		scaleShift(x, S.F32(), B.F32(), Y.F32(), N, C, inner, act)
	case []float64:
		scaleShift(x, S.F64(), B.F64(), Y.F64(), N, C, inner, act)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func scaleShift[T nnFloat](x, scale, shift, y []T, N, C, inner int, act fusedAct) {
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			off := (b*C + c) * inner
			xr, yr := x[off:off+inner], y[off:off+inner]
			s, t := scale[c], shift[c]
			for i, v := range xr {
				yr[i] = v*s + t
			}
			fusedActRow(act, yr)
		}
	}
}

// scaleShiftNHWCTask is scaleShiftNHWC in float32, split by rows, each
// row x*scale+shift on the vector affine kernel (normAffine32 with mean 0,
// inv 1: exact steps) and its activation while the row is in L1.
type scaleShiftNHWCTask struct {
	x, scale, shift, y []float32
	C, ldx             int
	act                fusedAct
}

func (t *scaleShiftNHWCTask) runPart(i, parts int) {
	r0, r1 := parSplit(len(t.y)/t.C, parts, i, 1)
	C := t.C
	for p := r0; p < r1; p++ {
		yr := t.y[p*C : (p+1)*C]
		normAffine32(yr, t.x[p*t.ldx:p*t.ldx+C], t.scale, t.shift, 0, 1)
		fusedActRow(t.act, yr)
	}
}

// scaleShiftNHWC is cuvil::ScaleShift with layout=NHWC: the channel is the
// last axis of x (inner is the product of the others), x's rows ldx >= C
// apart (the first C channels of wider rows: concat-into).
func scaleShiftNHWC[T nnFloat](x, scale, shift, y []T, inner, C, ldx int, act fusedAct) {
	for p := 0; p < inner; p++ {
		xr, yr := x[p*ldx:p*ldx+C], y[p*C:(p+1)*C]
		for c, v := range xr {
			yr[c] = v*scale[c] + shift[c]
		}
	}
	fusedActRow(act, y[:inner*C])
}
