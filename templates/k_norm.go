package templates

import "math"

// Normalisation kernels. Per-channel parameters are read into float64
// scratch so that v15 BatchNormalization's mixed parameter dtypes need no
// extra code paths.

// nnParams copies a float tensor into dst as float64.
func nnParams(t *Tensor, dst []float64) {
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []float64:
		copy(dst, d)
	}
}

// nnStore writes float64 values into t (float32 or float64).
func nnStore(t *Tensor, src []float64) {
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, src)
	}
}

// BatchNormalization is ONNX BatchNormalization (versions 1-15). Inference
// uses the given mean and variance; training (training_mode=1 from v14,
// or, before v14, when the optional mean/var outputs are requested) uses
// the batch statistics and writes the momentum-updated running mean and
// variance (then, before v14, the batch mean and variance). spatial=0
// (versions before 9) gives every position its own parameters.
func BatchNormalization(n *Node) error {
	if ok, err := nnViaF32(n, BatchNormalization); ok {
		return err
	}
	X := n.Input(0)
	if X == nil || len(n.In) < 5 || n.In[1] == nil || n.In[2] == nil || n.In[3] == nil || n.In[4] == nil {
		return n.Errorf("needs inputs X, scale, B, mean and var")
	}
	if len(X.Shape) < 2 {
		return n.Errorf("X %v must have rank at least 2", X.ShapeString())
	}
	N, C, inner := X.Shape[0], X.Shape[1], nnProd(X.Shape[2:])
	spatial := n.Version >= 9 || n.Attrs.Int("spatial", 1) != 0
	pc := C // parameters per tensor
	if !spatial {
		pc = C * inner
	}
	for i := 1; i < 5; i++ {
		if t := n.In[i]; t.Len() != pc || t.DType != F32 && t.DType != F64 {
			return n.Errorf("input %d is %v, want %d float values", i, t, pc)
		}
	}
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	mom := float64(n.Attrs.Float("momentum", 0.9))
	training := n.Version >= 14 && n.Attrs.Int("training_mode", 0) != 0 ||
		n.Version < 14 && len(n.Out) > 1 && n.Out[1] != nil && (n.Version >= 7 || n.Attrs.Int("is_test", 0) == 0)
	p := nnBuf[float64](n, 2, 6*pc)
	scale, bias, mean, vr, bm, bv := p[:pc], p[pc:2*pc], p[2*pc:3*pc], p[3*pc:4*pc], p[4*pc:5*pc], p[5*pc:]
	nnParams(n.In[1], scale)
	nnParams(n.In[2], bias)
	nnParams(n.In[3], mean)
	nnParams(n.In[4], vr)
	nnResize(n.Out[0], X.DType, X.Shape...)
	// step between parameter indices along the inner dims
	pstep := 0
	if !spatial {
		pstep = 1
	}
	if training {
		clear(bm)
		clear(bv)
		cnt := float64(N)
		if spatial {
			cnt *= float64(inner)
		}
		nnEach(X, func(i int, v float64) {
			c := (i / inner) % C
			bm[c*(1+pstep*(inner-1))+pstep*(i%inner)] += v
		})
		for i := range bm {
			bm[i] /= cnt
		}
		nnEach(X, func(i int, v float64) {
			c := (i / inner) % C
			j := c*(1+pstep*(inner-1)) + pstep*(i%inner)
			d := v - bm[j]
			bv[j] += d * d
		})
		for i := range bv {
			bv[i] /= cnt
		}
	}
	useM, useV := mean, vr
	if training {
		useM, useV = bm, bv
	}
	switch x := X.Data.(type) {
	case []float32:
		bnApply(x, n.Out[0].F32(), N, C, inner, pstep, scale, bias, useM, useV, eps)
	case []float64:
		bnApply(x, n.Out[0].F64(), N, C, inner, pstep, scale, bias, useM, useV, eps)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	if !training {
		return nil
	}
	// Running statistics, then (before v14) the batch statistics.
	for i := range mean {
		mean[i] = mean[i]*mom + bm[i]*(1-mom)
		vr[i] = vr[i]*mom + bv[i]*(1-mom)
	}
	outs := [4][]float64{mean, vr, bm, bv}
	for i := 1; i < len(n.Out) && i <= 4; i++ {
		if o := n.Out[i]; o != nil {
			nnResize(o, n.In[3].DType, n.In[3].Shape...)
			nnStore(o, outs[i-1])
		}
	}
	return nil
}

// nnEach calls f(i, x[i]) for each element of a float tensor.
func nnEach(t *Tensor, f func(i int, v float64)) {
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			f(i, float64(v))
		}
	case []float64:
		for i, v := range d {
			f(i, v)
		}
	}
}

