package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestFusedConvChain checks cuvil::FusedConvChain against the three
// convolutions run one after the other in float64 (NCHW ai.onnx Conv,
// Clip, Add), with weights plain and prepacked as gen stores them, at 1
// and 2 threads (bit for bit equal, nhwcRunBoth).
func TestFusedConvChain(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	relu6 := fusedActCase{"Clip", []float32{0, 6}}
	cases := []struct {
		name     string
		x        []int // NCHW
		ce, m    int   // expanded channels (0: no expand), projected (0: none)
		dw       Attrs // the depthwise's kernel_shape, strides, pads, dilations
		residual bool
		last     fusedActCase
		mid      fusedActCase // the expand and depthwise stages' (default relu6)
	}{
		{"s1_res", []int{1, 8, 13, 11}, 37, 8, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{}, fusedActCase{}},
		{"s2", []int{1, 16, 15, 17}, 96, 24, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, fusedActCase{}, fusedActCase{}},
		{"s2_even", []int{2, 5, 14, 10}, 30, 7, Attrs{"strides": []int64{2, 2}, "pads": []int64{0, 0, 1, 1}}, false, relu6, fusedActCase{}},
		{"no_project", []int{1, 6, 9, 7}, 21, 0, Attrs{"pads": []int64{1, 1, 1, 1}}, false, relu6, fusedActCase{}},
		{"no_project_res_tanh", []int{1, 6, 9, 7}, 21, 0, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{"Tanh", nil}, fusedActCase{}},
		{"no_expand", []int{1, 32, 19, 9}, 0, 16, Attrs{"pads": []int64{1, 1, 1, 1}}, false, fusedActCase{}, fusedActCase{}},
		{"no_expand_res_s1", []int{2, 20, 7, 8}, 0, 20, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{"Relu", nil}, fusedActCase{}},
		{"5x5_dil", []int{1, 4, 17, 12}, 18, 5, Attrs{"kernel_shape": []int64{5, 5}, "dilations": []int64{2, 1}, "pads": []int64{3, 2, 4, 2}}, true, fusedActCase{"HardSwish", nil}, fusedActCase{}},
		// Padding wider than the kernel: bands whose windows miss the image.
		{"pad_beyond", []int{1, 5, 3, 4}, 9, 3, Attrs{"pads": []int64{3, 1, 4, 2}}, false, fusedActCase{}, fusedActCase{}},
		{"pad_beyond_no_expand", []int{1, 6, 3, 200}, 0, 3, Attrs{"pads": []int64{0, 1, 6, 2}}, true, fusedActCase{}, fusedActCase{}},
		{"pad_beyond_s2", []int{1, 6, 3, 500}, 10, 3, Attrs{"strides": []int64{2, 2}, "pads": []int64{0, 1, 7, 2}}, false, fusedActCase{}, fusedActCase{}},
		// Tall enough for several bands per part (stride 1 keeps rows).
		{"bands", []int{1, 8, 77, 41}, 150, 9, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{}, fusedActCase{}},
		{"bands_s2", []int{1, 3, 99, 53}, 120, 17, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, relu6, fusedActCase{}},
		// Stages with activations that are not clamps (row passes).
		{"hardswish_stages", []int{1, 8, 29, 13}, 40, 8, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{}, fusedActCase{"HardSwish", nil}},
		{"silu_stages_s2", []int{2, 6, 17, 23}, 36, 12, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, fusedActCase{"Swish", []float32{1}}, fusedActCase{"Swish", []float32{1}}},
		{"elu_bands", []int{1, 8, 77, 41}, 150, 9, Attrs{"pads": []int64{1, 1, 1, 1}}, false, fusedActCase{}, fusedActCase{"Elu", []float32{0.5}}},
		// Small maps (the channel split's): several 16-channel panels
		// with a tail, stride 2, a 5x5 depthwise, batches.
		{"small7_res", []int{1, 40, 7, 7}, 200, 40, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{}, fusedActCase{}},
		{"small5_5x5", []int{2, 24, 5, 5}, 100, 37, Attrs{"kernel_shape": []int64{5, 5}, "pads": []int64{2, 2, 2, 2}}, false, relu6, fusedActCase{}},
		{"small14_s2_5x5_hswish", []int{1, 20, 14, 14}, 120, 48, Attrs{"kernel_shape": []int64{5, 5}, "strides": []int64{2, 2}, "pads": []int64{1, 1, 2, 2}}, false, fusedActCase{"HardSwish", nil}, fusedActCase{"HardSwish", nil}},
		{"small14_n2_res_tanh", []int{2, 16, 14, 14}, 67, 16, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{"Tanh", nil}, fusedActCase{}},
		{"small7_no_expand", []int{2, 72, 7, 7}, 0, 33, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{"Relu", nil}, fusedActCase{}},
		{"small7_no_project_res", []int{1, 12, 7, 7}, 83, 0, Attrs{"pads": []int64{1, 1, 1, 1}}, true, fusedActCase{"HardSwish", nil}, fusedActCase{"Swish", []float32{1}}},
		{"small9_no_project_clip", []int{2, 12, 9, 9}, 50, 0, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, relu6, fusedActCase{}},
	}
	for ci, c := range cases {
		if c.mid.name == "" {
			c.mid = relu6
		}
		X := nnRand(r, c.x...)
		C := c.x[1]
		ce := c.ce
		if ce == 0 {
			ce = C
		}
		dwk := []int{3, 3}
		if k, ok := c.dw["kernel_shape"]; ok {
			dwk = []int{int(k.([]int64)[0]), int(k.([]int64)[1])}
		}
		var We, Be, Wp, Bp *Tensor
		if c.ce > 0 {
			We, Be = nnRand(r, ce, C, 1, 1), nnRand(r, ce)
		}
		Wd, Bd := nnRand(r, ce, 1, dwk[0], dwk[1]), nnRand(r, ce)
		if c.m > 0 {
			Wp, Bp = nnRand(r, c.m, ce, 1, 1), nnRand(r, c.m)
		}
		// Reference, float64 NCHW.
		e := nnAs(X, F64)
		if We != nil {
			e = nnRun(t, "Conv", 11, nil, 1, e, nnAs(We, F64), nnAs(Be, F64))[0]
			e = fusedRefAct(t, c.mid, e)
		}
		dwAttrs := Attrs{"group": int64(ce)}
		for k, v := range c.dw {
			dwAttrs[k] = v
		}
		d := nnRun(t, "Conv", 11, dwAttrs, 1, e, nnAs(Wd, F64), nnAs(Bd, F64))[0]
		want := d
		if Wp != nil {
			want = nnRun(t, "Conv", 11, nil, 1, fusedRefAct(t, c.mid, d), nnAs(Wp, F64), nnAs(Bp, F64))[0]
		}
		var Z *Tensor
		if c.residual {
			Z = nnRand(r, want.Shape...)
			want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
			Z = nhwcOf(Z, F32)
		}
		want = nhwcOf(fusedRefAct(t, c.last, want), F64)

		for _, pre := range []bool{false, true} {
			attrs := fusedAttrs(c.last, c.dw)
			if We != nil {
				attrs["expand_activation"] = c.mid.name
				if c.mid.params != nil {
					attrs["expand_activation_params"] = c.mid.params
				}
			}
			if Wp != nil {
				attrs["dw_activation"] = c.mid.name
				if c.mid.params != nil {
					attrs["dw_activation_params"] = c.mid.params
				}
			}
			in := []*Tensor{nhwcOf(X, F32), We, Be, Wd, Bd, Wp, Bp, Z}
			if pre {
				var shapes []int64
				for _, i := range []int{1, 3, 5} {
					w := in[i]
					if w == nil {
						continue
					}
					grp := 1
					if i == 3 {
						grp = ce
					}
					p, ok := PrepackConvWeightsNHWC(w.F32(), w.Shape, grp)
					if !ok {
						t.Fatalf("%s: not prepackable", c.name)
					}
					shapes = append(shapes, ints64(w.Shape)...)
					in[i] = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
				}
				attrs[convChainPackedAttr] = shapes
			}
			what := fmt.Sprintf("%d:%s/prepacked=%v", ci, c.name, pre)
			got := nhwcRunBoth(t, what, "cuvil::FusedConvChain", attrs, in...)
			nnCheck(t, what, got, want.Shape, nnF64(want), 1e-4)
			// Row bands and the channel split, each at 1, 2 and 3
			// threads: the same bits as the automatic choice.
			for _, force := range []int{1, 2} {
				convChainForce = force
				w := fmt.Sprintf("%s/force=%d", what, force)
				o := nhwcRunBoth(t, w, "cuvil::FusedConvChain", attrs, in...)
				convChainForce = 0
				for j, v := range o.F32() {
					if v != got.F32()[j] {
						t.Fatalf("%s: [%d] = %v, want %v", w, j, v, got.F32()[j])
					}
				}
			}
			if pre && (ci < 2 || c.name == "small7_res") {
				// No allocation per run once warm (session runs), in row
				// bands and in the channel split.
				for _, threads := range []int{1, 2} {
					for _, force := range []int{1, 2} {
						convChainForce = force
						n := nnNode("cuvil::FusedConvChain", 1, attrs, 1, in...)
						n.Pool = NewWorkPool(WithThreads(threads))
						if a := testing.AllocsPerRun(5, func() { _ = FusedConvChain(n) }); a != 0 {
							t.Errorf("%s: %v allocations per run at %d threads, force=%d", what, a, threads, force)
						}
						n.Pool.Close()
						convChainForce = 0
					}
				}
			}
			// Without a pool (constant folding): band buffers in the node.
			n := nnNode("cuvil::FusedConvChain", 1, attrs, 1, in...)
			if err := FusedConvChain(n); err != nil {
				t.Fatalf("%s/nopool: %v", what, err)
			}
			for j, v := range n.Out[0].F32() {
				if v != got.F32()[j] {
					t.Fatalf("%s/nopool: [%d] = %v, want %v", what, j, v, got.F32()[j])
				}
			}
		}
	}
	// An empty batch: an empty output.
	n := nnNode("cuvil::FusedConvChain", 1, Attrs{"pads": []int64{1, 1, 1, 1}}, 1, nnRand(r, 0, 5, 5, 4), nnRand(r, 8, 4, 1, 1), nil, nnRand(r, 8, 1, 3, 3))
	if err := FusedConvChain(n); err != nil || len(n.Out[0].Shape) != 4 || n.Out[0].Shape[0] != 0 {
		t.Fatalf("empty batch: %v, shape %v", err, n.Out[0].Shape)
	}
	// Bad input is an error naming the node, not a panic.
	for _, bad := range []struct {
		what  string
		attrs Attrs
		in    []*Tensor
	}{
		{"no expand or project", nil, []*Tensor{nnRand(r, 1, 5, 5, 4), nil, nil, nnRand(r, 4, 1, 3, 3)}},
		{"Wd not depthwise", nil, []*Tensor{nnRand(r, 1, 5, 5, 4), nnRand(r, 8, 4, 1, 1), nil, nnRand(r, 8, 2, 3, 3)}},
		{"We of the wrong input channels", nil, []*Tensor{nnRand(r, 1, 5, 5, 4), nnRand(r, 8, 3, 1, 1), nil, nnRand(r, 8, 1, 3, 3)}},
		{"unknown activation before a projection", Attrs{"dw_activation": "Softsign"}, []*Tensor{nnRand(r, 1, 5, 5, 4), nil, nil, nnRand(r, 4, 1, 3, 3), nil, nnRand(r, 2, 4, 1, 1)}},
		{"packed of the wrong length", Attrs{convChainPackedAttr: []int64{8, 4, 1, 1, 8, 1, 3, 3}}, []*Tensor{nnRand(r, 1, 5, 5, 4), nnRand(r, 7), nil, nnRand(r, 72)}},
		{"packed shapes short", Attrs{convChainPackedAttr: []int64{8, 4, 1, 1}}, []*Tensor{nnRand(r, 1, 5, 5, 4), nnRand(r, 7), nil, nnRand(r, 72)}},
		{"one channel", nil, []*Tensor{nnRand(r, 1, 5, 5, 1), nil, nil, nnRand(r, 1, 1, 3, 3), nil, nnRand(r, 2, 1, 1, 1)}},
		{"residual of the wrong shape", nil, []*Tensor{nnRand(r, 1, 5, 5, 4), nil, nil, nnRand(r, 4, 1, 3, 3), nil, nnRand(r, 2, 4, 1, 1), nil, nnRand(r, 1, 5, 5, 4)}},
		{"X rank 3", nil, []*Tensor{nnRand(r, 5, 5, 4), nnRand(r, 8, 4, 1, 1), nil, nnRand(r, 8, 1, 3, 3)}},
	} {
		n := nnNode("cuvil::FusedConvChain", 1, bad.attrs, 1, bad.in...)
		n.Pool = NewWorkPool(WithThreads(1))
		err := FusedConvChain(n)
		n.Pool.Close()
		if err == nil {
			t.Errorf("%s: accepted", bad.what)
		}
	}
}
