package templates

import "math"

// Helpers shared by the neural-network kernels (k_conv.go, k_gemm.go,
// k_pool.go, k_norm.go, k_reduce.go, k_softmax.go).

// nnFloat is the set of element types the float kernels compute in; f16 and
// bf16 tensors are widened to float32 first (see nnViaF32).
type nnFloat interface{ float32 | float64 }

// nnNum is every numeric element type a kernel may read natively.
type nnNum interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// nnCache is what the nn kernels keep in Node.Cache: typed scratch slots
// that survive between runs, and the shadow node used for f16/bf16.
type nnCache struct {
	slots  [6]any
	shadow *Node
	tmpIn  []Tensor
	tmpOut []Tensor
}

func nnCacheOf(n *Node) *nnCache {
	c, ok := n.Cache.(*nnCache)
	if !ok {
		c = &nnCache{}
		n.Cache = c
	}
	return c
}

// nnBuf returns a []T of length size kept in scratch slot `slot` of n;
// it allocates only when the slot is smaller than size.
func nnBuf[T any](n *Node, slot, size int) []T {
	c := nnCacheOf(n)
	if b, ok := c.slots[slot].([]T); ok && cap(b) >= size {
		return b[:size]
	}
	b := make([]T, size)
	c.slots[slot] = b
	return b
}

// nnIsHalf reports whether dt is stored as 16-bit float bits.
func nnIsHalf(dt DType) bool { return dt == F16 || dt == BF16 }

// nnViaF32 runs kernel k on a shadow of n whose f16/bf16 inputs are widened
// to float32, then narrows the shadow's float32 outputs back to the dtype
// of the first half input (other outputs, e.g. int64 indices, are copied).
// It reports false, doing nothing, when n has no half-precision input.
func nnViaF32(n *Node, k Kernel) (bool, error) { return nnViaF32Keep(n, k, 0) }

// nnViaF32Keep is nnViaF32 whose outputs in the bit set keep (1<<i) stay
// float32 (LayerNormalization's Mean and InvStdDev).
func nnViaF32Keep(n *Node, k Kernel, keep uint) (bool, error) {
	half := Undefined
	for _, t := range n.In {
		if t != nil && nnIsHalf(t.DType) {
			half = t.DType
			break
		}
	}
	if half == Undefined {
		return false, nil
	}
	c := nnCacheOf(n)
	if c.shadow == nil {
		c.shadow = &Node{}
	}
	s := c.shadow
	s.Name, s.Op, s.Version, s.Attrs = n.Name, n.Op, n.Version, n.Attrs
	if len(c.tmpIn) < len(n.In) {
		c.tmpIn = make([]Tensor, len(n.In))
		s.In = make([]*Tensor, len(n.In))
	}
	if len(c.tmpOut) < len(n.Out) {
		c.tmpOut = make([]Tensor, len(n.Out))
		s.Out = make([]*Tensor, len(n.Out))
	}
	s.In, s.Out = s.In[:len(n.In)], s.Out[:len(n.Out)]
	for i, t := range n.In {
		if t == nil || !nnIsHalf(t.DType) {
			s.In[i] = t
			continue
		}
		w := &c.tmpIn[i]
		nnResize(w, F32, t.Shape...)
		nnWiden(w.F32(), t.U16(), t.DType)
		s.In[i] = w
	}
	for i, t := range n.Out {
		if t == nil {
			s.Out[i] = nil
		} else {
			s.Out[i] = &c.tmpOut[i]
		}
	}
	if err := k(s); err != nil {
		return true, err
	}
	for i, t := range n.Out {
		if t == nil {
			continue
		}
		w := &c.tmpOut[i]
		if w.DType == F32 && keep&(1<<i) == 0 {
			nnResize(t, half, w.Shape...)
			nnNarrow(t.U16(), w.F32(), half)
			continue
		}
		nnResize(t, w.DType, w.Shape...)
		nnCopyData(t, w)
	}
	return true, nil
}

func nnWiden(dst []float32, src []uint16, dt DType) {
	if dt == BF16 {
		for i, h := range src {
			dst[i] = BF16ToF32(h)
		}
		return
	}
	for i, h := range src {
		dst[i] = F16ToF32(h)
	}
}

func nnNarrow(dst []uint16, src []float32, dt DType) {
	if dt == BF16 {
		for i, f := range src {
			dst[i] = F32ToBF16(f)
		}
		return
	}
	for i, f := range src {
		dst[i] = F32ToF16(f)
	}
}

// nnCopyData copies src's elements into dst, which has src's dtype and length.
func nnCopyData(dst, src *Tensor) {
	switch d := dst.Data.(type) {
	case []float32:
		copy(d, src.Data.([]float32))
	case []float64:
		copy(d, src.Data.([]float64))
	case []int64:
		copy(d, src.Data.([]int64))
	case []int32:
		copy(d, src.Data.([]int32))
	case []uint16:
		copy(d, src.Data.([]uint16))
	case []int8:
		copy(d, src.Data.([]int8))
	case []uint8:
		copy(d, src.Data.([]uint8))
	case []int16:
		copy(d, src.Data.([]int16))
	case []uint32:
		copy(d, src.Data.([]uint32))
	case []uint64:
		copy(d, src.Data.([]uint64))
	case []bool:
		copy(d, src.Data.([]bool))
	}
}

// nnAxis normalises a possibly negative axis for a tensor of rank r.
func nnAxis(n *Node, axis int64, r int) (int, error) {
	a := int(axis)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r && !(r == 0 && a == 0) {
		return 0, n.Errorf("axis %d out of range for rank %d", axis, r)
	}
	return a, nil
}

