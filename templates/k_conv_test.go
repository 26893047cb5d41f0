package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// refConv is a direct float64 N-D convolution with explicit begin pads.
func refConv(x, w, b []float64, xs, ws []int, group int, s, d, pb, out []int) []float64 {
	nd := len(xs) - 2
	N, C, M := xs[0], xs[1], ws[0]
	Cg, Mg := C/group, M/group
	in, k := xs[2:], ws[2:]
	inSize, kSize, outSize := 1, 1, 1
	for i := 0; i < nd; i++ {
		inSize *= in[i]
		kSize *= k[i]
		outSize *= out[i]
	}
	y := make([]float64, N*M*outSize)
	oi, ki := make([]int, nd), make([]int, nd)
	for bn := 0; bn < N; bn++ {
		for m := 0; m < M; m++ {
			g := m / Mg
			for o := 0; o < outSize; o++ {
				rem := o
				for i := nd - 1; i >= 0; i-- {
					oi[i] = rem % out[i]
					rem /= out[i]
				}
				sum := 0.0
				if b != nil {
					sum = b[m]
				}
				for c := 0; c < Cg; c++ {
					for kf := 0; kf < kSize; kf++ {
						rem := kf
						for i := nd - 1; i >= 0; i-- {
							ki[i] = rem % k[i]
							rem /= k[i]
						}
						off, ok := 0, true
						for i := 0; i < nd; i++ {
							p := oi[i]*s[i] - pb[i] + ki[i]*d[i]
							if p < 0 || p >= in[i] {
								ok = false
							}
							off = off*in[i] + p
						}
						if ok {
							sum += x[(bn*C+g*Cg+c)*inSize+off] * w[(m*Cg+c)*kSize+kf]
						}
					}
				}
				y[(bn*M+m)*outSize+o] = sum
			}
		}
	}
	return y
}

func ints64(v []int) []int64 {
	o := make([]int64, len(v))
	for i, x := range v {
		o[i] = int64(x)
	}
	return o
}

