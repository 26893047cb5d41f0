package templates

import (
	"math"
	"math/rand"
	"testing"
)

// wgCase is one Winograd test convolution.
type wgCase struct {
	name string
	x, w []int
	pads []int64
}

var wgCases = []wgCase{
	{"odd_pad1_batch2", []int{2, 37, 11, 13}, []int{35, 37, 3, 3}, []int64{1, 1, 1, 1}},
	{"pad0", []int{1, 33, 9, 14}, []int{32, 33, 3, 3}, []int64{0, 0, 0, 0}},
	{"asym_pads", []int{2, 5, 7, 10}, []int{7, 5, 3, 3}, []int64{0, 1, 1, 0}},
	{"deep_k_blocks", []int{1, 300, 6, 7}, []int{13, 300, 3, 3}, []int64{1, 1, 1, 1}},
	{"smaller_than_tile", []int{2, 3, 3, 5}, []int{4, 3, 3, 3}, []int64{0, 0, 0, 0}},
	{"many_tiles", []int{1, 8, 41, 43}, []int{9, 8, 3, 3}, []int64{1, 1, 1, 1}},
	{"few_tiles_rows_split", []int{1, 20, 6, 5}, []int{47, 20, 3, 3}, []int64{1, 1, 1, 1}},
	{"full_tiles", []int{1, 24, 16, 16}, []int{40, 24, 3, 3}, []int64{1, 1, 1, 1}},
	{"pad2", []int{1, 19, 12, 17}, []int{21, 19, 3, 3}, []int64{2, 2, 2, 2}},
}

// wgNode returns a Conv or FusedConv node with W Winograd-transformed as
// gen stores it.
func wgNode(t testing.TB, op string, attrs Attrs, X, W, B, Z *Tensor) *Node {
	u, ok := PrepackConvWinograd(W.F32(), W.Shape)
	if !ok {
		t.Fatalf("not a Winograd kernel: %v", W.Shape)
	}
	wattrs := Attrs{ConvWinogradAttr: ints64(W.Shape)}
	for k, v := range attrs {
		wattrs[k] = v
	}
	in := []*Tensor{X, {DType: F32, Shape: []int{len(u)}, Data: u}, B}
	if Z != nil {
		in = append(in, Z)
	}
	return nnNode(op, 11, wattrs, 1, in...)
}

// wgClose checks got against the float64 reference want: the largest
// error relative to the largest reference value.
func wgClose(t *testing.T, what string, got *Tensor, want []float64, tol float64) {
	t.Helper()
	g := nnF64(got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	var maxErr, maxRef float64
	for i, w := range want {
		maxErr = max(maxErr, math.Abs(g[i]-w))
		maxRef = max(maxRef, math.Abs(w))
	}
	if !(maxErr <= tol*(1+maxRef)) {
		t.Fatalf("%s: max error %g for values up to %g (tol %g)", what, maxErr, maxRef, tol)
	}
}

// TestConvWinograd checks Conv and FusedConv (relu, residual before and
// after the activation) with Winograd weights against the float64 direct
// convolution, on sizes that are not multiples of the tile, pads 0 to 2,
// batch 2 and 1, 2 or 3 threads.
func TestConvWinograd(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for _, c := range wgCases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		attrs := Attrs{"pads": c.pads}
		ys := nnRun(t, "Conv", 11, attrs, 1, X, W, B)[0].Shape
		Z := nnRand(r, ys...)
		for _, v := range []struct {
			op    string
			attrs Attrs
			z     bool
		}{
			{"Conv", Attrs{}, false},
			{"cuvil::FusedConv", Attrs{"activation": "Relu"}, true},
			{"cuvil::FusedConv", Attrs{"activation": "Relu", "residual_after_activation": int64(1)}, true},
			{"cuvil::FusedConv", Attrs{"activation": "LeakyRelu", "activation_params": []float32{0.1}}, false},
		} {
			for k, a := range attrs {
				v.attrs[k] = a
			}
			in := []*Tensor{nnAs(X, F64), nnAs(W, F64), nnAs(B, F64)}
			var z *Tensor
			if v.z {
				z = Z
				in = append(in, nnAs(Z, F64))
			}
			want := nnF64(nnRun(t, v.op, 11, v.attrs, 1, in...)[0])
			for _, threads := range []int{1, 2, 3} {
				n := wgNode(t, v.op, v.attrs, X, W, B, z)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := Kernels[v.op](n); err != nil {
					t.Fatalf("%s %s: %v", c.name, v.op, err)
				}
				n.Pool.Close()
				if len(n.Out[0].Shape) != 4 || n.Out[0].Shape[2] != ys[2] || n.Out[0].Shape[3] != ys[3] {
					t.Fatalf("%s: shape %v, want %v", c.name, n.Out[0].Shape, ys)
				}
				wgClose(t, c.name+"/"+v.op, n.Out[0], want, 2e-5)
			}
		}
	}
}

