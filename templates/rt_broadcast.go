package templates

// Strided iteration shared by the elementwise and shape kernels. A walk
// describes up to four operands laid over one index space (dims): operand
// k's element at index (i0..ir) sits at base[k] + sum(i_j * st[k][j]). A
// broadcast operand has stride 0 along the dims it repeats; a transposed
// or sliced one has permuted or stepped (possibly negative) strides. Dims
// that every operand can walk as one are merged first, so the inner loop is
// as long as it can be. Everything lives in fixed arrays: building and
// walking a walk never allocates.

// ewMaxRank bounds the rank the kernels in this group accept.
const ewMaxRank = 16

type ewWalk struct {
	rank int
	nops int
	dims [ewMaxRank]int
	st   [4][ewMaxRank]int
	base [4]int
}

// ewShape is a fixed-capacity shape, so shapes computed by kernels stay on
// the stack.
type ewShape struct {
	n int
	d [ewMaxRank]int
}

func (s *ewShape) s() []int { return s.d[:s.n] }

func (s *ewShape) set(shape []int) {
	s.n = copy(s.d[:], shape)
}

// ewBroadcastShape computes the multidirectional (numpy) broadcast of the
// given shapes into out.
func ewBroadcastShape(out *ewShape, shapes ...[]int) bool {
	r := 0
	for _, s := range shapes {
		if len(s) > r {
			r = len(s)
		}
	}
	if r > ewMaxRank {
		return false
	}
	out.n = r
	for i := 0; i < r; i++ {
		out.d[i] = 1
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			o := &out.d[off+i]
			switch {
			case d == *o:
			case *o == 1:
				*o = d
			case d == 1:
			default:
				return false
			}
		}
	}
	return true
}

// ewSize is the element count of shape.
func ewSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// initBroadcast lays out a contiguous output of shape out (operand 0) and
// each input (operands 1..) broadcast to it. Every input must broadcast to
// out.
func (w *ewWalk) initBroadcast(out []int, ins ...[]int) {
	w.rank = len(out)
	w.nops = 1 + len(ins)
	copy(w.dims[:], out)
	w.base = [4]int{}
	ewContig(&w.st[0], out)
	for k, s := range ins {
		st := &w.st[k+1]
		off := len(out) - len(s)
		for j := 0; j < off; j++ {
			st[j] = 0
		}
		acc := 1
		for j := len(s) - 1; j >= 0; j-- {
			if s[j] == 1 && out[off+j] != 1 {
				st[off+j] = 0
			} else {
				st[off+j] = acc
			}
			acc *= s[j]
		}
	}
	w.coalesce()
}

// ewContig writes row-major strides for shape.
func ewContig(st *[ewMaxRank]int, shape []int) {
	acc := 1
	for j := len(shape) - 1; j >= 0; j-- {
		st[j] = acc
		acc *= shape[j]
	}
}

// coalesce drops unit dims and merges neighbours that all operands walk
// contiguously. A zero dim makes the whole walk empty (rank stays, dims 0).
func (w *ewWalk) coalesce() {
	for j := 0; j < w.rank; j++ {
		if w.dims[j] == 0 {
			w.rank = 1
			w.dims[0] = 0
			return
		}
	}
	r := 0
	for j := 0; j < w.rank; j++ {
		if w.dims[j] == 1 {
			continue
		}
		if r > 0 {
			ok := true
			for k := 0; k < w.nops; k++ {
				if w.st[k][r-1] != w.st[k][j]*w.dims[j] {
					ok = false
					break
				}
			}
			if ok {
				w.dims[r-1] *= w.dims[j]
				for k := 0; k < w.nops; k++ {
					w.st[k][r-1] = w.st[k][j]
				}
				continue
			}
		}
		w.dims[r] = w.dims[j]
		for k := 0; k < w.nops; k++ {
			w.st[k][r] = w.st[k][j]
		}
		r++
	}
	if r == 0 { // a single element
		w.dims[0] = 1
		for k := 0; k < w.nops; k++ {
			w.st[k][0] = 1
		}
		r = 1
	}
	w.rank = r
}

// inner returns the length of the innermost run and each operand's stride
// along it.
func (w *ewWalk) inner() (n int, s0, s1, s2, s3 int) {
	j := w.rank - 1
	return w.dims[j], w.st[0][j], w.st[1][j], w.st[2][j], w.st[3][j]
}

// ewIter visits the start offsets of every innermost run of a walk.
type ewIter struct {
	w     *ewWalk
	idx   [ewMaxRank]int
	off   [4]int
	begun bool
}

func (w *ewWalk) iter() ewIter {
	return ewIter{w: w, off: w.base}
}

func (it *ewIter) next() bool {
	w := it.w
	if !it.begun {
		it.begun = true
		return w.dims[w.rank-1] > 0
	}
	for d := w.rank - 2; d >= 0; d-- {
		it.idx[d]++
		for k := 0; k < w.nops; k++ {
			it.off[k] += w.st[k][d]
		}
		if it.idx[d] < w.dims[d] {
			return true
		}
		for k := 0; k < w.nops; k++ {
			it.off[k] -= w.st[k][d] * w.dims[d]
		}
		it.idx[d] = 0
	}
	return false
}

// ewCopyWalk copies operand 1 into operand 0 along a two-operand walk.
func ewCopyWalk[T any](w *ewWalk, dst, src []T) {
	n, sd, ss, _, _ := w.inner()
	if sd == 1 && ss == 1 && w.rank >= 2 {
		// Contiguous runs: visit blocks of the two inner dims and copy
		// their runs in a loop (a permute that keeps the last dim, such
		// as a head split: one iterator step per block, not per run).
		j := w.rank - 2
		m, md, ms := w.dims[j], w.st[0][j], w.st[1][j]
		ow := *w
		ow.rank--
		for it := ow.iter(); it.next(); {
			o, i := it.off[0], it.off[1]
			for a := 0; a < m; a++ {
				copy(dst[o+a*md:o+a*md+n], src[i+a*ms:i+a*ms+n])
			}
		}
		return
	}
	for it := w.iter(); it.next(); {
		o, i := it.off[0], it.off[1]
		if sd == 1 && ss == 1 {
			copy(dst[o:o+n], src[i:i+n])
			continue
		}
		for k := 0; k < n; k++ {
			dst[o+k*sd] = src[i+k*ss]
		}
	}
}

// ewCopyWalkAny runs ewCopyWalk on two tensors' data of the same Go type.
func ewCopyWalkAny(w *ewWalk, dst, src any) {
	switch s := src.(type) {
	case []float32:
		ewCopyWalk(w, dst.([]float32), s)
	case []float64:
		ewCopyWalk(w, dst.([]float64), s)
	case []uint16:
		ewCopyWalk(w, dst.([]uint16), s)
	case []int8:
		ewCopyWalk(w, dst.([]int8), s)
	case []uint8:
		ewCopyWalk(w, dst.([]uint8), s)
	case []int16:
		ewCopyWalk(w, dst.([]int16), s)
	case []int32:
		ewCopyWalk(w, dst.([]int32), s)
	case []int64:
		ewCopyWalk(w, dst.([]int64), s)
	case []uint32:
		ewCopyWalk(w, dst.([]uint32), s)
	case []uint64:
		ewCopyWalk(w, dst.([]uint64), s)
	case []bool:
		ewCopyWalk(w, dst.([]bool), s)
	case []string:
		ewCopyWalk(w, dst.([]string), s)
	default:
		panic("templates: unsupported tensor data")
	}
}