func bnApply[T nnFloat](x, y []T, N, C, inner, pstep int, scale, bias, mean, vr []float64, eps float64) {
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			off := (b*C + c) * inner
			for i := 0; i < inner; i++ {
				j := c*(1+pstep*(inner-1)) + pstep*i
				a := scale[j] / math.Sqrt(vr[j]+eps)
				y[off+i] = T(float64(x[off+i])*a + (bias[j] - mean[j]*a))
			}
		}
	}
}

// InstanceNormalization is ONNX InstanceNormalization (versions 1-6).
func InstanceNormalization(n *Node) error {
	if ok, err := nnViaF32(n, InstanceNormalization); ok {
		return err
	}
	X, S, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || S == nil || B == nil {
		return n.Errorf("needs inputs input, scale and B")
	}
	if len(X.Shape) < 2 || S.Len() != X.Shape[1] || B.Len() != X.Shape[1] {
		return n.Errorf("input %v with scale %v and B %v", X.ShapeString(), S.ShapeString(), B.ShapeString())
	}
	C := X.Shape[1]
	p := nnBuf[float64](n, 2, 2*C)
	nnParams(S, p[:C])
	nnParams(B, p[C:])
	nnResize(n.Out[0], X.DType, X.Shape...)
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	inner := nnProd(X.Shape[2:])
	switch x := X.Data.(type) {
	case []float32:
		normRows(x, n.Out[0].F32(), X.Shape[0]*C, inner, eps, func(r int) (float64, float64) { return p[r%C], p[C+r%C] }, nil, nil)
	case []float64:
		normRows(x, n.Out[0].F64(), X.Shape[0]*C, inner, eps, func(r int) (float64, float64) { return p[r%C], p[C+r%C] }, nil, nil)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// normRows normalises each of rows contiguous rows of size inner to zero
// mean and unit variance, then applies the affine a*y+b from ab(row)
// (when ab is not nil) or per-column scale/bias (LayerNormalization).
func normRows[T nnFloat](x, y []T, rows, inner int, eps float64, ab func(r int) (float64, float64), meanOut, invOut []float64) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
		var s float64
		for _, v := range xr {
			s += float64(v)
		}
		mean := s / float64(inner)
		var ss float64
		for _, v := range xr {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(inner)+eps)
		if meanOut != nil {
			meanOut[r], invOut[r] = mean, inv
		}
		a, b := 1.0, 0.0
		if ab != nil {
			a, b = ab(r)
		}
		for i, v := range xr {
			yr[i] = T((float64(v)-mean)*inv*a + b)
		}
	}
}