// TestConvWinogradThreadsEqual checks that the thread count does not
// change a single bit of the output.
func TestConvWinogradThreadsEqual(t *testing.T) {
	r := rand.New(rand.NewSource(32))
	X, W, B := nnRand(r, 2, 40, 23, 29), nnRand(r, 33, 40, 3, 3), nnRand(r, 33)
	var first []float32
	for _, threads := range []int{1, 2, 3, 5} {
		n := wgNode(t, "Conv", Attrs{"pads": []int64{1, 1, 1, 1}}, X, W, B, nil)
		n.Pool = NewWorkPool(WithThreads(threads))
		if err := Conv(n); err != nil {
			t.Fatal(err)
		}
		n.Pool.Close()
		if first == nil {
			first = n.Out[0].F32()
			continue
		}
		for i, v := range n.Out[0].F32() {
			if math.Float32bits(v) != math.Float32bits(first[i]) {
				t.Fatalf("%d threads: [%d] = %v, 1 thread %v", threads, i, v, first[i])
			}
		}
	}
}

func TestConvWinogradErrors(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	X, W := nnRand(r, 1, 4, 8, 8), nnRand(r, 5, 4, 3, 3)
	for name, attrs := range map[string]Attrs{
		"strided": {"strides": []int64{2, 2}},
		"dilated": {"dilations": []int64{2, 2}},
		"short":   {ConvWinogradAttr: []int64{5, 5, 3, 3}},
		"not_3x3": {ConvWinogradAttr: []int64{5, 4, 5, 5}},
	} {
		n := wgNode(t, "Conv", attrs, X, W, nil, nil)
		if err := Conv(n); err == nil {
			t.Errorf("%s: Conv accepted the Winograd W", name)
		}
	}
}

func TestConvWinogradNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	X, W, B, Z := nnRand(r, 1, 32, 20, 20), nnRand(r, 32, 32, 3, 3), nnRand(r, 32), nnRand(r, 1, 32, 20, 20)
	n := wgNode(t, "cuvil::FusedConv", Attrs{"pads": []int64{1, 1, 1, 1}, "activation": "Relu"}, X, W, B, Z)
	n.Pool = NewWorkPool(WithThreads(2))
	defer n.Pool.Close()
	if a := nnAllocs(t, n, FusedConv); a != 0 {
		t.Fatalf("FusedConv with Winograd W allocates %v", a)
	}
}

// BenchmarkConvWinograd times the 3x3 stride-1 convolutions of resnet50
// (with bias and relu) both ways: Winograd and prepacked im2col+GEMM.
func BenchmarkConvWinograd(b *testing.B) {
	r := rand.New(rand.NewSource(35))
	for _, s := range []struct {
		name    string
		c, m, h int
	}{
		{"64x56", 64, 64, 56}, {"128x28", 128, 128, 28}, {"256x14", 256, 256, 14}, {"512x7", 512, 512, 7},
		{"squeeze16x55", 16, 64, 55}, {"squeeze32x27", 32, 128, 27}, {"squeeze48x13", 48, 192, 13}, {"squeeze64x13", 64, 256, 13},
		{"c8m64x56", 8, 64, 56}, {"c16m16x56", 16, 16, 56}, {"c64m16x56", 64, 16, 56}, {"c128m128x14", 128, 128, 14},
	} {
		X, W, B := nnRand(r, 1, s.c, s.h, s.h), nnRand(r, s.m, s.c, 3, 3), nnRand(r, s.m)
		attrs := Attrs{"pads": []int64{1, 1, 1, 1}, "activation": "Relu"}
		for _, threads := range []int{1, 2} {
			pool := NewWorkPool(WithThreads(threads))
			b.Run(s.name+"/gemm/t"+string(rune('0'+threads)), func(b *testing.B) {
				packed, _ := PrepackConvWeights(W.F32(), W.Shape, 1)
				pattrs := Attrs{ConvPackedAttr: ints64(W.Shape)}
				for k, v := range attrs {
					pattrs[k] = v
				}
				n := nnNode("cuvil::FusedConv", 11, pattrs, 1, X, &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}, B)
				n.Pool = pool
				for b.Loop() {
					FusedConv(n)
				}
			})
			b.Run(s.name+"/winograd/t"+string(rune('0'+threads)), func(b *testing.B) {
				n := wgNode(b, "cuvil::FusedConv", attrs, X, W, B, nil)
				n.Pool = pool
				for b.Loop() {
					FusedConv(n)
				}
			})
			pool.Close()
		}
	}
}

