package templates

import (
	"math/rand"
	"testing"
)

// TestChannelShuffle runs cuvil::ChannelShuffle on odd shapes, NCHW (axis
// 1) and NHWC (axis 3), float32 and other dtypes, against the three ops it
// stands for (Reshape to [.., g, C/g, ..], Transpose of those two axes,
// Reshape back) and against the index rule out[c*g+j] = in[j*(C/g)+c],
// bit for bit.
func TestChannelShuffle(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	cases := []struct {
		shape   []int
		axis, g int
	}{
		{[]int{1, 6, 5, 7}, 1, 2}, {[]int{2, 9, 3, 1}, 1, 3}, {[]int{3, 10, 1, 5}, 1, 5},
		{[]int{1, 5, 7, 6}, 3, 2}, {[]int{2, 3, 3, 12}, 3, 4}, {[]int{1, 1, 1, 2}, 3, 2},
		{[]int{2, 7, 3, 5}, 1, 7}, {[]int{1, 4, 4, 4}, 1, 1},
	}
	for _, tc := range cases {
		for _, dt := range []DType{F32, U8, I64, F16} {
			x := &Tensor{}
			x.Resize(dt, tc.shape...)
			for i := 0; i < x.Len(); i++ {
				switch d := x.Data.(type) {
				case []float32:
					d[i] = float32(rng.NormFloat64())
				case []uint8:
					d[i] = uint8(rng.Intn(256))
				case []int64:
					d[i] = rng.Int63()
				case []uint16:
					d[i] = uint16(rng.Intn(65536))
				}
			}
			s := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: Attrs{"axis": int64(tc.axis), "groups": int64(tc.g)}, In: []*Tensor{x}, Out: []*Tensor{{}}}
			if err := CuvilChannelShuffle(s); err != nil {
				t.Fatal(err)
			}
			got := s.Out[0]
			// The three ops.
			C := tc.shape[tc.axis]
			var split, perm, back []int64
			for i, d := range tc.shape {
				if i == tc.axis {
					split = append(split, int64(tc.g), int64(C/tc.g))
				} else {
					split = append(split, int64(d))
				}
				back = append(back, int64(d))
			}
			for i := range split {
				perm = append(perm, int64(i))
			}
			perm[tc.axis], perm[tc.axis+1] = perm[tc.axis+1], perm[tc.axis]
			r1 := tewNode("Reshape", 14, Attrs{}, x, tewI64([]int{len(split)}, split...))
			tewRun(t, r1)
			tr := tewNode("Transpose", 13, Attrs{"perm": perm}, r1.Out[0])
			tewRun(t, tr)
			r2 := tewNode("Reshape", 14, Attrs{}, tr.Out[0], tewI64([]int{len(back)}, back...))
			tewRun(t, r2)
			tewEqual(t, "ChannelShuffle vs Reshape/Transpose/Reshape", got, r2.Out[0])
			// The index rule.
			outer, inner := 1, 1
			for _, d := range tc.shape[:tc.axis] {
				outer *= d
			}
			for _, d := range tc.shape[tc.axis+1:] {
				inner *= d
			}
			cg := C / tc.g
			for o := 0; o < outer; o++ {
				for c := 0; c < cg; c++ {
					for j := 0; j < tc.g; j++ {
						for k := 0; k < inner; k++ {
							di := (o*C+c*tc.g+j)*inner + k
							si := (o*C+j*cg+c)*inner + k
							if !sameElem(got.Data, di, x.Data, si) {
								t.Fatalf("%v axis %d g %d %v: out[%d] is not in[%d]", tc.shape, tc.axis, tc.g, dt, di, si)
							}
						}
					}
				}
			}
		}
	}
	bad := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: Attrs{"axis": int64(1), "groups": int64(4)},
		In: []*Tensor{tewF32T([]int{1, 6, 1, 1}, 1, 2, 3, 4, 5, 6)}, Out: []*Tensor{{}}}
	if CuvilChannelShuffle(bad) == nil {
		t.Fatal("groups 4 of 6 channels: want an error")
	}
}

// sameElem reports whether a[i] and b[j] (slices of one Go type) are equal.
func sameElem(a any, i int, b any, j int) bool {
	switch a := a.(type) {
	case []float32:
		return a[i] == b.([]float32)[j]
	case []uint8:
		return a[i] == b.([]uint8)[j]
	case []int64:
		return a[i] == b.([]int64)[j]
	case []uint16:
		return a[i] == b.([]uint16)[j]
	}
	return false
}