// LayerNormalization is ONNX LayerNormalization (version 17): normalises
// over the dims from axis on, then Scale and optional B (broadcast as a
// suffix of those dims); optional Mean and InvStdDev outputs are float32.
func LayerNormalization(n *Node) error {
	if ok, err := nnViaF32Keep(n, LayerNormalization, 6); ok {
		return err
	}
	X, S, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || S == nil {
		return n.Errorf("needs inputs X and Scale")
	}
	r := len(X.Shape)
	axis, err := nnAxis(n, n.Attrs.Int("axis", -1), r)
	if err != nil {
		return err
	}
	rows, inner := nnProd(X.Shape[:axis]), nnProd(X.Shape[axis:])
	for _, t := range []*Tensor{S, B} {
		if t != nil && (t.Len() == 0 || inner%t.Len() != 0 || len(t.Shape) > r-axis) {
			return n.Errorf("%v does not broadcast to the normalised shape %v", t.ShapeString(), X.Shape[axis:])
		}
	}
	nS, nB := S.Len(), 0
	if B != nil {
		nB = B.Len()
	}
	p := nnBuf[float64](n, 2, nS+nB+2*rows)
	scale, bias, mean, inv := p[:nS], p[nS:nS+nB], p[nS+nB:nS+nB+rows], p[nS+nB+rows:]
	nnParams(S, scale)
	if B != nil {
		nnParams(B, bias)
	}
	nnResize(n.Out[0], X.DType, X.Shape...)
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	switch x := X.Data.(type) {
	case []float32:
		if nS == inner && (B == nil || nB == inner) && S.DType == F32 && (B == nil || B.DType == F32) {
			var b []float32
			if B != nil {
				b = B.F32()
			}
			layerNorm32(n, x, nil, S.F32(), b, n.Out[0].F32(), nil, rows, inner, eps, mean, inv)
			break
		}
		layerNorm(x, n.Out[0].F32(), rows, inner, eps, scale, bias, mean, inv)
	case []float64:
		layerNorm(x, n.Out[0].F64(), rows, inner, eps, scale, bias, mean, inv)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	sshape := n.ScratchInts(r)
	copy(sshape, X.Shape)
	for i := axis; i < r; i++ {
		sshape[i] = 1
	}
	for i, src := range [][]float64{mean, inv} {
		if i+1 < len(n.Out) && n.Out[i+1] != nil {
			dt := F32
			if X.DType == F64 {
				dt = F64
			}
			nnResize(n.Out[i+1], dt, sshape...)
			nnStore(n.Out[i+1], src)
		}
	}
	return nil
}

func layerNorm[T nnFloat](x, y []T, rows, inner int, eps float64, scale, bias, mean, inv []float64) {
	normRows(x, y, rows, inner, eps, nil, mean, inv)
	for r := 0; r < rows; r++ {
		yr := y[r*inner : (r+1)*inner]
		for i := range yr {
			v := float64(yr[i]) * scale[i%len(scale)]
			if len(bias) > 0 {
				v += bias[i%len(bias)]
			}
			yr[i] = T(v)
		}
	}
}

// LRN is ONNX LRN (versions 1-13): across-channel local response
// normalisation, y = x / (bias + alpha/size * sum x^2)^beta over channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)].
func LRN(n *Node) error {
	if ok, err := nnViaF32(n, LRN); ok {
		return err
	}
	X := n.Input(0)
	if X == nil || len(X.Shape) < 2 {
		return n.Errorf("needs an input of rank at least 2")
	}
	size := int(n.Attrs.Int("size", 0))
	if size < 1 {
		return n.Errorf("size attribute must be positive, have %d", size)
	}
	alpha := float64(n.Attrs.Float("alpha", 1e-4))
	beta := float64(n.Attrs.Float("beta", 0.75))
	bias := float64(n.Attrs.Float("bias", 1))
	nnResize(n.Out[0], X.DType, X.Shape...)
	N, C, inner := X.Shape[0], X.Shape[1], nnProd(X.Shape[2:])
	lo, hi := (size-1)/2, (size-1)-(size-1)/2
	switch x := X.Data.(type) {
	case []float32:
		lrnT(x, n.Out[0].F32(), N, C, inner, lo, hi, alpha/float64(size), beta, bias)
	case []float64:
		lrnT(x, n.Out[0].F64(), N, C, inner, lo, hi, alpha/float64(size), beta, bias)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func lrnT[T nnFloat](x, y []T, N, C, inner, lo, hi int, a, beta, bias float64) {
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			c0, c1 := max(0, c-lo), min(C-1, c+hi)
			for i := 0; i < inner; i++ {
				var ss float64
				for cc := c0; cc <= c1; cc++ {
					v := float64(x[(b*C+cc)*inner+i])
					ss += v * v
				}
				j := (b*C+c)*inner + i
				y[j] = T(float64(x[j]) / math.Pow(bias+a*ss, beta))
			}
		}
	}
}

// LpNormalization is ONNX LpNormalization (version 1): x divided by its
// L1 or L2 norm along axis (default -1).
func LpNormalization(n *Node) error {
	if ok, err := nnViaF32(n, LpNormalization); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input")
	}
	axis, err := nnAxis(n, n.Attrs.Int("axis", -1), len(X.Shape))
	if err != nil {
		return err
	}
	p := n.Attrs.Int("p", 2)
	if p != 1 && p != 2 {
		return n.Errorf("p must be 1 or 2, have %d", p)
	}
	nnResize(n.Out[0], X.DType, X.Shape...)
	outer, dim, inner := nnProd(X.Shape[:axis]), X.Shape[axis], nnProd(X.Shape[axis+1:])
	switch x := X.Data.(type) {
	case []float32:
		lpNormT(x, n.Out[0].F32(), outer, dim, inner, p)
	case []float64:
		lpNormT(x, n.Out[0].F64(), outer, dim, inner, p)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func lpNormT[T nnFloat](x, y []T, outer, dim, inner int, p int64) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*dim*inner + in
			var s float64
			for i := 0; i < dim; i++ {
				v := float64(x[base+i*inner])
				if p == 1 {
					s += math.Abs(v)
				} else {
					s += v * v
				}
			}
			if p == 2 {
				s = math.Sqrt(s)
			}
			for i := 0; i < dim; i++ {
				if s == 0 { // a zero vector stays zero (the reference's where=norm != 0)
					y[base+i*inner] = 0
					continue
				}
				y[base+i*inner] = T(float64(x[base+i*inner]) / s)
			}
		}
	}
}

