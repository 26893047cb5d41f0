package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules of the signal-processing, loss, optimizer and text ops.

func init() {
	reg(inferWindow, "HannWindow", "HammingWindow", "BlackmanWindow")
	reg(inferMelWeightMatrix, "MelWeightMatrix")
	reg(inferSTFT, "STFT")
	reg(inferSameAsInput0, "LpNormalization")
	reg(inferNLLLoss, "NegativeLogLikelihoodLoss")
	reg(inferSoftmaxCELoss, "SoftmaxCrossEntropyLoss")
	reg(inferOptimizer, "ai.onnx.preview.training::Adagrad", "ai.onnx.preview.training::Adam",
		"ai.onnx.preview.training::Momentum")
	reg(inferStringNormalizer, "StringNormalizer")
	reg(inferTfIdfVectorizer, "TfIdfVectorizer")
}

// scalarDim is a scalar (or one-element) integer input as a dim: its value
// when known, else a fresh symbol.
func (x *inferer) scalarDim(n *ir.Node, i int) (ir.Dim, error) {
	t, err := x.inRank(n, i, 0, 1)
	if err != nil {
		return ir.Dim{}, err
	}
	if len(t.Shape) == 1 && t.Shape[0].IsConst() && t.Shape[0].Size != 1 {
		return ir.Dim{}, fmt.Errorf("input %d (%s) has shape %v, want a scalar", i, n.Inputs[i].Name, t.Shape)
	}
	if v, ok := x.vals(n.Inputs[i]); ok && len(v) == 1 {
		return v[0], nil
	}
	if v, ok := x.ints(n.Inputs[i]); ok && len(v) == 1 {
		return ir.D(v[0]), nil
	}
	return x.freshDim(""), nil
}

// inferWindow: [size] of output_datatype (float by default).
func inferWindow(x *inferer, n *ir.Node) error {
	size, err := x.scalarDim(n, 0)
	if err != nil {
		return err
	}
	if size.IsConst() && size.Size < 0 {
		return fmt.Errorf("size %d is negative", size.Size)
	}
	dt, err := attrDType(n, "output_datatype", ir.F32)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, ir.Shape{size})
	return nil
}

// inferMelWeightMatrix: [dft_length/2 + 1, num_mel_bins].
func inferMelWeightMatrix(x *inferer, n *ir.Node) error {
	bins, err := x.scalarDim(n, 0)
	if err != nil {
		return err
	}
	dft, err := x.scalarDim(n, 1)
	if err != nil {
		return err
	}
	rows := x.freshDim("")
	if dft.IsConst() {
		rows = ir.D(dft.Size/2 + 1)
	}
	dt, err := attrDType(n, "output_datatype", ir.F32)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, ir.Shape{rows, bins})
	return nil
}

// inferSTFT: signal [batch, length, 1 or 2] to [batch, frames, bins, 2]
// with frames = (length - frame_length) / frame_step + 1 and bins =
// frame_length (/2 + 1 when onesided), frame_length from input 3 or the
// window's length.
func inferSTFT(x *inferer, n *ir.Node) error {
	sig, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	if c := sig.Shape[2]; c.IsConst() && c.Size != 1 && c.Size != 2 {
		return fmt.Errorf("signal's last dim is %d, want 1 (real) or 2 (complex)", c.Size)
	}
	step, err := x.scalarDim(n, 1)
	if err != nil {
		return err
	}
	var flen ir.Dim
	switch {
	case n.Input(3) != nil:
		if flen, err = x.scalarDim(n, 3); err != nil {
			return err
		}
		if n.Input(2) != nil {
			w, err := x.inRank(n, 2, 1, 1)
			if err != nil {
				return err
			}
			if l := w.Shape[0]; l.IsConst() && flen.IsConst() && l.Size != flen.Size {
				return fmt.Errorf("window has %d elements, frame_length is %d", l.Size, flen.Size)
			}
		}
	case n.Input(2) != nil:
		w, err := x.inRank(n, 2, 1, 1)
		if err != nil {
			return err
		}
		flen = w.Shape[0]
	default:
		return fmt.Errorf("needs a window (input 2) or a frame_length (input 3)")
	}
	frames, bins := x.freshDim(""), x.freshDim("")
	if flen.IsConst() {
		bins = flen
		if n.IntAttr("onesided") != 0 {
			bins = ir.D(flen.Size/2 + 1)
		}
		if l := sig.Shape[1]; l.IsConst() && step.IsConst() {
			if step.Size <= 0 {
				return fmt.Errorf("frame_step %d is not positive", step.Size)
			}
			if flen.Size > l.Size {
				return fmt.Errorf("frame_length %d is longer than the signal (%d)", flen.Size, l.Size)
			}
			frames = ir.D((l.Size-flen.Size)/step.Size + 1)
		}
	}
	x.setOut(n, 0, sig.DType, ir.Shape{sig.Shape[0], frames, bins, ir.D(2)})
	return nil
}

