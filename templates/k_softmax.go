package templates

import "math"

// Softmax, LogSoftmax and Hardmax. Before version 13 the input is coerced
// to 2-D at axis (default 1) and each row of prod(shape[axis:]) elements
// is normalised; from version 13 the single axis (default -1) is.

const (
	smSoftmax = iota
	smLogSoftmax
	smHardmax
)

// Softmax is ONNX Softmax (versions 1-13).
func Softmax(n *Node) error { return softmaxLike(n, Softmax, smSoftmax) }

// LogSoftmax is ONNX LogSoftmax (versions 1-13).
func LogSoftmax(n *Node) error { return softmaxLike(n, LogSoftmax, smLogSoftmax) }

// Hardmax is ONNX Hardmax (versions 1-13): 1 at the first maximum.
func Hardmax(n *Node) error { return softmaxLike(n, Hardmax, smHardmax) }

func softmaxLike(n *Node, self Kernel, kind int) error {
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	r := len(X.Shape)
	def := int64(-1)
	if n.Version < 13 {
		def = 1
	}
	axis, err := nnAxis(n, n.Attrs.Int("axis", def), max(r, 1))
	if err != nil {
		return err
	}
	outer, dim, inner := 1, 1, 1
	if r > 0 {
		outer = nnProd(X.Shape[:axis])
		if n.Version < 13 {
			dim = nnProd(X.Shape[axis:])
		} else {
			dim, inner = X.Shape[axis], nnProd(X.Shape[axis+1:])
		}
	}
	nnResize(n.Out[0], X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		if kind == smSoftmax && inner == 1 && dim > 0 {
			softmaxRows32(n, x, n.Out[0].F32(), outer, dim)
			return nil
		}
		softmaxT(x, n.Out[0].F32(), outer, dim, inner, kind)
	case []float64:
		softmaxT(x, n.Out[0].F64(), outer, dim, inner, kind)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func softmaxT[T nnFloat](x, y []T, outer, dim, inner, kind int) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*dim*inner + in
			mx, at := x[base], 0
			for i := 1; i < dim; i++ {
				if v := x[base+i*inner]; v > mx {
					mx, at = v, i
				}
			}
			switch kind {
			case smHardmax:
				for i := 0; i < dim; i++ {
					y[base+i*inner] = 0
				}
				if dim > 0 {
					y[base+at*inner] = 1
				}
			case smSoftmax:
				var sum T
				for i := 0; i < dim; i++ {
					e := T(math.Exp(float64(x[base+i*inner] - mx)))
					y[base+i*inner] = e
					sum += e
				}
				inv := 1 / sum
				for i := 0; i < dim; i++ {
					y[base+i*inner] *= inv
				}
			case smLogSoftmax:
				var sum float64
				for i := 0; i < dim; i++ {
					sum += math.Exp(float64(x[base+i*inner] - mx))
				}
				l := mx + T(math.Log(sum))
				for i := 0; i < dim; i++ {
					y[base+i*inner] = x[base+i*inner] - l
				}
			}
		}
	}
}

// softmaxRowsTask is a float32 softmax over contiguous rows, split over
// rows.
type softmaxRowsTask struct {
	x, y []float32
	rows int
	dim  int
}

func (t *softmaxRowsTask) runPart(i, parts int) {
	r0, r1 := parSplit(t.rows, parts, i, 1)
	for r := r0; r < r1; r++ {
		softmaxRow32(t.y[r*t.dim:(r+1)*t.dim], t.x[r*t.dim:(r+1)*t.dim])
	}
}

// softmaxRow32 is one row's softmax with the vector kernels: the maximum,
// exp(x-max) and its sum in one pass, then the scaling.
func softmaxRow32(y, x []float32) {
	s := expSum32(y, x, max32(x))
	scale32(y, 1/s)
}

// softmaxRows32 is softmax over rows of dim contiguous float32 values,
// spread over n's pool when there is enough work.
func softmaxRows32(n *Node, x, y []float32, rows, dim int) {
	parts := 1
	if rows*dim >= 1<<14 {
		parts = min(n.Pool.Threads(), rows)
	}
	t := parTaskOf[softmaxRowsTask](n)
	*t = softmaxRowsTask{x: x, y: y, rows: rows, dim: dim}
	n.Pool.Run(parts, t)
	*t = softmaxRowsTask{}
}
