package templates

import "math"

// DeformConv is ONNX DeformConv (v19, v22), 2-D: X [N, C, H, W], W [M,
// C/group, kH, kW], offset [N, offset_group*kH*kW*2, oH, oW] (per tap a
// (dh, dw) pair), optional B [M] and mask [N, offset_group*kH*kW, oH, oW].
// Tap (i, j) of output (oh, ow) samples X bilinearly at (oh*sh - pad_top +
// i*dh + offset_h, ow*sw - pad_left + j*dw + offset_w), corners outside the
// image reading 0, scaled by the mask, and is weighted by W. Sums run in
// float64.
func DeformConv(n *Node) error {
	if ok, err := nnViaF32(n, DeformConv); ok {
		return err
	}
	x, w, off := n.Input(0), n.Input(1), n.Input(2)
	b, mask := n.Input(3), n.Input(4)
	if x == nil || w == nil || off == nil {
		return n.Errorf("needs X, W and offset")
	}
	if len(x.Shape) != 4 || len(w.Shape) != 4 || len(off.Shape) != 4 {
		return n.Errorf("only 2-D deformable convolution is supported (X %v, W %v, offset %v)", x.Shape, w.Shape, off.Shape)
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	M, cg, kH, kW := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	if k := n.Attrs.Ints("kernel_shape"); k != nil && (len(k) != 2 || int(k[0]) != kH || int(k[1]) != kW) {
		return n.Errorf("kernel_shape %v does not match W %v", k, w.Shape)
	}
	group := int(n.Attrs.Int("group", 1))
	og := int(n.Attrs.Int("offset_group", 1))
	if group < 1 || C != cg*group || M%group != 0 {
		return n.Errorf("X has %d channels, W %v with group %d", C, w.Shape, group)
	}
	if og < 1 || C%og != 0 || off.Shape[1] != og*kH*kW*2 || off.Shape[0] != N {
		return n.Errorf("offset %v does not match offset_group %d and kernel %dx%d", off.Shape, og, kH, kW)
	}
	pick := func(name string, def int64) (out [4]int) {
		v := n.Attrs.Ints(name)
		for i := range out {
			out[i] = int(def)
			if i < len(v) {
				out[i] = int(v[i])
			}
		}
		return out
	}
	st, dil, pads := pick("strides", 1), pick("dilations", 1), pick("pads", 0)
	oH := (H+pads[0]+pads[2]-((kH-1)*dil[0]+1))/st[0] + 1
	oW := (W+pads[1]+pads[3]-((kW-1)*dil[1]+1))/st[1] + 1
	if oH < 1 || oW < 1 || off.Shape[2] != oH || off.Shape[3] != oW {
		return n.Errorf("offset %v does not match the output size %dx%d", off.Shape, oH, oW)
	}
	if mask != nil && (len(mask.Shape) != 4 || mask.Shape[0] != N || mask.Shape[1] != og*kH*kW || mask.Shape[2] != oH || mask.Shape[3] != oW) {
		return n.Errorf("mask %v, want [%d %d %d %d]", mask.Shape, N, og*kH*kW, oH, oW)
	}
	if b != nil && b.Len() != M {
		return n.Errorf("B has %d entries, want %d", b.Len(), M)
	}
	y := n.Out[0]
	y.Resize(x.DType, N, M, oH, oW)
	s := miscScr[float64](n)
	xd := s.getF64(0, x.Len())
	for i := range xd {
		xd[i] = ewF64At(x, i)
	}
	wd := s.getF64(1, w.Len())
	for i := range wd {
		wd[i] = ewF64At(w, i)
	}
	taps := kH * kW
	// col[(c*taps+t)] is the sampled (and masked) input of channel c at
	// tap t for one output pixel.
	col := s.getF64(2, C*taps)
	cpo := C / og
	mpg := M / group
	for bi := 0; bi < N; bi++ {
		for oh := 0; oh < oH; oh++ {
			for ow := 0; ow < oW; ow++ {
				for c := 0; c < C; c++ {
					g := c / cpo
					plane := xd[(bi*C+c)*H*W:]
					for i := 0; i < kH; i++ {
						for j := 0; j < kW; j++ {
							t := i*kW + j
							oc := (bi*og*taps*2+(g*taps+t)*2)*oH*oW + oh*oW + ow
							ph := float64(oh*st[0]-pads[0]+i*dil[0]) + ewF64At(off, oc)
							pw := float64(ow*st[1]-pads[1]+j*dil[1]) + ewF64At(off, oc+oH*oW)
							v := deformBilinear(plane, H, W, ph, pw)
							if mask != nil {
								v *= ewF64At(mask, ((bi*og+g)*taps+t)*oH*oW+oh*oW+ow)
							}
							col[c*taps+t] = v
						}
					}
				}
				for m := 0; m < M; m++ {
					g := m / mpg
					sum := 0.0
					if b != nil {
						sum = ewF64At(b, m)
					}
					wr := wd[m*cg*taps : (m+1)*cg*taps]
					cr := col[g*cg*taps : (g+1)*cg*taps]
					for k := range wr {
						sum += wr[k] * cr[k]
					}
					miscSetAt(y, ((bi*M+m)*oH+oh)*oW+ow, sum)
				}
			}
		}
	}
	return nil
}

// deformBilinear samples an H x W plane at (h, w), corners outside reading 0.
func deformBilinear(p []float64, H, W int, h, w float64) float64 {
	h0, w0 := math.Floor(h), math.Floor(w)
	fh, fw := h-h0, w-w0
	r0, c0 := int(h0), int(w0)
	at := func(r, c int) float64 {
		if r < 0 || r >= H || c < 0 || c >= W {
			return 0
		}
		return p[r*W+c]
	}
	if h <= -1 || h >= float64(H) || w <= -1 || w >= float64(W) {
		return 0
	}
	return (1-fh)*((1-fw)*at(r0, c0)+fw*at(r0, c0+1)) + fh*((1-fw)*at(r0+1, c0)+fw*at(r0+1, c0+1))
}
