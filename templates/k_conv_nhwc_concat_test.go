package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestFusedConvNHWCConcat checks FusedConv layout=NHWC writing a channel
// slice of a wider output (out_channels, out_offset, input Into: what the
// concat-into pass makes of a Concat) on every group-1 path: pointwise
// tiles (split by rows and by columns), im2col GEMM (rows, columns,
// several chunks), an NCHW input image, Winograd F(4x4) and F(2x2).
// Convolution A writes the last channels with no Into, B the first ones
// over A's output; the result must be the float64 NCHW convolutions
// concatenated, at 1 and 2 threads (bit for bit equal), W plain and
// prepacked, with Into copied or Y placed over it.
func TestFusedConvNHWCConcat(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	pad1 := Attrs{"pads": []int64{1, 1, 1, 1}}
	cases := []struct {
		name  string
		x, w  []int // X and A's W; B has mb output channels
		mb    int
		attrs Attrs
		wino  int // Winograd F(wino x wino, 3x3), 0: GEMM
	}{
		{"pointwise", []int{1, 13, 7, 9}, []int{21, 13, 1, 1}, 19, nil, 0},
		{"pw_m16_n2", []int{2, 16, 5, 5}, []int{16, 16, 1, 1}, 24, nil, 0},
		{"pointwise_cols", []int{1, 64, 5, 7}, []int{200, 64, 1, 1}, 40, nil, 0},
		{"3x3", []int{2, 5, 11, 10}, []int{19, 5, 3, 3}, 13, pad1, 0},
		{"3x3_cols", []int{1, 20, 5, 7}, []int{160, 20, 3, 3}, 24, pad1, 0},
		{"3x3_chunks", []int{1, 128, 15, 20}, []int{8, 128, 3, 3}, 11, pad1, 0},
		{"nchw_3x3_s2_c3", []int{1, 3, 21, 19}, []int{24, 3, 3, 3}, 16, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 0, 1, 2}}, 0},
		{"wino_f4", []int{1, 24, 41, 43}, []int{9, 24, 3, 3}, 17, pad1, 4},
		{"wino_f2", []int{2, 37, 11, 13}, []int{35, 37, 3, 3}, 8, pad1, 2},
	}
	for ci, c := range cases {
		X := nnRand(r, c.x...)
		wb := append([]int{c.mb}, c.w[1:]...)
		Ws := []*Tensor{nnRand(r, c.w...), nnRand(r, wb...)}
		Bs := []*Tensor{nnRand(r, c.w[0]), nnRand(r, c.mb)}
		act := fusedActCases[ci%len(fusedActCases)]
		// Reference: act(conv) of A and B, NHWC, concatenated as B, A.
		var refs [2]*Tensor
		for i := range refs {
			ref := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(Ws[i], F64), nnAs(Bs[i], F64))[0]
			refs[i] = nhwcOf(fusedRefAct(t, act, ref), F64)
		}
		ma, mb := c.w[0], c.mb
		mt := ma + mb
		shape := append(append([]int(nil), refs[0].Shape[:3]...), mt)
		a, b := nnF64(refs[0]), nnF64(refs[1])
		want := make([]float64, nnProd(shape))
		for p := 0; p < len(want)/mt; p++ {
			copy(want[p*mt:], b[p*mb:(p+1)*mb])
			copy(want[p*mt+mb:], a[p*ma:(p+1)*ma])
		}
		x := nhwcOf(X, F32)
		if c.attrs != nil && c.attrs["strides"] != nil {
			x = X // the NCHW case: X stays NCHW (in_layout NCHW)
		}
		for _, pre := range []bool{false, true} {
			if c.wino != 0 && !pre {
				continue
			}
			var w [2]*Tensor
			attrs := fusedAttrs(act, c.attrs)
			attrs["layout"] = "NHWC"
			attrs["out_channels"] = int64(mt)
			if x == X {
				attrs["in_layout"] = "NCHW"
			}
			for i, W := range Ws {
				w[i] = W
				switch {
				case c.wino != 0:
					w[i] = wnWeights(t, W, c.wino)
				case pre:
					packed, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
					w[i] = &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
				}
			}
			what := fmt.Sprintf("%s/prepacked=%v/%s", c.name, pre, act.name)
			attrsA, attrsB := Attrs{}, Attrs{}
			for k, v := range attrs {
				attrsA[k], attrsB[k] = v, v
			}
			if c.wino != 0 {
				attrsA[ConvWinogradAttr] = ints64(Ws[0].Shape)
				attrsB[ConvWinogradAttr] = ints64(Ws[1].Shape)
			} else if pre {
				attrsA[ConvPackedAttr] = ints64(Ws[0].Shape)
				attrsB[ConvPackedAttr] = ints64(Ws[1].Shape)
			}
			attrsA["out_offset"] = int64(mb)
			ya := nhwcRunBoth(t, what+"/A", "cuvil::FusedConv", attrsA, x, w[0], Bs[0])
			got := nhwcRunBoth(t, what+"/B", "cuvil::FusedConv", attrsB, x, w[1], Bs[1], nil, ya)
			tol := 1e-4
			if c.wino != 0 {
				tol = 2e-3 // Winograd's rounding grows with the values (see wnClose)
			}
			nnCheck(t, what, got, shape, want, tol)
			// A alone over an Into of mb channels (a dense block's input):
			// Y's first mb channels are Into's.
			narrow := nnRand(r, append(append([]int(nil), shape[:3]...), mb)...)
			yn := nhwcRunBoth(t, what+"/narrow", "cuvil::FusedConv", attrsA, x, w[0], Bs[0], nil, narrow)
			wantN := append([]float64(nil), want...)
			for p := 0; p < len(want)/mt; p++ {
				for j, v := range narrow.F32()[p*mb : (p+1)*mb] {
					wantN[p*mt+j] = float64(v)
				}
			}
			nnCheck(t, what+"/narrow", yn, shape, wantN, tol)
			// Y over Into (the memory plan's in-place case): same bits.
			into := &Tensor{DType: F32, Shape: ya.Shape, Data: append([]float32(nil), ya.F32()...)}
			n := nnNode("cuvil::FusedConv", 1, attrsB, 1, x, w[1], Bs[1], nil, into)
			n.Out[0] = into
			n.Pool = NewWorkPool(WithThreads(2))
			err := FusedConv(n)
			n.Pool.Close()
			if err != nil {
				t.Fatalf("%s/inplace: %v", what, err)
			}
			for i, v := range got.F32() {
				if into.F32()[i] != v && v == v {
					t.Fatalf("%s/inplace: [%d] = %v, want %v", what, i, into.F32()[i], v)
				}
			}
		}
	}
	// ScaleShift reading the first channels of wider rows.
	X, S, B := nnRand(r, 2, 5, 7, 11), nnRand(r, 7), nnRand(r, 7)
	narrowX := make([]float32, 2*5*7*7)
	for p := 0; p < 2*5*7; p++ {
		copy(narrowX[p*7:], X.F32()[p*11:p*11+7])
	}
	want := nnRun(t, "cuvil::ScaleShift", 1, Attrs{"activation": "Relu", "layout": "NHWC"}, 1, &Tensor{DType: F32, Shape: []int{2, 5, 7, 7}, Data: narrowX}, S, B)[0]
	got := nnRun(t, "cuvil::ScaleShift", 1, Attrs{"activation": "Relu", "layout": "NHWC", "channels": int64(7)}, 1, X, S, B)[0]
	nnCheck(t, "ScaleShift channels", got, want.Shape, nnF64(want), 0)
	// Split over two threads (Relu: a clamp) on rows wider than read.
	X, S, B = nnRand(r, 1, 41, 39, 72), nnRand(r, 40), nnRand(r, 40)
	ref := make([]float64, 41*39*40)
	for p := 0; p < 41*39; p++ {
		for c := 0; c < 40; c++ {
			ref[p*40+c] = max(0, float64(X.F32()[p*72+c])*float64(S.F32()[c])+float64(B.F32()[c]))
		}
	}
	got = nhwcRunBoth(t, "ScaleShift channels 2 threads", "cuvil::ScaleShift", Attrs{"activation": "Relu", "layout": "NHWC", "channels": int64(40)}, X, S, B)
	nnCheck(t, "ScaleShift channels 2 threads", got, []int{1, 41, 39, 40}, ref, 1e-5)
	// Bad input is an error naming the node, not a panic.
	bad := []struct {
		name  string
		attrs Attrs
		in    []*Tensor
	}{
		{"slice past out_channels", Attrs{"out_channels": int64(6), "out_offset": int64(3)}, []*Tensor{nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 1, 1)}},
		{"residual with out_channels", Attrs{"out_channels": int64(8)}, []*Tensor{nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 1, 1), nil, nnRand(r, 1, 5, 5, 4)}},
		{"Into of another shape", Attrs{"out_channels": int64(8)}, []*Tensor{nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 1, 1), nil, nil, nnRand(r, 1, 5, 4, 7)}},
		{"Into wider than Y", Attrs{"out_channels": int64(8)}, []*Tensor{nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 1, 1), nil, nil, nnRand(r, 1, 5, 5, 9)}},
		{"depthwise", Attrs{"out_channels": int64(8), "group": int64(4)}, []*Tensor{nnRand(r, 1, 5, 5, 4), nnRand(r, 4, 1, 3, 3)}},
		{"NCHW", Attrs{"out_channels": int64(8), "layout": "NCHW"}, []*Tensor{nnRand(r, 1, 3, 5, 5), nnRand(r, 4, 3, 1, 1)}},
	}
	for _, c := range bad {
		if c.attrs["layout"] == nil {
			c.attrs["layout"] = "NHWC"
		}
		n := nnNode("cuvil::FusedConv", 1, c.attrs, 1, c.in...)
		n.Pool = NewWorkPool(WithThreads(1))
		err := FusedConv(n)
		n.Pool.Close()
		if err == nil {
			t.Errorf("%s accepted", c.name)
		}
	}
}
