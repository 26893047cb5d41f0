package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules for ops added with opsets 18-27: Col2Im, CenterCropPad.
func init() {
	reg(inferCol2Im, "Col2Im")
	reg(inferCenterCropPad, "CenterCropPad")
}

// inferCol2Im: input [N, C*prod(block_shape), L] -> [N, C, image_shape...].
func inferCol2Im(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	img, ok1 := x.ints(n.Input(1))
	blk, ok2 := x.ints(n.Input(2))
	if !ok1 || !ok2 {
		if v := n.Input(1); v != nil && v.Type.Rank() == 1 && v.Type.Shape[0].IsConst() {
			s := ir.Shape{t.Shape[0], x.freshDim("")}
			for i := int64(0); i < v.Type.Shape[0].Size; i++ {
				s = append(s, x.freshDim(""))
			}
			x.setOut(n, 0, t.DType, s)
			return nil
		}
		x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
		return nil
	}
	if len(img) != len(blk) || len(img) == 0 {
		return fmt.Errorf("image_shape %v and block_shape %v differ in length", img, blk)
	}
	prod := int64(1)
	for _, b := range blk {
		if b <= 0 {
			return fmt.Errorf("block_shape %v", blk)
		}
		prod *= b
	}
	c, err := x.divDim(t.Shape[1], prod)
	if err != nil {
		return err
	}
	s := ir.Shape{t.Shape[0], c}
	for _, d := range img {
		s = append(s, ir.D(d))
	}
	x.setOut(n, 0, t.DType, s)
	return nil
}

// inferCenterCropPad: the dims of axes (all by default) take the values
// of the shape input.
func inferCenterCropPad(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := n.Attr("axes"); a != nil {
		if axes, err = normAxes(a.Ints, r); err != nil {
			return err
		}
	}
	out := cloneShape(t.Shape)
	sh, ok := x.ints(n.Input(1))
	if ok && len(sh) != len(axes) {
		return fmt.Errorf("shape %v for %d axes", sh, len(axes))
	}
	for i, a := range axes {
		if ok {
			out[a] = ir.D(sh[i])
		} else {
			out[a] = x.freshDim("")
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}
