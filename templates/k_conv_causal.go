package templates

import "math"

// CausalConvWithState is ONNX CausalConvWithState (opset 27): a depthwise
// causal 1-D convolution. input [B, C, L] is prefixed with past_state
// [B, C, K-1] (zeros without it), each channel c is convolved (valid, stride
// 1) with weight[c, 0, :] [C, 1, K] plus bias[c], then activation silu (or
// its alias swish) x*sigmoid(x) applies or none. present_state is the last
// K-1 positions of the prefixed input. Computes in float64.
func CausalConvWithState(n *Node) error {
	X, W, Bi, past := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || W == nil {
		return n.Errorf("needs inputs input and weight")
	}
	for _, t := range []*Tensor{X, W, Bi, past} {
		if t != nil && !tfFloat(t.DType) {
			return n.Errorf("unsupported dtype %v", t.DType)
		}
	}
	if len(X.Shape) != 3 || len(W.Shape) != 3 || W.Shape[0] != X.Shape[1] || W.Shape[1] != 1 || W.Shape[2] < 1 {
		return n.Errorf("input %v must be [B, C, L] and weight %v [C, 1, K]", X.Shape, W.Shape)
	}
	B, C, L, K := X.Shape[0], X.Shape[1], X.Shape[2], W.Shape[2]
	if Bi != nil && Bi.Len() != C {
		return n.Errorf("bias %v must have %d entries", Bi.Shape, C)
	}
	if past != nil && (len(past.Shape) != 3 || past.Shape[0] != B || past.Shape[1] != C || past.Shape[2] != K-1) {
		return n.Errorf("past_state %v must be [%d, %d, %d]", past.Shape, B, C, K-1)
	}
	silu := false
	switch a := n.Attrs.String("activation", "none"); a {
	case "none":
	case "silu", "swish":
		silu = true
	default:
		return n.Errorf("unknown activation %q", a)
	}
	Lp := L + K - 1
	nx, np, nw := X.Len(), B*C*Lp, W.Len()
	buf := tfBuf(n, 0, nx+np+nw+C+B*C*L+B*C*(K-1))
	x, pad, w := buf[:nx], buf[nx:nx+np], buf[nx+np:nx+np+nw]
	bias := buf[nx+np+nw : nx+np+nw+C]
	y := buf[nx+np+nw+C : nx+np+nw+C+B*C*L]
	st := buf[nx+np+nw+C+B*C*L:]
	tfRead(X, x)
	tfRead(W, w)
	clear(bias)
	if Bi != nil {
		tfRead(Bi, bias)
	}
	if past != nil {
		tfRead(past, st)
	} else {
		clear(st)
	}
	for bc := 0; bc < B*C; bc++ {
		p := pad[bc*Lp : (bc+1)*Lp]
		copy(p[:K-1], st[bc*(K-1):(bc+1)*(K-1)])
		copy(p[K-1:], x[bc*L:(bc+1)*L])
		c := bc % C
		wc := w[c*K : (c+1)*K]
		yr := y[bc*L : (bc+1)*L]
		for t := range yr {
			s := bias[c]
			for j, wv := range wc {
				s += wv * p[t+j]
			}
			if silu {
				s = s / (1 + math.Exp(-s))
			}
			yr[t] = s
		}
		copy(st[bc*(K-1):(bc+1)*(K-1)], p[L:])
	}
	tfWrite(n.Out[0], X.DType, y, B, C, L)
	if len(n.Out) > 1 && n.Out[1] != nil {
		tfWrite(n.Out[1], X.DType, st, B, C, K-1)
	}
	return nil
}