func nnProd(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// nnInts converts an int64 attribute list into n's int scratch, starting at
// offset off (so several lists can share it).
func nnIntsInto(dst []int, src []int64) {
	for i, v := range src {
		dst[i] = int(v)
	}
}

// nnTensorInts reads a 1-D integer tensor (int64 or int32) into dst.
func nnTensorInts(t *Tensor, dst []int) []int {
	dst = dst[:0]
	switch d := t.Data.(type) {
	case []int64:
		for _, v := range d {
			dst = append(dst, int(v))
		}
	case []int32:
		for _, v := range d {
			dst = append(dst, int(v))
		}
	}
	return dst
}

func nnSqrt[T nnFloat](x T) T { return T(math.Sqrt(float64(x))) }

// nnResize is Tensor.Resize that skips the call when t already has dtype dt
// and the right length: Resize re-boxes the slice into Data, which costs an
// allocation per run.
func nnResize(t *Tensor, dt DType, shape ...int) {
	if t.DType == dt && t.Data != nil && dataLen(t.Data) == nnProd(shape) {
		t.SetShape(shape)
		return
	}
	t.Resize(dt, shape...)
}

// nnWin is the geometry of a sliding window over nd spatial dims (Conv and
// the pools): kernel size, strides, dilations, begin/end pads and output
// size per dim. Its slices live in node scratch.
type nnWin struct{ k, s, d, pb, pe, out []int }

// nnWindow fills a window geometry for spatial input sizes in from the
// node's strides, dilations, pads and auto_pad attributes; kernel gives the
// kernel size per dim. ceil selects ceil_mode rounding of the output size
// (windows that would start in the end padding are dropped). sc must hold
// 6*len(in) ints.
func nnWindow(n *Node, in, kernel []int, ceil bool, sc []int) (nnWin, error) {
	nd := len(in)
	w := nnWin{k: sc[:nd], s: sc[nd : 2*nd], d: sc[2*nd : 3*nd], pb: sc[3*nd : 4*nd], pe: sc[4*nd : 5*nd], out: sc[5*nd : 6*nd]}
	copy(w.k, kernel)
	strides, dil, pads := n.Attrs.Ints("strides"), n.Attrs.Ints("dilations"), n.Attrs.Ints("pads")
	if len(strides) != 0 && len(strides) != nd || len(dil) != 0 && len(dil) != nd || len(pads) != 0 && len(pads) != 2*nd {
		return w, n.Errorf("strides %v, dilations %v or pads %v do not match %d spatial dims", strides, dil, pads, nd)
	}
	autoPad := n.Attrs.String("auto_pad", "NOTSET")
	for i := 0; i < nd; i++ {
		w.s[i], w.d[i], w.pb[i], w.pe[i] = 1, 1, 0, 0
		if strides != nil {
			w.s[i] = int(strides[i])
		}
		if dil != nil {
			w.d[i] = int(dil[i])
		}
		if w.s[i] < 1 || w.d[i] < 1 || w.k[i] < 1 {
			return w, n.Errorf("kernel %v, strides %v and dilations %v must be positive", kernel, strides, dil)
		}
		ek := (w.k[i]-1)*w.d[i] + 1
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			w.out[i] = (in[i] + w.s[i] - 1) / w.s[i]
			total := max(0, (w.out[i]-1)*w.s[i]+ek-in[i])
			if autoPad == "SAME_UPPER" {
				w.pb[i] = total / 2
			} else {
				w.pb[i] = (total + 1) / 2
			}
			w.pe[i] = total - w.pb[i]
			continue
		case "VALID":
		case "NOTSET", "":
			if pads != nil {
				w.pb[i], w.pe[i] = int(pads[i]), int(pads[i+nd])
			}
		default:
			return w, n.Errorf("unknown auto_pad %q", autoPad)
		}
		span := in[i] + w.pb[i] + w.pe[i] - ek
		if span < 0 {
			return w, n.Errorf("window of extent %d does not fit input size %d with pads %d+%d", ek, in[i], w.pb[i], w.pe[i])
		}
		w.out[i] = span/w.s[i] + 1
		if ceil && span%w.s[i] != 0 {
			w.out[i]++
			if (w.out[i]-1)*w.s[i] >= in[i]+w.pb[i] {
				w.out[i]--
			}
		}
	}
	return w, nil
}

// nnLowest is the smallest value of T (-Inf for floats).
func nnLowest[T nnNum]() T {
	var z T
	var v any
	switch any(z).(type) {
	case float32:
		v = float32(math.Inf(-1))
	case float64:
		v = math.Inf(-1)
	case int8:
		v = int8(math.MinInt8)
	case int16:
		v = int16(math.MinInt16)
	case int32:
		v = int32(math.MinInt32)
	case int64:
		v = int64(math.MinInt64)
	default:
		return 0 // unsigned
	}
	return v.(T)
}

// nnHighest is the largest value of T (+Inf for floats).
func nnHighest[T nnNum]() T {
	var z T
	var v any
	switch any(z).(type) {
	case float32:
		v = float32(math.Inf(1))
	case float64:
		v = math.Inf(1)
	case int8:
		v = int8(math.MaxInt8)
	case uint8:
		v = uint8(math.MaxUint8)
	case int16:
		v = int16(math.MaxInt16)
	case uint16:
		v = uint16(math.MaxUint16)
	case int32:
		v = int32(math.MaxInt32)
	case uint32:
		v = uint32(math.MaxUint32)
	case int64:
		v = int64(math.MaxInt64)
	case uint64:
		v = uint64(math.MaxUint64)
	}
	return v.(T)
}

// nnGrow returns b resized to n, reallocated only when it is too small.
func nnGrow(b []float32, n int) []float32 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]float32, n)
}