func TestConv(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	type tc struct {
		xs, ws     []int
		group      int
		s, d, pads []int
		autoPad    string
		bias       bool
	}
	cases := []tc{
		{[]int{1, 3, 7, 9}, []int{5, 3, 3, 3}, 1, []int{1, 1}, []int{1, 1}, []int{1, 1, 1, 1}, "", true},
		{[]int{2, 4, 9, 7}, []int{6, 2, 3, 2}, 2, []int{2, 1}, []int{1, 2}, []int{0, 1, 2, 0}, "", false},
		{[]int{1, 5, 11, 10}, []int{5, 1, 3, 3}, 5, []int{2, 2}, []int{1, 1}, []int{1, 1, 1, 1}, "", true}, // depthwise
		{[]int{2, 7, 9, 13}, []int{7, 1, 3, 3}, 7, nil, nil, []int{1, 1, 1, 1}, "", false},                 // depthwise, stride 1
		{[]int{1, 3, 10, 11}, []int{3, 1, 5, 3}, 3, []int{3, 2}, []int{2, 3}, []int{0, 2, 3, 1}, "", true}, // depthwise, dilated, asymmetric pads
		{[]int{1, 4, 6, 5}, []int{4, 1, 3, 3}, 4, []int{1, 3}, nil, nil, "SAME_UPPER", true},               // depthwise, stride 3
		{[]int{1, 4, 6, 5}, []int{8, 1, 3, 3}, 4, nil, nil, []int{1, 1, 1, 1}, "", true},                   // channel multiplier 2 (GEMM path)
		{[]int{2, 6, 5, 7}, []int{3, 6, 1, 1}, 1, nil, nil, nil, "", true},                                 // pointwise
		{[]int{1, 2, 6, 5}, []int{3, 2, 1, 1}, 1, []int{2, 2}, nil, nil, "", false},
		{[]int{1, 3, 13, 11}, []int{4, 3, 3, 5}, 1, []int{2, 3}, []int{1, 1}, nil, "SAME_UPPER", true},
		{[]int{1, 3, 13, 11}, []int{4, 3, 4, 2}, 1, []int{2, 3}, []int{2, 1}, nil, "SAME_LOWER", false},
		{[]int{1, 3, 13, 11}, []int{4, 3, 3, 3}, 1, []int{2, 2}, nil, nil, "VALID", true},
		{[]int{3, 3, 17}, []int{5, 3, 4}, 1, []int{3}, []int{2}, []int{2, 1}, "", true},                                    // 1-D
		{[]int{1, 4, 5, 6, 7}, []int{6, 2, 3, 2, 3}, 2, []int{2, 1, 2}, []int{1, 2, 1}, []int{1, 0, 1, 1, 1, 0}, "", true}, // 3-D
		{[]int{1, 2, 5, 4, 3}, []int{3, 2, 2, 2, 2}, 1, nil, nil, nil, "SAME_UPPER", false},
		{[]int{2, 3, 7}, []int{2, 3, 1}, 1, []int{1}, nil, []int{0, 0}, "", true}, // 1-D pointwise
		// 3-D (mc3_18's 3x3x3 and 1x3x3 / 3x1x1 factorised kernels):
		// strides, dilations, asymmetric pads, a kernel wider than the input.
		{[]int{1, 5, 6, 9, 8}, []int{7, 5, 3, 3, 3}, 1, []int{1, 2, 2}, nil, []int{1, 1, 1, 1, 1, 1}, "", true},
		{[]int{2, 3, 7, 5, 11}, []int{4, 3, 1, 3, 3}, 1, []int{2, 1, 3}, []int{1, 2, 2}, []int{0, 2, 1, 0, 1, 3}, "", false},
		{[]int{1, 6, 9, 4, 4}, []int{6, 2, 3, 1, 1}, 3, []int{3, 1, 1}, []int{3, 1, 1}, []int{3, 0, 0, 2, 0, 0}, "", true},
		{[]int{1, 2, 3, 3, 2}, []int{3, 2, 2, 2, 5}, 1, nil, nil, []int{0, 1, 0, 1, 1, 3}, "", true},
	}
	for ci, c := range cases {
		nd := len(c.xs) - 2
		X, W := nnRand(r, c.xs...), nnRand(r, c.ws...)
		var B *Tensor
		if c.bias {
			B = nnRand(r, c.ws[0])
		}
		attrs := Attrs{"group": int64(c.group), "kernel_shape": ints64(c.ws[2:])}
		s, d, pb, pe := make([]int, nd), make([]int, nd), make([]int, nd), make([]int, nd)
		out := make([]int, nd)
		for i := 0; i < nd; i++ {
			s[i], d[i] = 1, 1
			if c.s != nil {
				s[i] = c.s[i]
			}
			if c.d != nil {
				d[i] = c.d[i]
			}
			if c.pads != nil {
				pb[i], pe[i] = c.pads[i], c.pads[i+nd]
			}
			ek := (c.ws[2+i]-1)*d[i] + 1
			in := c.xs[2+i]
			switch c.autoPad {
			case "SAME_UPPER", "SAME_LOWER":
				out[i] = (in + s[i] - 1) / s[i]
				total := max(0, (out[i]-1)*s[i]+ek-in)
				pb[i] = total / 2
				if c.autoPad == "SAME_LOWER" {
					pb[i] = total - total/2
				}
			default:
				out[i] = (in+pb[i]+pe[i]-ek)/s[i] + 1
			}
		}
		if c.s != nil {
			attrs["strides"] = ints64(c.s)
		}
		if c.d != nil {
			attrs["dilations"] = ints64(c.d)
		}
		if c.pads != nil {
			attrs["pads"] = ints64(c.pads)
		}
		if c.autoPad != "" {
			attrs["auto_pad"] = c.autoPad
		}
		for _, dt := range nnFloatTypes {
			in := nnInputsAs([]*Tensor{X, W, B}, dt)
			var bd []float64
			if B != nil {
				bd = nnF64(in[2])
			}
			want := refConv(nnF64(in[0]), nnF64(in[1]), bd, c.xs, c.ws, c.group, s, d, pb, out)
			shape := append([]int{c.xs[0], c.ws[0]}, out...)
			for _, v := range []int{1, 11} {
				ins := in
				if B == nil {
					ins = in[:2]
				}
				got := nnRun(t, "Conv", v, attrs, 1, ins...)
				nnCheck(t, fmt.Sprintf("Conv case %d v%d %v", ci, v, dt), got[0], shape, want, nnTol(dt)*10)
			}
		}
	}
}