// wgBT and wgAT are F(4x4, 3x3)'s input and output transforms (points 0,
// 1, -1, 2, -2, infinity) for the float64 references.
var (
	wgBT = [6][6]float64{
		{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
		{0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
	}
	wgAT = [4][6]float64{{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}
)

// TestWinogradTransforms checks the input and output transforms (the
// assembly where the CPU has it, the Go twins under purego) against
// float64 on random data, odd strides and channel counts.
func TestWinogradTransforms(t *testing.T) {
	r := rand.New(rand.NewSource(36))
	for _, c := range []struct{ lds, nc, cs, ldd, ldc int }{{8, 1, 53, 37, 16}, {13, 3, 101, 50, 9}, {61, 17, 500, 300, 16}, {20, 5, 400, 600, 100}} {
		p := make([]float32, 8*c.cs+c.nc*c.cs+6*c.lds+8)
		for i := range p {
			p[i] = float32(r.NormFloat64())
		}
		var offs [8]int
		for j := range offs {
			offs[j] = r.Intn(8 * c.cs)
		}
		v := make([]float32, 35*c.ldd+(c.nc-1)*c.ldc+8)
		wgInput8(v, c.ldd, c.ldc, p, &offs, c.lds, c.nc, c.cs)
		for ch := 0; ch < c.nc; ch++ {
			for j, o := range offs {
				for i := 0; i < 6; i++ {
					for k := 0; k < 6; k++ {
						var want, mag float64
						for a := 0; a < 6; a++ {
							for b := 0; b < 6; b++ {
								d := float64(p[o+ch*c.cs+a*c.lds+b])
								want += wgBT[i][a] * d * wgBT[k][b]
								mag += math.Abs(wgBT[i][a] * d * wgBT[k][b])
							}
						}
						got := float64(v[(i*6+k)*c.ldd+ch*c.ldc+j])
						if math.Abs(got-want) > 1e-6*mag {
							t.Fatalf("input %+v: channel %d tile %d point %d: %v, want %v", c, ch, j, i*6+k, got, want)
						}
					}
				}
			}
		}
	}
	for _, c := range []struct{ ldy, lds int }{{4, 8}, {13, 29}, {56, 1000}} {
		mo := make([]float32, 36*c.lds)
		for i := range mo {
			mo[i] = float32(r.NormFloat64())
		}
		var dst [8][]float32
		for j := range dst {
			dst[j] = make([]float32, 3*c.ldy+4+j)
		}
		wgOutput8(&dst, c.ldy, mo, c.lds)
		for j := range dst {
			for i := 0; i < 4; i++ {
				for k := 0; k < 4; k++ {
					var want, mag float64
					for a := 0; a < 6; a++ {
						for b := 0; b < 6; b++ {
							s := wgAT[i][a] * float64(mo[(a*6+b)*c.lds+j]) * wgAT[k][b]
							want += s
							mag += math.Abs(s)
						}
					}
					if got := float64(dst[j][i*c.ldy+k]); math.Abs(got-want) > 1e-6*mag {
						t.Fatalf("output %+v: tile %d (%d, %d): %v, want %v", c, j, i, k, got, want)
					}
				}
			}
		}
	}
}
