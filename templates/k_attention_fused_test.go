package templates

import (
	"math/rand"
	"testing"
)

// TestCuvilAttention checks cuvil::Attention against the unfused
// composition (MatMul, Mul by the scale, Add of the mask, Softmax, MatMul)
// run in float64 on random odd sizes, with masks of several broadcast
// shapes, on one thread and on a pool.
func TestCuvilAttention(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		lead      []int
		sq, d, sk int
		dv        int
		mask      []int // nil: no mask
	}{
		{[]int{3}, 7, 5, 9, 3, nil},
		{[]int{2, 3}, 5, 11, 13, 7, []int{2, 3, 5, 13}},
		{[]int{2, 3}, 5, 11, 13, 7, []int{13}},
		{[]int{2, 3}, 1, 4, 6, 5, []int{2, 1, 1, 6}},
		{nil, 9, 3, 1, 2, []int{9, 1}},
		{[]int{4}, 17, 64, 17, 64, []int{1, 17, 17}},
		// Several row blocks per (batch, head): 131 rows, 65 rows.
		{[]int{2}, 131, 19, 70, 33, []int{131, 70}},
		{[]int{1, 3}, 65, 8, 129, 17, nil},
		{[]int{5}, 2, 9, 3, 1, []int{5, 1, 3}},
	} {
		shape := func(a, b int) []int { return append(append([]int(nil), c.lead...), a, b) }
		Q, Kt, V := nnRand(r, shape(c.sq, c.d)...), nnRand(r, shape(c.d, c.sk)...), nnRand(r, shape(c.sk, c.dv)...)
		scale := float32(0.37)
		s := fusedRef64(t, "MatMul", 13, nil, f64(Q), f64(Kt))
		s = fusedRef64(t, "Mul", 14, nil, s, f64(nnT(nil, scale)))
		in := []*Tensor{Q, Kt, V}
		if c.mask != nil {
			M := nnRand(r, c.mask...)
			s = fusedRef64(t, "Add", 14, nil, s, f64(M))
			in = append(in, M)
		}
		p := fusedRef64(t, "Softmax", 13, Attrs{"axis": int64(-1)}, s)
		want := fusedRef64(t, "MatMul", 13, nil, p, f64(V))
		attrs := Attrs{"scale": scale}
		got := nnRun(t, "cuvil::Attention", 1, attrs, 1, in...)[0]
		nnCheck(t, "attention", got, want.Shape, want.F64(), 1e-5)
		n := nnNode("cuvil::Attention", 1, attrs, 1, in...)
		n.Pool = NewWorkPool(WithThreads(3))
		if err := CuvilAttention(n); err != nil {
			t.Fatal(err)
		}
		n.Pool.Close()
		nnCheck(t, "attention on a pool", n.Out[0], want.Shape, want.F64(), 1e-5)
	}
}

