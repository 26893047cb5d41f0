//go:build linux

package templates

import (
	"math/rand"
	"slices"
	"testing"
)

// BenchmarkSEGate compares, on efficientnet_b0's squeeze-excitation
// projections (NHWC, weights prepacked as gen stores them, 1 thread), the
// unfused gate (Mul of the map by the [1,1,1,C] gate, then the pointwise
// FusedConv) with the fused one (FusedConv with input Scale), alternating
// A and B run by run and reporting each one's median calling-thread CPU
// time (threadClockNanos: robust on a loaded machine) and B/A.
// go test ./templates -run '^$' -bench SEGate -benchtime 1x
func BenchmarkSEGate(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	layers := []struct {
		name     string
		hw, c, m int
	}{
		{"b1_112_32_16", 112, 32, 16},
		{"b2_56_96_24", 56, 96, 24},
		{"b2_56_144_24", 56, 144, 24},
		{"b3_28_144_40", 28, 144, 40},
		{"b3_28_240_40", 28, 240, 40},
		{"b4_14_240_80", 14, 240, 80},
		{"b4_14_480_80", 14, 480, 80},
		{"b5_14_480_112", 14, 480, 112},
		{"b5_14_672_112", 14, 672, 112},
		{"b6_7_672_192", 7, 672, 192},
		{"b6_7_1152_192", 7, 1152, 192},
		{"b7_7_1152_320", 7, 1152, 320},
	}
	pool := NewWorkPool(WithThreads(1))
	defer pool.Close()
	for range b.N {
		for _, l := range layers {
			X, G := nnRand(r, 1, l.hw, l.hw, l.c), nnRand(r, 1, 1, 1, l.c)
			W, B := nnRand(r, l.m, l.c, 1, 1), nnRand(r, l.m)
			packed, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
			WP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
			attrs := Attrs{"layout": "NHWC", ConvPackedAttr: ints64(W.Shape)}
			mul := nnNode("Mul", 14, nil, 1, X, G)
			mul.Pool = pool
			conv := nnNode("cuvil::FusedConv", 1, attrs, 1, nil, WP, B)
			conv.Pool = pool
			fused := nnNode("cuvil::FusedConv", 1, attrs, 1, X, WP, B, nil, nil, G)
			fused.Pool = pool
			runA := func() {
				if err := Mul(mul); err != nil {
					b.Fatal(err)
				}
				conv.In[0] = mul.Out[0]
				if err := FusedConv(conv); err != nil {
					b.Fatal(err)
				}
			}
			runB := func() {
				if err := FusedConv(fused); err != nil {
					b.Fatal(err)
				}
			}
			// The fused kernel's two paths, forced: scale a copy of the map
			// (then the GEMM reads it), or a copy of the packed weights.
			xs := make([]float32, len(X.F32()))
			mapConv := nnNode("cuvil::FusedConv", 1, attrs, 1, &Tensor{DType: F32, Shape: X.Shape, Data: xs}, WP, B)
			mapConv.Pool = pool
			ws := make([]float32, len(packed))
			wConv := nnNode("cuvil::FusedConv", 1, attrs, 1, X, &Tensor{DType: F32, Shape: WP.Shape, Data: ws}, B)
			wConv.Pool = pool
			runMap := func() {
				x, g := X.F32(), G.F32()
				for p := range l.hw * l.hw {
					src, dst := x[p*l.c:(p+1)*l.c], xs[p*l.c:(p+1)*l.c]
					for c, v := range src {
						dst[c] = v * g[c]
					}
				}
				if err := FusedConv(mapConv); err != nil {
					b.Fatal(err)
				}
			}
			runW := func() {
				nhwcScalePackedRows(ws, packed, G.F32(), l.c, sgemmRoundUp(l.m, sgemmPkNR))
				if err := FusedConv(wConv); err != nil {
					b.Fatal(err)
				}
			}
			runs := []func(){runA, runB, runMap, runW}
			ts := make([][]int64, len(runs))
			for _, f := range runs {
				f()
			}
			for range 41 {
				for i, f := range runs {
					t0 := threadClockNanos()
					f()
					ts[i] = append(ts[i], threadClockNanos()-t0)
				}
			}
			med := make([]float64, len(runs))
			for i := range ts {
				slices.Sort(ts[i])
				med[i] = float64(ts[i][len(ts[i])/2]) / 1e3
			}
			path := "map"
			if l.hw*l.hw > sgemmRoundUp(l.m, sgemmPkNR) {
				path = "weights"
			}
			b.Logf("%-15s %-7s unfused %7.1f us  fused %7.1f us (map %7.1f, weights %7.1f)  fused/unfused %.2f", l.name, path, med[0], med[1], med[2], med[3], med[1]/med[0])
		}
	}
}