// TestShuffle2F32Unaligned runs the groups-2 interleave on a dst that is
// not 8-byte aligned (the per-float path) and an aligned one (64-bit
// stores), against the index rule.
func TestShuffle2F32Unaligned(t *testing.T) {
	for _, cg := range []int{1, 3, 58} {
		C, pixels := 2*cg, 7
		src := make([]float32, pixels*C)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		buf := make([]float32, pixels*C+1)
		for _, off := range []int{0, 1} {
			dst := buf[off : off+pixels*C]
			clear(dst)
			shuffle2F32(dst, src, C, cg)
			for p := 0; p < pixels; p++ {
				for c := 0; c < cg; c++ {
					for j := 0; j < 2; j++ {
						if got, want := dst[p*C+2*c+j], src[p*C+j*cg+c]; got != want {
							t.Fatalf("cg %d offset %d: pixel %d out %d = %g, want %g", cg, off, p, 2*c+j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestChannelShuffleConcat runs cuvil::ChannelShuffle of several inputs
// (the concatenation along axis, then the shuffle) against the Concat
// kernel followed by the one-input shuffle: two equal NHWC float32 halves
// with groups 2 (the direct interleave, dst aligned and not), uneven
// parts, NCHW, and a u8 map.
func TestChannelShuffleConcat(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	cases := []struct {
		shape   []int // of each part but the axis
		axis, g int
		parts   []int
		dt      DType
	}{
		{[]int{1, 5, 7, 0}, 3, 2, []int{3, 3}, F32}, {[]int{2, 3, 1, 0}, 3, 2, []int{58, 58}, F32},
		{[]int{1, 3, 5, 0}, 3, 3, []int{4, 5}, F32}, {[]int{1, 0, 5, 7}, 1, 2, []int{6, 6}, F32},
		{[]int{1, 4, 3, 0}, 3, 2, []int{5, 5}, U8}, {[]int{1, 0, 2, 3}, 1, 4, []int{2, 3, 3}, F32},
	}
	for _, tc := range cases {
		var in []*Tensor
		for _, c := range tc.parts {
			sh := append([]int(nil), tc.shape...)
			sh[tc.axis] = c
			x := &Tensor{}
			x.Resize(tc.dt, sh...)
			for i := 0; i < x.Len(); i++ {
				switch d := x.Data.(type) {
				case []float32:
					d[i] = float32(rng.NormFloat64())
				case []uint8:
					d[i] = uint8(rng.Intn(256))
				}
			}
			in = append(in, x)
		}
		attrs := Attrs{"axis": int64(tc.axis), "groups": int64(tc.g)}
		s := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: attrs, In: in, Out: []*Tensor{{}}}
		if err := CuvilChannelShuffle(s); err != nil {
			t.Fatal(err)
		}
		cat := tewNode("Concat", 13, Attrs{"axis": int64(tc.axis)}, in...)
		tewRun(t, cat)
		one := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: attrs, In: cat.Out, Out: []*Tensor{{}}}
		if err := CuvilChannelShuffle(one); err != nil {
			t.Fatal(err)
		}
		tewEqual(t, "ChannelShuffle of parts vs Concat then ChannelShuffle", s.Out[0], one.Out[0])
		if len(in) == 2 && tc.dt == F32 && tc.axis == 3 && tc.parts[0] == tc.parts[1] && tc.g == 2 {
			buf := make([]float32, 2*in[0].Len()+1)
			dst := buf[1:]
			shuffle2F32From(dst, in[0].F32(), in[1].F32())
			for i, v := range one.Out[0].F32() {
				if dst[i] != v {
					t.Fatalf("%v: unaligned interleave: out[%d] = %g, want %g", tc.parts, i, dst[i], v)
				}
			}
		}
	}
}

// TestChannelShuffle2Threads runs the groups-2 NHWC interleave (one input
// of C channels, and two inputs of C/2) past shuffleParMin at 1, 2 and 3
// threads (split by pixels), against the index rule: channel halves of 61
// (a tail after the 8-float AVX steps) and 58 (ShuffleNet's stage 2).
func TestChannelShuffle2Threads(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	for _, cg := range []int{61, 58} {
		H, W, C := 13, 17, 2*cg
		x := nnRand(rng, 1, H, W, C)
		a, b := nnRand(rng, 1, H, W, cg), nnRand(rng, 1, H, W, cg)
		for _, threads := range []int{1, 2, 3} {
			pool := NewWorkPool(WithThreads(threads))
			one := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: Attrs{"axis": int64(3), "groups": int64(2)},
				In: []*Tensor{x}, Out: []*Tensor{{}}, Pool: pool}
			two := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: Attrs{"axis": int64(3), "groups": int64(2)},
				In: []*Tensor{a, b}, Out: []*Tensor{{}}, Pool: pool}
			for _, s := range []*Node{one, two} {
				if err := CuvilChannelShuffle(s); err != nil {
					t.Fatal(err)
				}
			}
			pool.Close()
			xs, as, bs := x.F32(), a.F32(), b.F32()
			g1, g2 := one.Out[0].F32(), two.Out[0].F32()
			if len(g1) != H*W*C || len(g2) != H*W*C {
				t.Fatalf("cg %d: output lengths %d, %d, want %d", cg, len(g1), len(g2), H*W*C)
			}
			for p := 0; p < H*W; p++ {
				for c := 0; c < cg; c++ {
					for j := 0; j < 2; j++ {
						if got, want := g1[p*C+2*c+j], xs[p*C+j*cg+c]; got != want {
							t.Fatalf("cg %d threads %d: pixel %d out %d = %g, want %g", cg, threads, p, 2*c+j, got, want)
						}
						want := as[p*cg+c]
						if j == 1 {
							want = bs[p*cg+c]
						}
						if got := g2[p*C+2*c+j]; got != want {
							t.Fatalf("cg %d threads %d: two inputs: pixel %d out %d = %g, want %g", cg, threads, p, 2*c+j, got, want)
						}
					}
				}
			}
		}
	}
}