// TestCuvilAttentionHeads checks the heads form of cuvil::Attention (Q, K,
// V read strided from [B, S, W] or [S, B, W] projections, Y written as
// [B, Sq, H*Dv]) against the plain form's float64 reference on the same
// heads cut out and transposed by hand, on one thread and on a pool.
func TestCuvilAttentionHeads(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for _, c := range []struct {
		b, h, sq, sk, d, dv int
		off                 []int // column offsets of Q, K, V; nil: none
		extra               int   // columns past the last head
		seqFirst            bool
		mask                []int // nil: no mask
	}{
		{1, 4, 17, 17, 8, 8, nil, 0, false, nil},
		{2, 3, 7, 9, 5, 3, []int{1, 4, 2}, 3, false, []int{2, 1, 1, 9}},
		{3, 2, 70, 65, 7, 11, nil, 0, true, []int{3, 2, 70, 65}},
		{1, 4, 131, 131, 16, 16, []int{0, 64, 128}, 0, true, nil}, // one packed QKV input
		{2, 1, 5, 3, 4, 2, []int{2, 0, 1}, 1, true, []int{5, 3}},
		{2, 5, 1, 6, 3, 4, nil, 2, false, []int{6}},
	} {
		off := c.off
		if off == nil {
			off = []int{0, 0, 0}
		}
		lay := func(s, w int) []int {
			if c.seqFirst {
				return []int{s, c.b, w}
			}
			return []int{c.b, s, w}
		}
		wq, wk, wv := off[0]+c.h*c.d+c.extra, off[1]+c.h*c.d+c.extra, off[2]+c.h*c.dv+c.extra
		Q, K, V := nnRand(r, lay(c.sq, wq)...), nnRand(r, lay(c.sk, wk)...), nnRand(r, lay(c.sk, wv)...)
		packed := c.off != nil && c.sq == c.sk && wq == wk && wk == wv
		if packed {
			K, V = Q, Q
		}
		// at reads element (b, s, col) of X of width w.
		at := func(x *Tensor, b, s, col, w int) float32 {
			if c.seqFirst {
				return x.F32()[(s*c.b+b)*w+col]
			}
			return x.F32()[(b*x.Shape[1]+s)*w+col]
		}
		// The plain operands: Qp [B, H, Sq, D], Ktp [B, H, D, Sk], Vp [B, H, Sk, Dv].
		Qp, Ktp, Vp := nnRand(r, c.b, c.h, c.sq, c.d), nnRand(r, c.b, c.h, c.d, c.sk), nnRand(r, c.b, c.h, c.sk, c.dv)
		for b := 0; b < c.b; b++ {
			for h := 0; h < c.h; h++ {
				bh := b*c.h + h
				for i := 0; i < c.sq; i++ {
					for j := 0; j < c.d; j++ {
						Qp.F32()[(bh*c.sq+i)*c.d+j] = at(Q, b, i, off[0]+h*c.d+j, wq)
					}
				}
				for i := 0; i < c.sk; i++ {
					for j := 0; j < c.d; j++ {
						Ktp.F32()[(bh*c.d+j)*c.sk+i] = at(K, b, i, off[1]+h*c.d+j, wk)
					}
					for j := 0; j < c.dv; j++ {
						Vp.F32()[(bh*c.sk+i)*c.dv+j] = at(V, b, i, off[2]+h*c.dv+j, wv)
					}
				}
			}
		}
		scale := float32(0.29)
		s := fusedRef64(t, "MatMul", 13, nil, f64(Qp), f64(Ktp))
		s = fusedRef64(t, "Mul", 14, nil, s, f64(nnT(nil, scale)))
		in := []*Tensor{Q, K, V}
		if c.mask != nil {
			M := nnRand(r, c.mask...)
			s = fusedRef64(t, "Add", 14, nil, s, f64(M))
			in = append(in, M)
		}
		p := fusedRef64(t, "Softmax", 13, Attrs{"axis": int64(-1)}, s)
		yp := fusedRef64(t, "MatMul", 13, nil, p, f64(Vp)).F64() // [B, H, Sq, Dv]
		wantShape := lay(c.sq, c.h*c.dv)
		want := make([]float64, len(yp))
		for b := 0; b < c.b; b++ {
			for h := 0; h < c.h; h++ {
				for i := 0; i < c.sq; i++ {
					for j := 0; j < c.dv; j++ {
						row := b*c.sq + i
						if c.seqFirst {
							row = i*c.b + b
						}
						want[row*c.h*c.dv+h*c.dv+j] = yp[((b*c.h+h)*c.sq+i)*c.dv+j]
					}
				}
			}
		}
		attrs := Attrs{"scale": scale, "heads": int64(c.h), "head_size": int64(c.d), "v_head_size": int64(c.dv)}
		if c.off != nil {
			attrs["offsets"] = []int64{int64(off[0]), int64(off[1]), int64(off[2])}
		}
		if c.seqFirst {
			attrs["seq_first"] = int64(1)
		}
		got := nnRun(t, "cuvil::Attention", 1, attrs, 1, in...)[0]
		nnCheck(t, "attention heads", got, wantShape, want, 1e-5)
		n := nnNode("cuvil::Attention", 1, attrs, 1, in...)
		n.Pool = NewWorkPool(WithThreads(2))
		if err := CuvilAttention(n); err != nil {
			t.Fatal(err)
		}
		n.Pool.Close()
		nnCheck(t, "attention heads on a pool", n.Out[0], wantShape, want, 1e-5)
	}
}