// MeanVarianceNormalization is ONNX MeanVarianceNormalization (versions
// 9-13): (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over axes (default
// [0, 2, 3]).
func MeanVarianceNormalization(n *Node) error {
	if ok, err := nnViaF32(n, MeanVarianceNormalization); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input")
	}
	r := len(X.Shape)
	sc := n.ScratchInts(3 * r)
	red, ostride, idx := sc[:r], sc[r:2*r], sc[2*r:]
	clear(red)
	axes := n.Attrs.Ints("axes")
	if axes == nil {
		axes = []int64{0, 2, 3}
	}
	for _, a := range axes {
		ax, err := nnAxis(n, a, r)
		if err != nil {
			return err
		}
		red[ax] = 1
	}
	st, groups := 1, 1
	for i := r - 1; i >= 0; i-- {
		if red[i] == 1 {
			ostride[i] = 0
		} else {
			ostride[i] = st
			st *= X.Shape[i]
			groups *= X.Shape[i]
		}
	}
	acc := nnBuf[float64](n, 2, 2*groups)
	nnResize(n.Out[0], X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		mvnT(x, n.Out[0].F32(), X.Shape, ostride, idx, acc)
	case []float64:
		mvnT(x, n.Out[0].F64(), X.Shape, ostride, idx, acc)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func mvnT[T nnFloat](x, y []T, shape, ostride, idx []int, acc []float64) {
	g := len(acc) / 2
	s, ss := acc[:g], acc[g:]
	clear(acc)
	reduceWalk(x, shape, ostride, idx, func(v T, o int) {
		s[o] += float64(v)
		ss[o] += float64(v) * float64(v)
	})
	cnt := float64(len(x) / max(g, 1))
	for i := range s {
		m := s[i] / cnt
		s[i] = m
		ss[i] = math.Sqrt(max(ss[i]/cnt-m*m, 0)) + 1e-9
	}
	clear(idx)
	o := 0
	for i, v := range x {
		y[i] = T((float64(v) - s[o]) / ss[o])
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			o += ostride[d]
			if idx[d] < shape[d] {
				break
			}
			o -= ostride[d] * idx[d]
			idx[d] = 0
		}
	}
}

// layerNorm32 normalises rows of y = x (+ skip, when not nil; skip is one
// row or all of them) with the vector kernels: y = (y-mean)*inv*scale +
// bias, scale and bias (nil: none) of length inner. sum, when not nil,
// receives x + skip; mean and inv (nil: not wanted) each row's statistics.
// Rows are split over the pool.
func layerNorm32(n *Node, x, skip, scale, bias, y, sum []float32, rows, inner int, eps float64, mean, inv []float64) {
	t := parTaskOf[lnTask](n)
	*t = lnTask{x: x, skip: skip, scale: scale, bias: bias, y: y, sum: sum, rows: rows, inner: inner, eps: eps, mean: mean, inv: inv}
	parts := 1
	if rows*inner >= lnParMin {
		parts = min(n.Pool.Threads(), rows)
	}
	n.Pool.Run(parts, t)
	*t = lnTask{}
}

// lnParMin is the least elements a layer norm splits over the pool for.
const lnParMin = 16 << 10

// lnTask is one layer norm split into blocks of rows.
type lnTask struct {
	x, skip, scale, bias, y, sum []float32
	rows, inner                  int
	eps                          float64
	mean, inv                    []float64
}

func (t *lnTask) runPart(i, parts int) {
	lo, hi := parSplit(t.rows, parts, i, 1)
	inner := t.inner
	scale := t.scale[:inner]
	for r := lo; r < hi; r++ {
		xr, yr := t.x[r*inner:(r+1)*inner], t.y[r*inner:(r+1)*inner]
		var s float32
		src := xr
		if t.skip != nil {
			sr := t.skip[:inner]
			if len(t.skip) != inner {
				sr = t.skip[r*inner : (r+1)*inner]
			}
			s = addSum32(yr, xr, sr)
			if t.sum != nil {
				copy(t.sum[r*inner:(r+1)*inner], yr)
			}
			src = yr
		} else {
			s = sum32(xr)
		}
		mean := s / float32(inner)
		ss := sumSqDev32(src, mean)
		inv := float32(1 / math.Sqrt(float64(ss)/float64(inner)+t.eps))
		if t.mean != nil {
			t.mean[r], t.inv[r] = float64(mean), float64(inv)
		}
		normAffine32(yr, src, scale, t.bias, mean, inv)
	}
}
