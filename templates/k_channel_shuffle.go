package templates

import (
	"math"
	"unsafe"
)

// CuvilChannelShuffle is cuvil::ChannelShuffle (passes/shuffle.go): its
// inputs concatenated along axis (one input: itself), then axis's C
// channels viewed as [groups, C/groups] and transposed, so output channel
// c*groups + j is channel j*(C/groups) + c of the concatenation. As a
// walk: output [outer, C/g, g, inner] (contiguous) reads input strides
// [C*inner, inner, (C/g)*inner, 1]. float32 runs its own loops: NCHW
// (inner = H*W) copies runs of inner floats, NHWC (inner = 1) gathers
// each pixel's channels; two NHWC inputs of C/2 channels each and groups 2
// (ShuffleNet's Concat and shuffle) interleave with no concatenation.
func CuvilChannelShuffle(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if len(n.In) > 1 {
		return shuffleConcat(n, x)
	}
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 1))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return n.Errorf("axis %d outside rank %d", n.Attrs.Int("axis", 1), r)
	}
	g := int(n.Attrs.Int("groups", 0))
	C := x.Shape[axis]
	if g <= 0 || C%g != 0 {
		return n.Errorf("groups %d does not divide %d channels", g, C)
	}
	outer, inner := 1, 1
	for _, d := range x.Shape[:axis] {
		outer *= d
	}
	for _, d := range x.Shape[axis+1:] {
		inner *= d
	}
	out := n.Out[0]
	out.Resize(x.DType, x.Shape...)
	cg := C / g
	if xf, ok := x.Data.([]float32); ok {
		shuffleF32(out.F32(), xf, outer, g, cg, inner)
		return nil
	}
	var w ewWalk
	w.rank, w.nops = 4, 2
	w.dims = [ewMaxRank]int{outer, cg, g, inner}
	ewContig(&w.st[0], w.dims[:4])
	w.st[1][0], w.st[1][1], w.st[1][2], w.st[1][3] = C*inner, inner, cg*inner, 1
	w.coalesce()
	ewCopyWalkAny(&w, out.Data, x.Data)
	return nil
}

// shuffleF32 is the float32 shuffle of [outer, g, cg, inner] into
// [outer, cg, g, inner].
func shuffleF32(dst, src []float32, outer, g, cg, inner int) {
	C := g * cg
	if inner == 1 && g == 2 {
		// NHWC, ShuffleNet's two groups: each pixel's halves interleave.
		shuffle2F32(dst[:outer*C], src[:outer*C], C, cg)
		return
	}
	for o := 0; o < outer; o++ {
		s, d := src[o*C*inner:(o+1)*C*inner], dst[o*C*inner:(o+1)*C*inner]
		if inner == 1 {
			for j := 0; j < g; j++ {
				for c := 0; c < cg; c++ {
					d[c*g+j] = s[j*cg+c]
				}
			}
			continue
		}
		for c := 0; c < cg; c++ {
			for j := 0; j < g; j++ {
				copy(d[(c*g+j)*inner:(c*g+j+1)*inner], s[(j*cg+c)*inner:(j*cg+c+1)*inner])
			}
		}
	}
}

// shuffle2F32 interleaves each pixel's two channel halves (NHWC, groups 2)
// for all pixels of src (len a multiple of C = 2*cg). On a little-endian
// machine with dst 8-byte aligned (C is even, so every pixel is) one
// 64-bit store writes a pair (a[c] low, b[c] high); else pairs of float
// stores, written so that the inner loop has no bounds checks.
func shuffle2F32(dst, src []float32, C, cg int) {
	if len(dst) == 0 {
		return
	}
	if shuffleLittleEndian && uintptr(unsafe.Pointer(&dst[0]))%8 == 0 {
		d64 := unsafe.Slice((*uint64)(unsafe.Pointer(&dst[0])), len(dst)/2)
		for p := 0; p+C <= len(src) && p/2+cg <= len(d64); p += C {
			a, b, d := src[p:p+cg], src[p+cg:p+C], d64[p/2:p/2+cg]
			b, d = b[:len(a)], d[:len(a)]
			for c, v := range a {
				d[c] = uint64(math.Float32bits(v)) | uint64(math.Float32bits(b[c]))<<32
			}
		}
		return
	}
	for p := 0; p+C <= len(src) && p+C <= len(dst); p += C {
		a, b, d := src[p:p+cg], src[p+cg:p+C], dst[p:p+C]
		b = b[:len(a)]
		for c, v := range a {
			q := d[2*c : 2*c+2]
			q[0], q[1] = v, b[c]
		}
	}
}

// shuffleLittleEndian: a uint64 stores its low 32 bits first.
var shuffleLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// shuffleConcat is ChannelShuffle of several inputs: two float32 NHWC
// halves with groups 2 interleave directly; anything else is concatenated
// (the Concat kernel) and shuffled.
func shuffleConcat(n *Node, x *Tensor) error {
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 1))
	if axis < 0 {
		axis += r
	}
	if y := n.In[len(n.In)-1]; len(n.In) == 2 && axis == r-1 && n.Attrs.Int("groups", 0) == 2 && y != nil &&
		x.DType == F32 && y.DType == F32 && len(y.Shape) == r && shuffleSameShape(x.Shape, y.Shape) {
		out := n.Out[0]
		shape := append([]int(nil), x.Shape...)
		shape[axis] *= 2
		out.Resize(F32, shape...)
		shuffle2F32From(out.F32(), x.F32(), y.F32())
		return nil
	}
	cat := &Node{Name: n.Name, Op: "Concat", Version: 13, Attrs: Attrs{"axis": int64(axis)}, In: n.In, Out: []*Tensor{{}}}
	if err := Concat(cat); err != nil {
		return err
	}
	one := &Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: n.Attrs, In: cat.Out, Out: n.Out}
	return CuvilChannelShuffle(one)
}

func shuffleSameShape(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// shuffle2F32From interleaves two NHWC maps of C/2 channels each, pixel by
// pixel: dst's pixel p is a[p,0], b[p,0], a[p,1], b[p,1], ... (Concat of
// a and b along the channels, then the groups-2 shuffle), with one 64-bit
// store per pair where it can, as shuffle2F32.
func shuffle2F32From(dst, a, b []float32) {
	if len(dst) == 0 || len(a) != len(b) || len(dst) != 2*len(a) {
		return
	}
	if shuffleLittleEndian && uintptr(unsafe.Pointer(&dst[0]))%8 == 0 {
		d := unsafe.Slice((*uint64)(unsafe.Pointer(&dst[0])), len(a))
		b = b[:len(a)]
		for i, v := range a {
			d[i] = uint64(math.Float32bits(v)) | uint64(math.Float32bits(b[i]))<<32
		}
		return
	}
	b = b[:len(a)]
	for i, v := range a {
		q := dst[2*i : 2*i+2]
		q[0], q[1] = v, b[i]
	}
}