func TestCuvilAttentionErrors(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for _, c := range []struct {
		name string
		in   []*Tensor
	}{
		{"K does not chain", []*Tensor{nnRand(r, 2, 3, 4), nnRand(r, 2, 5, 6), nnRand(r, 2, 6, 3)}},
		{"V does not chain", []*Tensor{nnRand(r, 2, 3, 4), nnRand(r, 2, 4, 6), nnRand(r, 2, 5, 3)}},
		{"leading dims", []*Tensor{nnRand(r, 2, 3, 4), nnRand(r, 3, 4, 6), nnRand(r, 3, 6, 3)}},
		{"mask", []*Tensor{nnRand(r, 2, 3, 4), nnRand(r, 2, 4, 6), nnRand(r, 2, 6, 3), nnRand(r, 5)}},
	} {
		if err := CuvilAttention(nnNode("cuvil::Attention", 1, nil, 1, c.in...)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	for _, c := range []struct {
		name  string
		attrs Attrs
		in    []*Tensor
	}{
		{"rank", Attrs{"heads": int64(2)}, []*Tensor{nnRand(r, 3, 8), nnRand(r, 3, 8), nnRand(r, 3, 8)}},
		{"width", Attrs{"heads": int64(3)}, []*Tensor{nnRand(r, 1, 3, 8), nnRand(r, 1, 3, 8), nnRand(r, 1, 3, 8)}},
		{"offsets", Attrs{"heads": int64(2), "head_size": int64(4), "offsets": []int64{0, 4, 0}}, []*Tensor{nnRand(r, 1, 3, 8), nnRand(r, 1, 3, 8), nnRand(r, 1, 3, 8)}},
		{"batch", Attrs{"heads": int64(2)}, []*Tensor{nnRand(r, 1, 3, 8), nnRand(r, 2, 3, 8), nnRand(r, 2, 3, 8)}},
		{"mask", Attrs{"heads": int64(2)}, []*Tensor{nnRand(r, 1, 3, 8), nnRand(r, 1, 5, 8), nnRand(r, 1, 5, 8), nnRand(r, 3, 3)}},
	} {
		if err := CuvilAttention(nnNode("cuvil::Attention", 1, c.attrs, 1, c.in...)); err == nil {
			t.Errorf("heads, %s: no error", c.name)
		}
	}
	n := nnNode("cuvil::Attention", 1, Attrs{"scale": float32(0.5)}, 1, nnRand(r, 4, 7, 8), nnRand(r, 4, 8, 7), nnRand(r, 4, 7, 8), nnRand(r, 7))
	if a := nnAllocs(t, n, CuvilAttention); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// TestTransformerKernelsThreadsEqual runs the transformer kernels on 1 and
// 3 threads and wants the same bits, and no allocation with a pool.
func TestTransformerKernelsThreadsEqual(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	p := NewWorkPool(WithThreads(3))
	defer p.Close()
	// B prepacked as gen/prepack.go stores it: the projections split by
	// columns on a pool (by rows where A is packed: transA, or purego).
	packed := func(k, n int) *Tensor {
		b := nnRand(r, k, n)
		return nnT([]int{sgemmPackedBSize(k, n)}, sgemmPackB(false, k, n, b.F32(), n)...)
	}
	pk := func(k, n int) Attrs { return Attrs{gemmPackedAttr: []int64{int64(k), int64(n)}} }
	cases := []struct {
		op    string
		attrs Attrs
		in    []*Tensor
	}{
		{"cuvil::FusedMatMul", pk(45, 203), []*Tensor{nnRand(r, 1, 131, 45), packed(45, 203), nnRand(r, 203)}},
		{"cuvil::FusedMatMul", pk(77, 37), []*Tensor{nnRand(r, 131, 77), packed(77, 37), nnRand(r, 37), nnRand(r, 131, 37)}},
		{"Gemm", pk(61, 97), []*Tensor{nnRand(r, 40, 61), packed(61, 97), nnRand(r, 97)}},
		{"Gemm", Attrs{"transA": int64(1), gemmPackedAttr: []int64{61, 97}}, []*Tensor{nnRand(r, 61, 40), packed(61, 97), nnRand(r, 97)}}, // rows split
		{"cuvil::FusedMatMul", Attrs{"activation": "Gelu"}, []*Tensor{nnRand(r, 1, 131, 45), nnRand(r, 45, 203), nnRand(r, 203)}},
		{"cuvil::FusedMatMul", nil, []*Tensor{nnRand(r, 131, 77), nnRand(r, 77, 37), nnRand(r, 37), nnRand(r, 131, 37)}}, // narrow: rows split
		{"cuvil::FusedMatMul", nil, []*Tensor{nnRand(r, 20, 9), nnRand(r, 9, 13)}},
		{"cuvil::FusedGemm", Attrs{"transA": int64(1), "transB": int64(1), "activation": "Relu"}, []*Tensor{nnRand(r, 61, 97), nnRand(r, 111, 61), nnRand(r, 97, 1)}},
		{"cuvil::Attention", Attrs{"scale": float32(0.3)}, []*Tensor{nnRand(r, 3, 131, 19), nnRand(r, 3, 19, 70), nnRand(r, 3, 70, 33), nnRand(r, 131, 70)}},
		{"cuvil::Attention", Attrs{"scale": float32(0.3), "heads": int64(3), "seq_first": int64(1)}, []*Tensor{nnRand(r, 131, 2, 57), nnRand(r, 70, 2, 57), nnRand(r, 70, 2, 33), nnRand(r, 2, 1, 131, 70)}},
		{"cuvil::SkipLayerNorm", Attrs{"epsilon": float32(1e-5)}, []*Tensor{nnRand(r, 2, 131, 77), nnRand(r, 2, 131, 77), nnRand(r, 77), nnRand(r, 77)}},
		{"cuvil::SkipLayerNorm", Attrs{"epsilon": float32(1e-5)}, []*Tensor{nnRand(r, 300, 71), nnRand(r, 71), nnRand(r, 71)}},
		{"LayerNormalization", Attrs{"axis": int64(-1)}, []*Tensor{nnRand(r, 5, 67, 71), nnRand(r, 71), nnRand(r, 71)}},
		{"LayerNormalization", Attrs{"axis": int64(-1)}, []*Tensor{nnRand(r, 5, 67, 71), nnRand(r, 71)}},
		{"MatMul", nil, []*Tensor{nnRand(r, 5, 37, 19), nnRand(r, 5, 19, 43)}},
		{"MatMul", nil, []*Tensor{nnRand(r, 2, 3, 37, 19), nnRand(r, 19, 43)}},
		{"MatMul", nil, []*Tensor{nnRand(r, 1, 37, 19), nnRand(r, 4, 19, 43)}},
	}
	for _, c := range cases {
		ver := 13
		if c.op == "LayerNormalization" {
			ver = 17
		}
		serial := nnNode(c.op, ver, c.attrs, 1, c.in...)
		par := nnNode(c.op, ver, c.attrs, 1, c.in...)
		if len(c.op) > 7 && c.op[:7] == "cuvil::" {
			serial.Version, par.Version = 1, 1
		}
		par.Pool = p
		k := Kernels[c.op]
		if err := k(serial); err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 2; run++ {
			if err := k(par); err != nil {
				t.Fatal(err)
			}
			want, got := serial.Out[0].F32(), par.Out[0].F32()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s %v: y[%d] = %v with 3 threads, %v with 1", c.op, c.attrs, i, got[i], want[i])
				}
			}
		}
		if allocs := testing.AllocsPerRun(5, func() { k(par) }); allocs != 0 && !raceEnabled {
			t.Errorf("%s: %v allocations per run with a pool", c.op, allocs)
		}
	}
}