// TestConvConformance uses the inputs and expected outputs of ONNX's
// test_basic_conv_with_padding, test_conv_with_strides_padding,
// test_conv_with_strides_and_asymmetric_padding and test_conv_with_autopad_same.
func TestConvConformance(t *testing.T) {
	seq := func(h, w int) *Tensor {
		x := &Tensor{}
		x.Resize(F32, 1, 1, h, w)
		for i := range x.F32() {
			x.F32()[i] = float32(i)
		}
		return x
	}
	ones := nnT([]int{1, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	f := func(v ...float64) []float64 { return v }
	cases := []struct {
		name  string
		x     *Tensor
		attrs Attrs
		shape []int
		want  []float64
	}{
		{"basic_conv_with_padding", seq(5, 5), Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}, []int{1, 1, 5, 5},
			f(12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84)},
		{"basic_conv_without_padding", seq(5, 5), Attrs{"kernel_shape": []int64{3, 3}}, []int{1, 1, 3, 3},
			f(54, 63, 72, 99, 108, 117, 144, 153, 162)},
		{"conv_with_strides_padding", seq(7, 5), Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}, "strides": []int64{2, 2}}, []int{1, 1, 4, 3},
			f(12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124)},
		{"conv_with_strides_and_asymmetric_padding", seq(7, 5), Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 0, 1, 0}, "strides": []int64{2, 2}}, []int{1, 1, 4, 2},
			f(21, 33, 99, 117, 189, 207, 171, 183)},
		{"conv_with_autopad_same", seq(5, 5), Attrs{"kernel_shape": []int64{3, 3}, "auto_pad": "SAME_LOWER", "strides": []int64{2, 2}}, []int{1, 1, 3, 3},
			f(12, 27, 24, 63, 108, 81, 72, 117, 84)},
	}
	for _, c := range cases {
		got := nnRun(t, "Conv", 11, c.attrs, 1, c.x, ones)
		nnCheck(t, c.name, got[0], c.shape, c.want, 0)
	}
}

func refConvTranspose(x, w, b []float64, xs, ws []int, group int, s, d, pb, out []int) []float64 {
	nd := len(xs) - 2
	N, C := xs[0], xs[1]
	Cg, Mg := C/group, ws[1]
	M := Mg * group
	in, k := xs[2:], ws[2:]
	inSize, kSize, outSize := 1, 1, 1
	for i := 0; i < nd; i++ {
		inSize *= in[i]
		kSize *= k[i]
		outSize *= out[i]
	}
	y := make([]float64, N*M*outSize)
	ii, ki := make([]int, nd), make([]int, nd)
	for bn := 0; bn < N; bn++ {
		for m := 0; m < M; m++ {
			for o := 0; o < outSize; o++ {
				if b != nil {
					y[(bn*M+m)*outSize+o] = b[m]
				}
			}
		}
		for c := 0; c < C; c++ {
			g := c / Cg
			for p := 0; p < inSize; p++ {
				rem := p
				for i := nd - 1; i >= 0; i-- {
					ii[i] = rem % in[i]
					rem /= in[i]
				}
				for mm := 0; mm < Mg; mm++ {
					for kf := 0; kf < kSize; kf++ {
						rem := kf
						for i := nd - 1; i >= 0; i-- {
							ki[i] = rem % k[i]
							rem /= k[i]
						}
						off, ok := 0, true
						for i := 0; i < nd; i++ {
							q := ii[i]*s[i] - pb[i] + ki[i]*d[i]
							if q < 0 || q >= out[i] {
								ok = false
							}
							off = off*out[i] + q
						}
						if ok {
							m := g*Mg + mm
							y[(bn*M+m)*outSize+off] += x[(bn*C+c)*inSize+p] * w[(c*Mg+mm)*kSize+kf]
						}
					}
				}
			}
		}
	}
	return y
}

