package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape inference for the signal and image ops of opsets 17-22: DFT,
// AffineGrid, DeformConv (as Conv), ImageDecoder.

func init() {
	reg(inferDFT, "DFT")
	reg(inferAffineGrid, "AffineGrid")
	reg(inferConv, "DeformConv")
	reg(inferImageDecoder, "ImageDecoder")
}

// inferDFT: the axis dim becomes dft_length (L/2+1 when onesided), the
// last dim 2; inverse with onesided gives the real signal of length
// dft_length (default 2*(bins-1)) with a last dim of 1.
func inferDFT(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 2, -1)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	axis := n.AttrInt("axis", 1)
	if n.Version >= 20 || n.Version == 0 && len(n.Inputs) > 2 {
		axis = -2
		if v := n.Input(2); v != nil {
			a, ok := x.ints(v)
			if !ok || len(a) != 1 {
				return x.freshAll(n, t)
			}
			axis = a[0]
		}
	}
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis > int64(r-2) {
		return fmt.Errorf("axis %d is outside the signal axes of rank %d", n.AttrInt("axis", 1), r)
	}
	inverse, onesided := n.IntAttr("inverse") != 0, n.IntAttr("onesided") != 0
	out := cloneShape(t.Shape)
	L := t.Shape[axis]
	if inverse && onesided {
		if L.IsConst() {
			L = ir.D(2 * (L.Size - 1))
		} else {
			L = x.freshDim("")
		}
	}
	if v := n.Input(1); v != nil {
		if l, ok := x.ints(v); ok && len(l) == 1 {
			L = ir.D(l[0])
		} else {
			L = x.freshDim("")
		}
	}
	out[axis], out[r-1] = L, ir.D(2)
	switch {
	case inverse && onesided:
		out[r-1] = ir.D(1)
	case onesided:
		if L.IsConst() {
			out[axis] = ir.D(L.Size/2 + 1)
		} else {
			out[axis] = x.freshDim("")
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

// inferAffineGrid: size [N, C, H, W] gives [N, H, W, 2]; [N, C, D, H, W]
// gives [N, D, H, W, 3].
func inferAffineGrid(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	s, ok, err := x.shapeFromInput(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		sz, err := x.inRank(n, 1, 1, 1)
		if err != nil {
			return err
		}
		if !sz.Shape[0].IsConst() {
			return fmt.Errorf("size has unknown length")
		}
		k := int(sz.Shape[0].Size) - 1
		if k < 3 {
			return fmt.Errorf("size has %d entries, want 4 or 5", k+1)
		}
		out := make(ir.Shape, k)
		out[0] = t.Shape[0]
		for i := 1; i < k-1; i++ {
			out[i] = x.freshDim("")
		}
		out[k-1] = ir.D(int64(k - 2))
		x.setOut(n, 0, t.DType, out)
		return nil
	}
	if len(s) != 4 && len(s) != 5 {
		return fmt.Errorf("size %v has %d entries, want 4 or 5", s, len(s))
	}
	out := ir.Shape{t.Shape[0]}
	out = append(out, s[2:]...)
	out = append(out, ir.D(int64(len(s)-2)))
	x.setOut(n, 0, t.DType, out)
	return nil
}

// inferImageDecoder: [H, W, C] uint8 with C 3 for RGB/BGR and 1 for
// Grayscale; H and W are known only when the image is decoded.
func inferImageDecoder(x *inferer, n *ir.Node) error {
	if _, err := x.inRank(n, 0, 1, 1); err != nil {
		return err
	}
	c := int64(3)
	switch f := n.StringAttr("pixel_format"); f {
	case "RGB", "BGR":
	case "Grayscale":
		c = 1
	default:
		return fmt.Errorf("unknown pixel_format %q", f)
	}
	x.setOut(n, 0, ir.U8, ir.Shape{x.freshDim("height"), x.freshDim("width"), ir.D(c)})
	return nil
}
