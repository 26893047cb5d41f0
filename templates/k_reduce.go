package templates

import "math"

// Reduce* and ArgMax/ArgMin. Axes come from the axes attribute or, when
// present, the second input (ReduceSum from v13, the others from v18);
// empty axes reduce everything unless noop_with_empty_axes is set, in
// which case each element is reduced alone.

const (
	redSum = iota
	redMean
	redMax
	redMin
	redProd
	redL1
	redL2
	redLogSum
	redLogSumExp
	redSumSquare
)

func ReduceSum(n *Node) error       { return reduce(n, ReduceSum, redSum) }
func ReduceMean(n *Node) error      { return reduce(n, ReduceMean, redMean) }
func ReduceMax(n *Node) error       { return reduce(n, ReduceMax, redMax) }
func ReduceMin(n *Node) error       { return reduce(n, ReduceMin, redMin) }
func ReduceProd(n *Node) error      { return reduce(n, ReduceProd, redProd) }
func ReduceL1(n *Node) error        { return reduce(n, ReduceL1, redL1) }
func ReduceL2(n *Node) error        { return reduce(n, ReduceL2, redL2) }
func ReduceLogSum(n *Node) error    { return reduce(n, ReduceLogSum, redLogSum) }
func ReduceLogSumExp(n *Node) error { return reduce(n, ReduceLogSumExp, redLogSumExp) }
func ReduceSumSquare(n *Node) error { return reduce(n, ReduceSumSquare, redSumSquare) }

// reduceGeom reads the axes and fills, in node scratch, the output shape
// and the output stride of each input dim (0 along reduced axes).
func reduceGeom(n *Node, X *Tensor) (shape, ostride []int, err error) {
	r := len(X.Shape)
	sc := n.ScratchInts(4*r + 1)
	axes := sc[:0]
	if t := n.Input(1); t != nil {
		if t.Len() > r {
			return nil, nil, n.Errorf("%d axes for rank %d", t.Len(), r)
		}
		axes = nnTensorInts(t, sc[:0:r])
	} else if a := n.Attrs.Ints("axes"); a != nil {
		if len(a) > r {
			return nil, nil, n.Errorf("axes %v for rank %d", a, r)
		}
		axes = sc[:len(a)]
		nnIntsInto(axes, a)
	}
	red := sc[r : 2*r]
	noop := len(axes) == 0 && n.Attrs.Int("noop_with_empty_axes", 0) != 0
	for i := range red {
		red[i] = 0
		if len(axes) == 0 && !noop {
			red[i] = 1
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += r
		}
		if a < 0 || a >= r {
			return nil, nil, n.Errorf("axis out of range for rank %d", r)
		}
		red[a] = 1
	}
	keep := n.Attrs.Int("keepdims", 1) != 0
	shape = sc[2*r : 2*r : 3*r]
	ostride = sc[3*r : 4*r]
	st := 1
	for i := r - 1; i >= 0; i-- {
		if red[i] == 1 {
			ostride[i] = 0
		} else {
			ostride[i] = st
			st *= X.Shape[i]
		}
	}
	for i := 0; i < r; i++ {
		if red[i] == 0 {
			shape = append(shape, X.Shape[i])
		} else if keep {
			shape = append(shape, 1)
		}
	}
	return shape, ostride, nil
}