func TestConvTranspose(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	type tc struct {
		xs, ws                 []int
		group                  int
		s, d, pads, opad, oshp []int
		autoPad                string
		bias                   bool
	}
	cases := []tc{
		{[]int{1, 3, 5, 4}, []int{3, 2, 3, 3}, 1, []int{2, 2}, nil, nil, nil, nil, "", true},
		{[]int{2, 4, 3, 5}, []int{4, 3, 2, 3}, 2, []int{3, 2}, []int{2, 1}, []int{1, 0, 2, 1}, []int{1, 1}, nil, "", false},
		{[]int{1, 1, 3, 3}, []int{1, 2, 3, 3}, 1, []int{3, 2}, nil, nil, nil, []int{10, 8}, "", true}, // test_convtranspose_output_shape
		{[]int{1, 1, 3, 3}, []int{1, 2, 3, 3}, 1, []int{3, 2}, nil, nil, []int{1, 1}, []int{10, 8}, "", false},
		{[]int{1, 1, 3, 3}, []int{1, 2, 3, 3}, 1, []int{2, 2}, nil, nil, nil, nil, "SAME_UPPER", false}, // autopad_same
		{[]int{1, 2, 4, 3}, []int{2, 2, 3, 2}, 1, []int{2, 3}, nil, nil, nil, nil, "SAME_LOWER", true},
		{[]int{2, 3, 7}, []int{3, 2, 3}, 1, []int{2}, []int{2}, []int{1, 2}, nil, nil, "", true},      // 1-D
		{[]int{1, 2, 3, 4, 3}, []int{2, 3, 2, 3, 2}, 1, []int{2, 1, 2}, nil, nil, nil, nil, "", true}, // 3-D
		// unet's up-convolutions (2x2 stride 2), 3x3 and 4x4 stride 2 with
		// padding, odd channels, groups 3 and 8, dilations, big enough to
		// split over threads and channel blocks.
		{[]int{1, 33, 9, 11}, []int{33, 17, 2, 2}, 1, []int{2, 2}, nil, nil, nil, nil, "", true},
		{[]int{2, 9, 7, 6}, []int{9, 5, 3, 3}, 3, []int{2, 2}, nil, []int{1, 1, 1, 1}, []int{1, 1}, nil, "", true},
		{[]int{1, 16, 10, 9}, []int{16, 3, 4, 4}, 8, []int{2, 2}, nil, []int{1, 2, 1, 0}, nil, nil, "", true},
		{[]int{1, 7, 13, 12}, []int{7, 11, 5, 3}, 1, []int{3, 1}, []int{2, 3}, []int{2, 1, 3, 2}, []int{2, 0}, nil, "", false},
		{[]int{1, 40, 30, 31}, []int{40, 21, 3, 3}, 1, []int{1, 1}, nil, []int{1, 1, 1, 1}, nil, nil, "", true},
		{[]int{1, 5, 4, 4}, []int{5, 3, 7, 7}, 1, []int{3, 3}, []int{1, 1}, []int{6, 5, 4, 7}, nil, nil, "", true},
		{[]int{2, 6, 40}, []int{6, 4, 4}, 2, []int{2}, []int{3}, []int{4, 1}, nil, nil, "", true}, // 1-D
	}
	for ci, c := range cases {
		nd := len(c.xs) - 2
		X, W := nnRand(r, c.xs...), nnRand(r, c.ws...)
		M := c.ws[1] * c.group
		var B *Tensor
		if c.bias {
			B = nnRand(r, M)
		}
		attrs := Attrs{"group": int64(c.group)}
		s, d, pb, out := make([]int, nd), make([]int, nd), make([]int, nd), make([]int, nd)
		for i := 0; i < nd; i++ {
			s[i], d[i] = 1, 1
			if c.s != nil {
				s[i] = c.s[i]
			}
			if c.d != nil {
				d[i] = c.d[i]
			}
			op := 0
			if c.opad != nil {
				op = c.opad[i]
			}
			full := s[i]*(c.xs[2+i]-1) + op + (c.ws[2+i]-1)*d[i] + 1
			switch {
			case c.oshp != nil || c.autoPad != "":
				out[i] = c.xs[2+i] * s[i]
				if c.oshp != nil {
					out[i] = c.oshp[i]
				}
				total := full - out[i]
				// Python floor division, as in ONNX's reference.
				fl := total / 2
				if total < 0 && total%2 != 0 {
					fl--
				}
				pb[i] = total - fl
				if c.autoPad == "SAME_UPPER" {
					pb[i] = fl
				}
			default:
				pe := 0
				if c.pads != nil {
					pb[i], pe = c.pads[i], c.pads[i+nd]
				}
				out[i] = full - pb[i] - pe
			}
		}
		for k, v := range map[string][]int{"strides": c.s, "dilations": c.d, "pads": c.pads, "output_padding": c.opad, "output_shape": c.oshp} {
			if v != nil {
				attrs[k] = ints64(v)
			}
		}
		if c.autoPad != "" {
			attrs["auto_pad"] = c.autoPad
		}
		for _, dt := range nnFloatTypes {
			in := nnInputsAs([]*Tensor{X, W, B}, dt)
			var bd []float64
			if B != nil {
				bd = nnF64(in[2])
			}
			want := refConvTranspose(nnF64(in[0]), nnF64(in[1]), bd, c.xs, c.ws, c.group, s, d, pb, out)
			shape := append([]int{c.xs[0], M}, out...)
			for _, v := range []int{1, 11} {
				ins := in
				if B == nil {
					ins = in[:2]
				}
				got := nnRun(t, "ConvTranspose", v, attrs, 1, ins...)
				nnCheck(t, fmt.Sprintf("ConvTranspose case %d v%d %v", ci, v, dt), got[0], shape, want, nnTol(dt)*10)
				for _, threads := range []int{2, 3} {
					n := nnNode("ConvTranspose", v, attrs, 1, ins...)
					n.Pool = NewWorkPool(WithThreads(threads))
					err := ConvTranspose(n)
					n.Pool.Close()
					if err != nil {
						t.Fatal(err)
					}
					a, b := nnF64(got[0]), nnF64(n.Out[0])
					for i := range a {
						if a[i] != b[i] {
							t.Fatalf("ConvTranspose case %d v%d %v: 1 and %d threads differ at %d: %v vs %v", ci, v, dt, threads, i, a[i], b[i])
						}
					}
				}
			}
		}
	}
}

