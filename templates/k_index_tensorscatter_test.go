package templates

import (
	"math/rand"
	"testing"
)

// TestTensorScatter checks TensorScatter against an element-by-element
// reference on odd shapes, axes 1 to the last, linear and circular modes,
// with and without write_indices, for float32 and int64 data.
func TestTensorScatter(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct {
		shape    []int
		axis     int
		seq      int
		circular bool
		idx      bool
	}{
		{[]int{3, 2, 7, 5}, -2, 3, false, true},
		{[]int{3, 2, 7, 5}, -2, 4, true, true},
		{[]int{2, 9, 3}, 1, 2, true, true},
		{[]int{2, 9, 3}, 1, 9, false, false},
		{[]int{2, 3, 6}, 2, 5, true, true},
	} {
		ax := c.axis
		if ax < 0 {
			ax += len(c.shape)
		}
		L := c.shape[ax]
		ush := append([]int(nil), c.shape...)
		ush[ax] = c.seq
		past, upd := nnRand(r, c.shape...), nnRand(r, ush...)
		var idx []int64
		in := []*Tensor{past, upd}
		if c.idx {
			idx = make([]int64, c.shape[0])
			for i := range idx {
				if c.circular {
					idx[i] = int64(r.Intn(L))
				} else {
					idx[i] = int64(r.Intn(L - c.seq + 1))
				}
			}
			in = append(in, nnI64(idx...))
		}
		want := nnF64(past)
		u := nnF64(upd)
		// Walk every update element by its coordinates.
		coords := make([]int, len(ush))
		for e := range u {
			rem := e
			for a := len(ush) - 1; a >= 0; a-- {
				coords[a] = rem % ush[a]
				rem /= ush[a]
			}
			dst := append([]int(nil), coords...)
			w := 0
			if idx != nil {
				w = int(idx[coords[0]])
			}
			dst[ax] = w + coords[ax]
			if c.circular {
				dst[ax] %= L
			}
			o := 0
			for a := range dst {
				o = o*c.shape[a] + dst[a]
			}
			want[o] = u[e]
		}
		attrs := Attrs{"axis": int64(c.axis)}
		if c.circular {
			attrs["mode"] = "circular"
		}
		got := nnRun(t, "TensorScatter", 24, attrs, 1, in...)[0]
		nnCheck(t, "tensorscatter", got, c.shape, want, 0)
		// The same on int64 data.
		pi, ui := &Tensor{}, &Tensor{}
		pi.Resize(I64, c.shape...)
		ui.Resize(I64, ush...)
		for i, v := range past.F32() {
			pi.I64()[i] = int64(v * 100)
		}
		for i, v := range upd.F32() {
			ui.I64()[i] = int64(v * 100)
		}
		in[0], in[1] = pi, ui
		goti := nnRun(t, "TensorScatter", 24, attrs, 1, in...)[0]
		gi := goti.I64()
		for i := range want {
			// want holds float32 values; the int copy followed the same moves.
			if gi[i] != int64(float32(want[i])*100) {
				t.Fatalf("int64: [%d] = %d, want %d", i, gi[i], int64(float32(want[i])*100))
			}
		}
	}
}