// lossShape is a loss's output shape: the target's with reduction none,
// else a scalar.
func lossShape(n *ir.Node, target ir.Type) (ir.Shape, error) {
	switch r := n.StringAttr("reduction"); r {
	case "none":
		return cloneShape(target.Shape), nil
	case "mean", "sum":
		return ir.Shape{}, nil
	default:
		return nil, fmt.Errorf("reduction %q is not none, mean or sum", r)
	}
}

// checkLossTarget checks scores [N, C, d1...] against target [N, d1...].
func checkLossTarget(n *ir.Node, scores, target ir.Type) error {
	if len(target.Shape) != len(scores.Shape)-1 {
		return fmt.Errorf("target has rank %d, want %d (the input's rank minus the class axis)", len(target.Shape), len(scores.Shape)-1)
	}
	for i, d := range target.Shape {
		s := scores.Shape[i]
		if i > 0 {
			s = scores.Shape[i+1]
		}
		if d.IsConst() && s.IsConst() && d.Size != s.Size {
			return fmt.Errorf("target shape %v does not match input shape %v", target.Shape, scores.Shape)
		}
	}
	return nil
}

// inferNLLLoss: input [N, C, d1...], target [N, d1...].
func inferNLLLoss(x *inferer, n *ir.Node) error {
	in, err := x.inRank(n, 0, 2, -1)
	if err != nil {
		return err
	}
	target, err := x.in(n, 1)
	if err != nil {
		return err
	}
	if err := checkLossTarget(n, in, target); err != nil {
		return err
	}
	s, err := lossShape(n, target)
	if err != nil {
		return err
	}
	x.setOut(n, 0, in.DType, s)
	return nil
}

// inferSoftmaxCELoss: as NegativeLogLikelihoodLoss, plus log_prob shaped
// as the scores.
func inferSoftmaxCELoss(x *inferer, n *ir.Node) error {
	if err := inferNLLLoss(x, n); err != nil {
		return err
	}
	t, _ := x.in(n, 0)
	x.setOut(n, 1, t.DType, cloneShape(t.Shape))
	return nil
}

// inferOptimizer: inputs R, T and k groups of n tensors (X, G, then one
// or two state groups: Adagrad's H, Momentum's V, Adam's V and H); the
// outputs are the new X and state groups, each typed as its input.
func inferOptimizer(x *inferer, n *ir.Node) error {
	groups := map[string]int{"Adagrad": 3, "Momentum": 3, "Adam": 4}[n.Op]
	rest := len(n.Inputs) - 2
	if rest <= 0 || rest%groups != 0 {
		return fmt.Errorf("has %d inputs, want R, T and %d groups of equal size", len(n.Inputs), groups)
	}
	k := rest / groups
	if len(n.Outputs) != (groups-1)*k {
		return fmt.Errorf("has %d outputs, want %d (new X and state for each of %d tensors)", len(n.Outputs), (groups-1)*k, k)
	}
	for o := range n.Outputs {
		g := o / k // 0: X, then the state groups, which follow G
		i := 2 + o
		if g > 0 {
			i += k
		}
		t, err := x.in(n, i)
		if err != nil {
			return err
		}
		x.setOut(n, o, t.DType, cloneShape(t.Shape))
	}
	return nil
}

// inferStringNormalizer: strings [C] or [1, C]; stop words may remove
// entries, so the last dim is known only without them.
func inferStringNormalizer(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 1, 2)
	if err != nil {
		return err
	}
	if len(t.Shape) == 2 && t.Shape[0].IsConst() && t.Shape[0].Size != 1 {
		return fmt.Errorf("input shape %v: want [C] or [1, C]", t.Shape)
	}
	s := cloneShape(t.Shape)
	if a := n.Attr("stopwords"); a != nil && len(a.Strings) > 0 {
		s[len(s)-1] = x.freshDim("")
	}
	x.setOut(n, 0, ir.String, s)
	return nil
}

// inferTfIdfVectorizer: [C] or [N, C] to float [max(ngram_indexes)+1]
// or [N, that].
func inferTfIdfVectorizer(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 1, 2)
	if err != nil {
		return err
	}
	width := int64(0)
	for _, i := range n.AttrInts("ngram_indexes", nil) {
		if i < 0 {
			return fmt.Errorf("ngram_indexes holds %d", i)
		}
		width = max(width, i+1)
	}
	s := ir.Shape{ir.D(width)}
	if len(t.Shape) == 2 {
		s = ir.Shape{t.Shape[0], ir.D(width)}
	}
	x.setOut(n, 0, ir.F32, s)
	return nil
}