// TestConvTransposeConformance: test_convtranspose_autopad_same's first
// output row, and test_convtranspose's shape (ONNX backend data).
func TestConvTransposeConformance(t *testing.T) {
	x := nnT([]int{1, 1, 3, 3}, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	w := &Tensor{}
	w.Resize(F32, 1, 2, 3, 3)
	for i := range w.F32() {
		w.F32()[i] = 1
	}
	got := nnRun(t, "ConvTranspose", 11, Attrs{"auto_pad": "SAME_UPPER", "strides": []int64{2, 2}}, 1, x, w)
	want := []float64{0, 0, 1, 1, 3, 2, 0, 0, 1, 1, 3, 2, 3, 3, 8, 5, 12, 7, 3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8}
	nnCheck(t, "convtranspose_autopad_same", &Tensor{DType: F32, Shape: []int{1, 1, 6, 6}, Data: got[0].F32()[:36]}, []int{1, 1, 6, 6}, want, 0)
}

func TestConvNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	attrs := Attrs{"pads": []int64{1, 1, 1, 1}, "strides": []int64{2, 1}}
	if a := nnAllocs(t, nnNode("Conv", 11, attrs, 1, nnRand(r, 1, 3, 11, 9), nnRand(r, 4, 3, 3, 3), nnRand(r, 4)), Conv); a != 0 {
		t.Fatalf("Conv allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("Conv", 11, nil, 1, nnRand(r, 1, 2, 5, 4, 3), nnRand(r, 3, 2, 2, 2, 2)), Conv); a != 0 {
		t.Fatalf("Conv 3-D allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("ConvTranspose", 11, Attrs{"strides": []int64{2, 2}}, 1, nnAs(nnRand(r, 1, 3, 5, 4), F16), nnAs(nnRand(r, 3, 2, 3, 3), F16)), ConvTranspose); a != 0 {
		t.Fatalf("ConvTranspose f16 allocates %v", a)
	}
}

func BenchmarkConv3x3(b *testing.B) {
	r := rand.New(rand.NewSource(9))
	n := nnNode("Conv", 11, Attrs{"pads": []int64{1, 1, 1, 1}}, 1, nnRand(r, 1, 64, 56, 56), nnRand(r, 64, 64, 3, 3), nnRand(r, 64))
	b.SetBytes(2 * 64 * 64 * 9 * 56 * 56)
	for i := 0; i < b.N; i++ {
		Conv(n)
	}
}

// TestConvPrepacked checks Conv and FusedConv with W prepacked as gen
// stores it against the same nodes with plain W, on odd sizes, groups, k
// longer than one GEMM k block, and 1 or 3 threads (column and row splits).
func TestConvPrepacked(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	cases := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"3x3pad", []int{2, 6, 9, 11}, []int{5, 6, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"strided_group", []int{1, 6, 13, 7}, []int{9, 2, 3, 3}, Attrs{"group": int64(3), "strides": []int64{2, 2}, "pads": []int64{0, 1, 1, 0}}},
		{"pointwise_blocks", []int{1, 3, 17, 19}, []int{300, 3, 1, 1}, nil},
		{"deep_k", []int{1, 37, 7, 9}, []int{13, 37, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"rows_split", []int{1, 64, 5, 5}, []int{77, 64, 1, 1}, nil},
		{"1d", []int{2, 3, 23}, []int{4, 3, 5}, Attrs{"dilations": []int64{2}}},
		{"3d", []int{1, 2, 5, 4, 3}, []int{3, 2, 2, 2, 2}, nil},
	}
	for _, c := range cases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		group := 1
		if g, ok := c.attrs["group"]; ok {
			group = int(g.(int64))
		}
		packed, ok := PrepackConvWeights(W.F32(), W.Shape, group)
		if !ok {
			t.Fatalf("%s: not prepackable", c.name)
		}
		WP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
		Z := nnRand(r, nnRun(t, "Conv", 11, c.attrs, 1, X, W, B)[0].Shape...)
		for _, op := range []string{"Conv", "cuvil::FusedConv"} {
			for _, threads := range []int{1, 3} {
				attrs := Attrs{}
				for k, v := range c.attrs {
					attrs[k] = v
				}
				if op != "Conv" {
					attrs["activation"] = "Relu"
				}
				ref := nnRun(t, op, 11, attrs, 1, X, W, B)[0]
				in := []*Tensor{X, WP, B}
				if op != "Conv" {
					in = append(in, Z)
					ref = nnRun(t, op, 11, attrs, 1, X, W, B, Z)[0]
				}
				pattrs := Attrs{ConvPackedAttr: ints64(W.Shape)}
				for k, v := range attrs {
					pattrs[k] = v
				}
				n := nnNode(op, 11, pattrs, 1, in...)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := Kernels[op](n); err != nil {
					t.Fatalf("%s %s: %v", c.name, op, err)
				}
				n.Pool.Close()
				nnCheck(t, c.name+"/"+op, n.Out[0], ref.Shape, nnF64(ref), 1e-5)
			}
		}
	}
	// A prepacked W of the wrong length is an error, not a panic.
	n := nnNode("Conv", 11, Attrs{ConvPackedAttr: []int64{4, 3, 3, 3}}, 1, nnRand(r, 1, 3, 5, 5), nnRand(r, 10))
	if err := Conv(n); err == nil {
		t.Fatal("Conv accepted a prepacked W of the wrong length")
	}
}

// TestConv1DPaddedBeyondInput covers 1-D convolutions whose kernel is
// longer than the input, which only the padding makes valid (ONNX's
// test_Conv1d_pad2size1: length 1, kernel 5, pads 2+2), against the
// float64 reference, in every float dtype.
func TestConv1DPaddedBeyondInput(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		xs, ws []int
		pads   []int
		stride int
	}{
		{[]int{1, 4, 1}, []int{4, 4, 5}, []int{2, 2}, 1},
		{[]int{2, 3, 2}, []int{5, 3, 5}, []int{2, 2}, 1},
		{[]int{1, 2, 1}, []int{3, 2, 3}, []int{1, 1}, 1},
		{[]int{1, 3, 3}, []int{2, 3, 7}, []int{3, 3}, 2},
	} {
		X, W, B := nnRand(r, c.xs...), nnRand(r, c.ws...), nnRand(r, c.ws[0])
		k := c.ws[2]
		out := (c.xs[2]+c.pads[0]+c.pads[1]-k)/c.stride + 1
		attrs := Attrs{"kernel_shape": []int64{int64(k)}, "pads": ints64(c.pads), "strides": []int64{int64(c.stride)}, "dilations": []int64{1}, "group": int64(1)}
		for _, dt := range nnFloatTypes {
			in := nnInputsAs([]*Tensor{X, W, B}, dt)
			want := refConv(nnF64(in[0]), nnF64(in[1]), nnF64(in[2]), c.xs, c.ws, 1, []int{c.stride}, []int{1}, c.pads[:1], []int{out})
			for _, v := range []int{1, 11} {
				got := nnRun(t, "Conv", v, attrs, 1, in...)
				nnCheck(t, fmt.Sprintf("Conv1d v%d x%v w%v pads %v %v", v, c.xs, c.ws, c.pads, dt), got[0], []int{c.xs[0], c.ws[0], out}, want, nnTol(dt)*10)
			}
		}
	}
}
