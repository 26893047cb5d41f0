package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// deformRef is a float64 DeformConv reference: each tap's sample point,
// bilinear weights of its four corners (corners outside count 0), mask,
// weight, summed per output element.
func deformRef(x []float64, xs []int, w []float64, ws []int, off, mask, b []float64, group, og int, pads, st, dil []int) ([]float64, []int) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	M, cg, kH, kW := ws[0], ws[1], ws[2], ws[3]
	oH := (H+pads[0]+pads[2]-(kH-1)*dil[0]-1)/st[0] + 1
	oW := (W+pads[1]+pads[3]-(kW-1)*dil[1]-1)/st[1] + 1
	out := make([]float64, N*M*oH*oW)
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			g := m / (M / group)
			for oh := 0; oh < oH; oh++ {
				for ow := 0; ow < oW; ow++ {
					s := 0.0
					if b != nil {
						s = b[m]
					}
					for ci := 0; ci < cg; ci++ {
						c := g*cg + ci
						ogi := c / (C / og)
						for i := 0; i < kH; i++ {
							for j := 0; j < kW; j++ {
								tap := i*kW + j
								oidx := func(k int) int { return (((n*og+ogi)*kH*kW+tap)*2+k)*oH*oW + oh*oW + ow }
								ph := float64(oh*st[0]-pads[0]+i*dil[0]) + off[oidx(0)]
								pw := float64(ow*st[1]-pads[1]+j*dil[1]) + off[oidx(1)]
								v := 0.0
								for _, r := range []int{int(math.Floor(ph)), int(math.Floor(ph)) + 1} {
									for _, q := range []int{int(math.Floor(pw)), int(math.Floor(pw)) + 1} {
										if r < 0 || r >= H || q < 0 || q >= W {
											continue
										}
										v += (1 - math.Abs(ph-float64(r))) * (1 - math.Abs(pw-float64(q))) * x[((n*C+c)*H+r)*W+q]
									}
								}
								if mask != nil {
									v *= mask[((n*og+ogi)*kH*kW+tap)*oH*oW+oh*oW+ow]
								}
								s += v * w[((m*cg+ci)*kH+i)*kW+j]
							}
						}
					}
					out[((n*M+m)*oH+oh)*oW+ow] = s
				}
			}
		}
	}
	return out, []int{N, M, oH, oW}
}

func TestDeformConv(t *testing.T) {
	type tc struct {
		xs, ws               []int
		group, og            int
		pads, strides, dils  []int
		bias, mask, zeroOffs bool
	}
	cases := []tc{
		{[]int{1, 3, 7, 6}, []int{5, 3, 3, 2}, 1, 1, []int{1, 0, 1, 1}, []int{1, 1}, []int{1, 1}, false, false, false},
		{[]int{2, 4, 6, 7}, []int{6, 2, 2, 3}, 2, 2, []int{0, 1, 1, 0}, []int{2, 1}, []int{1, 2}, true, true, false},
		{[]int{1, 6, 5, 5}, []int{3, 6, 3, 3}, 1, 3, []int{1, 1, 1, 1}, []int{1, 2}, []int{2, 1}, true, true, false},
		{[]int{2, 2, 5, 6}, []int{3, 2, 3, 3}, 1, 1, []int{1, 1, 1, 1}, []int{1, 1}, []int{1, 1}, true, false, true},
	}
	for ci, c := range cases {
		for _, dt := range []DType{F32, F64} {
			t.Run(fmt.Sprintf("%d_%s", ci, dt), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(ci)))
				kH, kW := c.ws[2], c.ws[3]
				oH := (c.xs[2]+c.pads[0]+c.pads[2]-(kH-1)*c.dils[0]-1)/c.strides[0] + 1
				oW := (c.xs[3]+c.pads[1]+c.pads[3]-(kW-1)*c.dils[1]-1)/c.strides[1] + 1
				x := miscRepr(dt, miscRandF64(rng, c.xs...))
				w := miscRepr(dt, miscRandF64(rng, c.ws...))
				offShape := []int{c.xs[0], c.og * kH * kW * 2, oH, oW}
				off := miscRandF64(rng, offShape...)
				for i := range off {
					off[i] *= 2.5
					if c.zeroOffs {
						off[i] = 0
					}
				}
				off = miscRepr(dt, off)
				in := []*Tensor{miscTensorF(dt, x, c.xs...), miscTensorF(dt, w, c.ws...), miscTensorF(dt, off, offShape...), nil, nil}
				var b, mask []float64
				if c.bias {
					b = miscRepr(dt, miscRandF64(rng, c.ws[0]))
					in[3] = miscTensorF(dt, b, c.ws[0])
				}
				if c.mask {
					ms := []int{c.xs[0], c.og * kH * kW, oH, oW}
					mask = miscRepr(dt, miscRandF64(rng, ms...))
					in[4] = miscTensorF(dt, mask, ms...)
				}
				attrs := Attrs{"group": int64(c.group), "offset_group": int64(c.og), "pads": miscI64s(c.pads),
					"strides": miscI64s(c.strides), "dilations": miscI64s(c.dils), "kernel_shape": []int64{int64(kH), int64(kW)}}
				n := &Node{Op: "DeformConv", Version: 22, Attrs: attrs, In: in, Out: []*Tensor{{}}}
				miscRun(t, DeformConv, n)
				want, shape := deformRef(x, c.xs, w, c.ws, off, mask, b, c.group, c.og, c.pads, c.strides, c.dils)
				miscCheckClose(t, "Y", n.Out[0], want, shape, miscTol(dt))
				if c.zeroOffs && !c.mask {
					// Zero offsets: plain convolution.
					conv, _ := miscRefConv2D(x, c.xs, w, c.ws, c.group, c.pads, c.strides, c.dils)
					for i := range conv {
						conv[i] += b[(i/(shape[2]*shape[3]))%shape[1]]
					}
					miscCheckClose(t, "Y vs Conv", n.Out[0], conv, shape, miscTol(dt))
				}
			})
		}
	}
}