func reduce(n *Node, self Kernel, op int) error {
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input data")
	}
	shape, ostride, err := reduceGeom(n, X)
	if err != nil {
		return err
	}
	Y := n.Out[0]
	Y.Resize(X.DType, shape...)
	idx := nnBuf[int](n, 1, len(X.Shape))
	acc := nnBuf[float64](n, 2, Y.Len())
	floatAcc := op == redL2 || op == redLogSum || op == redLogSumExp
	switch x := X.Data.(type) {
	case []float32:
		reduceFloat(x, Y.F32(), acc, X.Shape, ostride, idx, op)
	case []float64:
		reduceFloat(x, Y.F64(), acc, X.Shape, ostride, idx, op)
	case []int32:
		reduceIntT(x, Y.I32(), acc, X.Shape, ostride, idx, op, floatAcc)
	case []int64:
		reduceIntT(x, Y.I64(), acc, X.Shape, ostride, idx, op, floatAcc)
	case []uint32:
		reduceIntT(x, Y.Data.([]uint32), acc, X.Shape, ostride, idx, op, floatAcc)
	case []uint64:
		reduceIntT(x, Y.Data.([]uint64), acc, X.Shape, ostride, idx, op, floatAcc)
	case []int8:
		reduceIntT(x, Y.I8(), acc, X.Shape, ostride, idx, op, floatAcc)
	case []uint8:
		reduceIntT(x, Y.U8(), acc, X.Shape, ostride, idx, op, floatAcc)
	case []bool:
		if op != redMax && op != redMin {
			return n.Errorf("unsupported dtype %v", X.DType)
		}
		reduceBool(x, Y.Data.([]bool), X.Shape, ostride, idx, op == redMax)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// reduceBool is ReduceMax (any) and ReduceMin (all) of booleans (v20);
// an empty reduction gives false for max and true for min.
func reduceBool(x, y []bool, shape, ostride, idx []int, isMax bool) {
	for i := range y {
		y[i] = !isMax
	}
	clear(idx)
	o := 0
	r := len(shape)
	for _, v := range x {
		if isMax {
			y[o] = y[o] || v
		} else {
			y[o] = y[o] && v
		}
		for d := r - 1; d >= 0; d-- {
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

// reduceWalk visits every input element with its output offset.
func reduceWalk[T nnNum](x []T, shape, ostride, idx []int, f func(v T, o int)) {
	clear(idx)
	o := 0
	r := len(shape)
	for _, v := range x {
		f(v, o)
		for d := r - 1; d >= 0; d-- {
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

func reduceInit(op int) float64 {
	switch op {
	case redMax, redLogSumExp:
		return math.Inf(-1)
	case redMin:
		return math.Inf(1)
	case redProd:
		return 1
	}
	return 0
}

// reduceFloat accumulates in float64.
func reduceFloat[T nnFloat](x, y []T, acc []float64, shape, ostride, idx []int, op int) {
	init := reduceInit(op)
	for i := range acc {
		acc[i] = init
	}
	count := 0
	if len(y) > 0 {
		count = len(x) / len(y)
	}
	if op == redLogSumExp {
		// Pass 1: the maximum, subtracted before exponentiating.
		reduceWalk(x, shape, ostride, idx, func(v T, o int) {
			if float64(v) > acc[o] {
				acc[o] = float64(v)
			}
		})
		for i := range y {
			y[i] = T(acc[i])
		}
		clear(acc)
		reduceWalk(x, shape, ostride, idx, func(v T, o int) {
			m := float64(y[o])
			if !math.IsInf(m, 0) {
				acc[o] += math.Exp(float64(v) - m)
			} else {
				acc[o] += math.Exp(float64(v))
			}
		})
		for i := range y {
			m := float64(y[i])
			if math.IsInf(m, 0) {
				m = 0
			}
			y[i] = T(m + math.Log(acc[i]))
		}
		return
	}
	reduceWalk(x, shape, ostride, idx, func(v T, o int) {
		f := float64(v)
		switch op {
		case redSum, redMean, redLogSum:
			acc[o] += f
		case redMax:
			if f > acc[o] || f != f {
				acc[o] = f
			}
		case redMin:
			if f < acc[o] || f != f {
				acc[o] = f
			}
		case redProd:
			acc[o] *= f
		case redL1:
			acc[o] += math.Abs(f)
		case redL2, redSumSquare:
			acc[o] += f * f
		}
	})
	for i := range y {
		a := acc[i]
		switch op {
		case redMean:
			a /= float64(count)
		case redL2:
			a = math.Sqrt(a)
		case redLogSum:
			a = math.Log(a)
		}
		y[i] = T(a)
	}
}

// reduceIntT accumulates integers natively (sums wrap like the dtype);
// L2, LogSum and LogSumExp go through float64 (floatAcc).
func reduceIntT[T nnNum](x, y []T, acc []float64, shape, ostride, idx []int, op int, floatAcc bool) {
	count := 0
	if len(y) > 0 {
		count = len(x) / len(y)
	}
	if floatAcc {
		init := reduceInit(op)
		for i := range acc {
			acc[i] = init
		}
		if op == redLogSumExp {
			reduceWalk(x, shape, ostride, idx, func(v T, o int) { acc[o] = math.Max(acc[o], float64(v)) })
			for i := range y {
				y[i] = T(acc[i])
			}
			clear(acc)
			reduceWalk(x, shape, ostride, idx, func(v T, o int) { acc[o] += math.Exp(float64(v) - float64(y[o])) })
			for i := range y {
				y[i] = T(float64(y[i]) + math.Log(acc[i]))
			}
			return
		}
		reduceWalk(x, shape, ostride, idx, func(v T, o int) {
			if op == redL2 {
				acc[o] += float64(v) * float64(v)
			} else {
				acc[o] += float64(v)
			}
		})
		for i := range y {
			if op == redL2 {
				y[i] = T(math.Sqrt(acc[i]))
			} else {
				y[i] = T(math.Log(acc[i]))
			}
		}
		return
	}
	var init T
	switch op {
	case redMax:
		init = nnLowest[T]()
	case redMin:
		init = nnHighest[T]()
	case redProd:
		init = 1
	}
	for i := range y {
		y[i] = init
	}
	reduceWalk(x, shape, ostride, idx, func(v T, o int) {
		switch op {
		case redSum, redMean:
			y[o] += v
		case redMax:
			y[o] = max(y[o], v)
		case redMin:
			y[o] = min(y[o], v)
		case redProd:
			y[o] *= v
		case redL1:
			if v < 0 {
				v = -v
			}
			y[o] += v
		case redSumSquare:
			y[o] += v * v
		}
	})
	if op == redMean && count > 0 {
		for i := range y {
			y[i] /= T(count)
		}
	}
}

// ArgMax is ONNX ArgMax (versions 1-13): int64 indices along axis,
// keepdims, select_last_index (v12+).
func ArgMax(n *Node) error { return argMinMax(n, ArgMax, true) }

// ArgMin is ONNX ArgMin (versions 1-13).
func ArgMin(n *Node) error { return argMinMax(n, ArgMin, false) }

func argMinMax(n *Node, self Kernel, isMax bool) error {
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input data")
	}
	r := len(X.Shape)
	axis, err := nnAxis(n, n.Attrs.Int("axis", 0), r)
	if err != nil {
		return err
	}
	keep := n.Attrs.Int("keepdims", 1) != 0
	shape := n.ScratchInts(r)[:0]
	for i, d := range X.Shape {
		if i != axis {
			shape = append(shape, d)
		} else if keep {
			shape = append(shape, 1)
		}
	}
	n.Out[0].Resize(I64, shape...)
	outer, dim, inner := nnProd(X.Shape[:axis]), X.Shape[axis], nnProd(X.Shape[axis+1:])
	last := n.Attrs.Int("select_last_index", 0) != 0
	y := n.Out[0].I64()
	switch x := X.Data.(type) {
	case []float32:
		argT(x, y, outer, dim, inner, isMax, last)
	case []float64:
		argT(x, y, outer, dim, inner, isMax, last)
	case []int8:
		argT(x, y, outer, dim, inner, isMax, last)
	case []uint8:
		argT(x, y, outer, dim, inner, isMax, last)
	case []int16:
		argT(x, y, outer, dim, inner, isMax, last)
	case []int32:
		argT(x, y, outer, dim, inner, isMax, last)
	case []int64:
		argT(x, y, outer, dim, inner, isMax, last)
	case []uint32:
		argT(x, y, outer, dim, inner, isMax, last)
	case []uint64:
		argT(x, y, outer, dim, inner, isMax, last)
	default:
		if X.DType == U16 {
			argT(X.U16(), y, outer, dim, inner, isMax, last)
			break
		}
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func argT[T nnNum](x []T, y []int64, outer, dim, inner int, isMax, last bool) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*dim*inner + in
			best, at := x[base], 0
			for i := 1; i < dim; i++ {
				v := x[base+i*inner]
				better := v > best
				if !isMax {
					better = v < best
				}
				if better || last && v == best {
					best, at = v, i
				}
			}
			y[o*inner+in] = int64(at)
		}
	}
}
