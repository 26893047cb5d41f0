package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules of the transformer ops of opsets 23-27 (Attention,
// RMSNormalization, RotaryEmbedding, TensorScatter, LinearAttention,
// CausalConvWithState), from the ONNX spec.
func init() {
	reg(inferAttention, "Attention")
	reg(inferSameAsInput0, "RotaryEmbedding", "TensorScatter")
	reg(inferRMSNorm, "RMSNormalization")
	reg(inferLinearAttention, "LinearAttention")
	reg(inferCausalConvWithState, "CausalConvWithState")
}

func inferSameAsInput0(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape))
	return nil
}

func inferRMSNorm(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	if _, err := normAxis(n.IntAttr("axis"), len(t.Shape)); err != nil {
		return err
	}
	dt := t.DType
	if s := n.Input(1); s != nil && s.Type.DType != ir.Undefined {
		dt = s.Type.DType
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

// heads splits a [B, S, H*D] dim into D for h heads.
func (x *inferer) headDim(d ir.Dim, h int64, what string) (ir.Dim, error) {
	if h <= 0 {
		return ir.Dim{}, fmt.Errorf("3-D %s needs a positive num_heads attribute", what)
	}
	return x.divDim(d, h)
}

func inferAttention(x *inferer, n *ir.Node) error {
	q, err := x.inRank(n, 0, 3, 4)
	if err != nil {
		return err
	}
	k, err := x.inRank(n, 1, len(q.Shape), len(q.Shape))
	if err != nil {
		return err
	}
	v, err := x.inRank(n, 2, len(q.Shape), len(q.Shape))
	if err != nil {
		return err
	}
	b := q.Shape[0]
	var hq, hkv, sq, skv, d, dv ir.Dim
	if len(q.Shape) == 4 {
		hq, sq, d = q.Shape[1], q.Shape[2], q.Shape[3]
		hkv, skv, dv = k.Shape[1], k.Shape[2], v.Shape[3]
	} else {
		qh, kh := n.IntAttr("q_num_heads"), n.IntAttr("kv_num_heads")
		hq, hkv, sq, skv = ir.D(qh), ir.D(kh), q.Shape[1], k.Shape[1]
		if d, err = x.headDim(k.Shape[2], kh, "K"); err != nil {
			return err
		}
		if dv, err = x.headDim(v.Shape[2], kh, "V"); err != nil {
			return err
		}
		if _, err = x.headDim(q.Shape[2], qh, "Q"); err != nil {
			return err
		}
	}
	total := skv
	if pk := n.Input(4); pk != nil {
		if len(pk.Type.Shape) != 4 {
			return fmt.Errorf("past_key must have rank 4, has %v", pk.Type)
		}
		total = x.sumDims([]ir.Dim{pk.Type.Shape[2], skv})
	}
	if len(q.Shape) == 4 {
		x.setOut(n, 0, q.DType, ir.Shape{b, hq, sq, dv})
	} else {
		x.setOut(n, 0, q.DType, ir.Shape{b, sq, x.mulDim(dv, hq.Size)})
	}
	x.setOut(n, 1, k.DType, ir.Shape{b, hkv, total, d})
	x.setOut(n, 2, v.DType, ir.Shape{b, hkv, total, dv})
	x.setOut(n, 3, q.DType, ir.Shape{b, hq, sq, total})
	return nil
}

func inferLinearAttention(x *inferer, n *ir.Node) error {
	q, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	k, err := x.inRank(n, 1, 3, 3)
	if err != nil {
		return err
	}
	v, err := x.inRank(n, 2, 3, 3)
	if err != nil {
		return err
	}
	qh, kh := n.IntAttr("q_num_heads"), n.IntAttr("kv_num_heads")
	dk, err := x.headDim(k.Shape[2], kh, "key")
	if err != nil {
		return err
	}
	dv, err := x.headDim(v.Shape[2], kh, "value")
	if err != nil {
		return err
	}
	if _, err := x.headDim(q.Shape[2], qh, "query"); err != nil {
		return err
	}
	x.setOut(n, 0, q.DType, ir.Shape{q.Shape[0], q.Shape[1], x.mulDim(dv, qh)})
	sdt := q.DType
	if ps := n.Input(3); ps != nil && ps.Type.DType != ir.Undefined {
		sdt = ps.Type.DType
	}
	x.setOut(n, 1, sdt, ir.Shape{q.Shape[0], ir.D(kh), dk, dv})
	return nil
}

func inferCausalConvWithState(x *inferer, n *ir.Node) error {
	in, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	w, err := x.inRank(n, 1, 3, 3)
	if err != nil {
		return err
	}
	x.setOut(n, 0, in.DType, cloneShape(in.Shape))
	kw := w.Shape[2]
	if !kw.IsConst() {
		x.setOut(n, 1, in.DType, ir.Shape{in.Shape[0], in.Shape[1], x.freshDim("")})
		return nil
	}
	x.setOut(n, 1, in.DType, ir.Shape{in.Shape[0], in.Shape[1], ir.D(kw.Size - 1)})
	return nil
}

// inferFlexAttention is ai.onnx.preview FlexAttention: Q [B, Hq, Sq, D],
// K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv] give Y [B, Hq, Sq, Dv]. Its
// subgraph attributes are refused here, before any code is written.
func inferFlexAttention(x *inferer, n *ir.Node) error {
	for _, a := range []string{"score_mod", "mask_mod", "prob_mod"} {
		if n.Attr(a) != nil {
			return fmt.Errorf("FlexAttention with a %s subgraph is not supported", a)
		}
	}
	q, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	v, err := x.inRank(n, 2, 4, 4)
	if err != nil {
		return err
	}
	x.setOut(n, 0, q.DType, ir.Shape{q.Shape[0], q.Shape[1], q.Shape[2], v.Shape[3]})
	return nil
}

func init() { reg(inferFlexAttention, ir.PreviewDomain+"::FlexAttention") }
