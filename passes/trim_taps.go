package passes

import (
	"math"

	"github.com/cuvil/cuvil/ir"
)

// TrimConvTaps drops the kernel taps of a Conv that read only padding at
// every output position, so they are never multiplied. They arise where a
// dilation or a kernel is large for the map it runs on: DeepLab's ASPP
// convs (3x3, dilation 12/24/36) on the 20x20 or 33x33 maps of a small
// input read the image only through their centre tap, and are 1x1 convs;
// a 7x7 conv on a 3x3 map keeps its middle 5x5. Along each spatial axis
// the live taps are a contiguous range (a tap's input positions move
// monotonically with its index), so the kernel shrinks to the box of live
// taps and the pads shrink by the span of the dropped taps; the output
// shape and every output element are the same (the dropped taps only ever
// multiplied the zeros of the padding).
//
// It needs the input's spatial dims known, constant weights, explicit pads
// (auto_pad NOTSET) and pads that stay non-negative after trimming (else
// the input itself would have to be cropped). Weights with a non-finite
// value in a dropped tap stay (0 * Inf is NaN, which the taps contributed).
var TrimConvTaps = &Pass{
	Name: "trim-conv-taps",
	Doc:  "drop Conv kernel taps that read only padding (dilated convs on small maps)",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				trimConvTaps(r, n)
			}
			return nil
		})
	},
}

// liveTaps returns the first and last tap, of k with dilation d, that
// reads a position of an input of size h for some output position, with
// stride s and begin pad pb over out outputs; ok false if none does.
func liveTaps(h, out, k, s, d, pb int64) (lo, hi int64, ok bool) {
	lo, hi = -1, -1
	for t := int64(0); t < k; t++ {
		first := -pb + t*d           // output 0's position
		last := (out-1)*s - pb + t*d // the last output's
		if last < 0 || first > h-1 { // before or after the input at every output
			continue
		}
		// Some output lands inside: positions step by s, from first to last.
		if first < 0 {
			// the first output position >= 0
			o := (-first + s - 1) / s
			if o*s+first > h-1 {
				continue
			}
		}
		if lo < 0 {
			lo = t
		}
		hi = t
	}
	return lo, hi, lo >= 0
}

func trimConvTaps(r *rewriter, n *ir.Node) {
	if !isOp(n, "Conv") || len(n.Inputs) < 2 || len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return
	}
	x, w, y := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if x == nil || w == nil || !w.IsConst() || w.Const.Raw == nil || !x.Type.Known() || !y.Type.Known() {
		return
	}
	if n.AttrString("auto_pad", "NOTSET") != "NOTSET" {
		return
	}
	ws := w.Const.Shape
	sp := len(ws) - 2
	if sp < 1 || x.Type.Rank() != len(ws) || y.Type.Rank() != len(ws) {
		return
	}
	win, err := readWindow(n, ws[2:])
	if err != nil {
		return
	}
	lo := make([]int64, sp)
	hi := make([]int64, sp)
	trim := false
	for i := 0; i < sp; i++ {
		h, o := x.Type.Shape[2+i], y.Type.Shape[2+i]
		if !h.IsConst() || !o.IsConst() || o.Size < 1 {
			return
		}
		l, u, ok := liveTaps(h.Size, o.Size, ws[2+i], win.strides[i], win.dilations[i], win.pads[i])
		if !ok {
			return // every tap reads padding: the output is the bias; left alone
		}
		lo[i], hi[i] = l, u
		if l > 0 || u < ws[2+i]-1 {
			trim = true
		}
	}
	if !trim {
		return
	}
	pads := make([]int64, 2*sp)
	for i := 0; i < sp; i++ {
		d := win.dilations[i]
		pads[i] = win.pads[i] - lo[i]*d
		pads[sp+i] = win.pads[sp+i] - (ws[2+i]-1-hi[i])*d
		if pads[i] < 0 || pads[sp+i] < 0 {
			return
		}
	}
	t, ok := sliceKernel(w.Const, lo, hi)
	if !ok {
		return
	}
	kernel := make([]int64, sp)
	for i := range kernel {
		kernel[i] = hi[i] - lo[i] + 1
	}
	n.Inputs[1] = r.constant(w.Name+"_trimmed", t)
	n.SetAttr(&ir.Attr{Name: "pads", Kind: ir.AttrInts, Ints: pads})
	if n.Attr("kernel_shape") != nil {
		n.SetAttr(&ir.Attr{Name: "kernel_shape", Kind: ir.AttrInts, Ints: kernel})
	}
}

// sliceKernel returns w[:, :, lo0:hi0+1, lo1:hi1+1, ...] (any element
// type of fixed size), false if a dropped float element is not finite.
func sliceKernel(w *ir.Tensor, lo, hi []int64) (*ir.Tensor, bool) {
	sz := int64(w.DType.Size())
	if sz <= 0 || w.DType.Bits() != 8*int(sz) || int64(len(w.Raw)) != w.NumElements()*sz {
		return nil, false // sub-byte packed types: not worth it
	}
	sp := len(lo)
	shape := append([]int64(nil), w.Shape...)
	for i := 0; i < sp; i++ {
		shape[2+i] = hi[i] - lo[i] + 1
	}
	out := &ir.Tensor{DType: w.DType, Shape: shape, Store: w.Store} // widen-half's f16 storage stays
	out.Raw = make([]byte, 0, (&ir.Tensor{Shape: shape}).NumElements()*sz)
	outer := w.Shape[0] * w.Shape[1]
	taps := int64(1)
	for _, k := range w.Shape[2:] {
		taps *= k
	}
	var vals []float64
	if w.DType.IsFloat() {
		vals = w.Float64s()
	}
	idx := make([]int64, sp)
	for o := int64(0); o < outer; o++ {
		for t := int64(0); t < taps; t++ {
			// t's coordinates, last axis fastest
			rem := t
			for i := sp - 1; i >= 0; i-- {
				idx[i] = rem % w.Shape[2+i]
				rem /= w.Shape[2+i]
			}
			keep := true
			for i := 0; i < sp; i++ {
				if idx[i] < lo[i] || idx[i] > hi[i] {
					keep = false
				}
			}
			off := (o*taps + t) * sz
			if keep {
				out.Raw = append(out.Raw, w.Raw[off:off+sz]...)
				continue
			}
			if vals != nil {
				if v := vals[o*taps+t]; math.IsInf(v, 0) || math.IsNaN(v) {
					return nil, false
				}
			}
		}
	}
	return out, true
}
