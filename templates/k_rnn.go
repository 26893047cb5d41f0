package templates

import (
	"math"
	"strings"
)

// Recurrent layers: RNN, GRU and LSTM (every opset version; layout came in
// v14, linear_before_reset in GRU-3). One engine runs all three: the input
// projection X*W^T+Wb is computed for the whole sequence at once, then each
// step adds H*R^T and applies the cell's gate equations.

const (
	miscCellRNN = iota
	miscCellGRU
	miscCellLSTM
)

// LSTM is ONNX LSTM (gates i, o, f, c; optional peepholes P).
func LSTM(n *Node) error { return miscRNN(n, miscCellLSTM) }

// GRU is ONNX GRU (gates z, r, h).
func GRU(n *Node) error { return miscRNN(n, miscCellGRU) }

// RNN is ONNX RNN, the plain Elman cell.
func RNN(n *Node) error { return miscRNN(n, miscCellRNN) }

// miscAct is one RNN activation function with its alpha and beta.
type miscAct struct {
	kind        int
	alpha, beta float64
}

const (
	miscActSigmoid = iota
	miscActTanh
	miscActRelu
	miscActAffine
	miscActLeakyRelu
	miscActThresholdedRelu
	miscActScaledTanh
	miscActHardSigmoid
	miscActElu
	miscActSoftsign
	miscActSoftplus
)

// miscActNames lists the activations the RNN ops accept, with how many of
// alpha and beta each consumes and their defaults.
var miscActNames = [...]struct {
	name         string
	kind         int
	nAlpha, nBet int
	alpha, beta  float64
}{
	{"Sigmoid", miscActSigmoid, 0, 0, 0, 0},
	{"Tanh", miscActTanh, 0, 0, 0, 0},
	{"Relu", miscActRelu, 0, 0, 0, 0},
	{"Affine", miscActAffine, 1, 1, 1, 0},
	{"LeakyRelu", miscActLeakyRelu, 1, 0, 0.01, 0},
	{"ThresholdedRelu", miscActThresholdedRelu, 1, 0, 1, 0},
	{"ScaledTanh", miscActScaledTanh, 1, 1, 1, 1},
	{"HardSigmoid", miscActHardSigmoid, 1, 1, 0.2, 0.5},
	{"Elu", miscActElu, 1, 0, 1, 0},
	{"Softsign", miscActSoftsign, 0, 0, 0, 0},
	{"Softplus", miscActSoftplus, 0, 0, 0, 0},
}

func (a miscAct) apply(x float64) float64 {
	switch a.kind {
	case miscActSigmoid:
		if x >= 0 {
			return 1 / (1 + math.Exp(-x))
		}
		e := math.Exp(x)
		return e / (1 + e)
	case miscActTanh:
		return math.Tanh(x)
	case miscActRelu:
		return math.Max(x, 0)
	case miscActAffine:
		return a.alpha*x + a.beta
	case miscActLeakyRelu:
		if x >= 0 {
			return x
		}
		return a.alpha * x
	case miscActThresholdedRelu:
		if x > a.alpha {
			return x
		}
		return 0
	case miscActScaledTanh:
		return a.alpha * math.Tanh(a.beta*x)
	case miscActHardSigmoid:
		return math.Max(0, math.Min(1, a.alpha*x+a.beta))
	case miscActElu:
		if x >= 0 {
			return x
		}
		return a.alpha * (math.Exp(x) - 1)
	case miscActSoftsign:
		return x / (1 + math.Abs(x))
	case miscActSoftplus:
		if x > 0 {
			return x + math.Log1p(math.Exp(-x))
		}
		return math.Log1p(math.Exp(x))
	}
	return x
}

// miscRNNActs parses the activations attribute into acts (numActs per
// direction, nd directions), consuming activation_alpha/beta in order.
func miscRNNActs(n *Node, kind, nd int, acts []miscAct) error {
	numActs := [...]int{1, 2, 3}[kind]
	names := n.Attrs.Strings("activations")
	alphas := n.Attrs.Floats("activation_alpha")
	betas := n.Attrs.Floats("activation_beta")
	if len(names) == 0 {
		for d := 0; d < nd; d++ {
			for j := 0; j < numActs; j++ {
				k := miscActTanh
				if j == 0 && kind != miscCellRNN {
					k = miscActSigmoid
				}
				acts[d*numActs+j] = miscAct{kind: k}
			}
		}
		return nil
	}
	if len(names) != numActs && len(names) != numActs*nd {
		return n.Errorf("activations has %d entries, want %d", len(names), numActs*nd)
	}
	ai, bi := 0, 0
	for i, name := range names {
		found := false
		for _, e := range miscActNames {
			if !strings.EqualFold(e.name, name) {
				continue
			}
			a := miscAct{kind: e.kind, alpha: e.alpha, beta: e.beta}
			if e.nAlpha > 0 && ai < len(alphas) {
				a.alpha = float64(alphas[ai])
				ai++
			}
			if e.nBet > 0 && bi < len(betas) {
				a.beta = float64(betas[bi])
				bi++
			}
			acts[i] = a
			found = true
			break
		}
		if !found {
			return n.Errorf("unsupported activation %q", name)
		}
	}
	if len(names) == numActs && nd == 2 {
		copy(acts[numActs:], acts[:numActs])
	}
	return nil
}

func miscRNN(n *Node, kind int) error {
	self := [...]Kernel{RNN, GRU, LSTM}[kind]
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	if len(n.In) < 3 || n.In[0] == nil || n.In[1] == nil || n.In[2] == nil {
		return n.Errorf("needs inputs X, W and R")
	}
	switch n.In[0].DType {
	case F32:
		return miscRNNRun[float32](n, kind)
	case F64:
		return miscRNNRun[float64](n, kind)
	}
	return n.Errorf("unsupported dtype %s", n.In[0].DType)
}

func miscRNNRun[T miscFloat](n *Node, kind int) error {
	X, W, R := n.In[0], n.In[1], n.In[2]
	B, seqLens, h0 := n.Input(3), n.Input(4), n.Input(5)
	var c0, P *Tensor
	if kind == miscCellLSTM {
		c0, P = n.Input(6), n.Input(7)
	}
	gates := [...]int{1, 3, 4}[kind]
	layout := n.Attrs.Int("layout", 0)
	if len(X.Shape) != 3 || len(W.Shape) != 3 || len(R.Shape) != 3 {
		return n.Errorf("X, W and R must have rank 3, have %v %v %v", X.Shape, W.Shape, R.Shape)
	}
	seq, batch, inSize := X.Shape[0], X.Shape[1], X.Shape[2]
	if layout != 0 {
		seq, batch = batch, seq
	}
	nd := 1
	dir := n.Attrs.String("direction", "forward")
	switch dir {
	case "forward", "reverse":
	case "bidirectional":
		nd = 2
	default:
		return n.Errorf("unknown direction %q", dir)
	}
	hs := int(n.Attrs.Int("hidden_size", int64(R.Shape[2])))
	gh := gates * hs
	if W.Shape[0] != nd || W.Shape[1] != gh || W.Shape[2] != inSize {
		return n.Errorf("W has shape %v, want [%d,%d,%d]", W.Shape, nd, gh, inSize)
	}
	if R.Shape[0] != nd || R.Shape[1] != gh || R.Shape[2] != hs {
		return n.Errorf("R has shape %v, want [%d,%d,%d]", R.Shape, nd, gh, hs)
	}
	if B != nil && B.Len() != nd*2*gh {
		return n.Errorf("B has shape %v, want [%d,%d]", B.Shape, nd, 2*gh)
	}
	if P != nil && P.Len() != nd*3*hs {
		return n.Errorf("P has shape %v, want [%d,%d]", P.Shape, nd, 3*hs)
	}
	for _, st := range []*Tensor{h0, c0} {
		if st != nil && st.Len() != nd*batch*hs {
			return n.Errorf("initial state has shape %v, want %d elements", st.Shape, nd*batch*hs)
		}
	}
	if seqLens != nil && seqLens.Len() != batch {
		return n.Errorf("sequence_lens has %d entries, want %d", seqLens.Len(), batch)
	}
	var acts [6]miscAct
	if err := miscRNNActs(n, kind, nd, acts[:]); err != nil {
		return err
	}
	numActs := gates - 1
	if kind == miscCellRNN {
		numActs = 1
	}
	clip := math.Inf(1)
	if n.Attrs.Has("clip") {
		clip = float64(n.Attrs.Float("clip", 0))
	}
	inputForget := kind == miscCellLSTM && n.Attrs.Int("input_forget", 0) != 0
	lbr := kind == miscCellGRU && n.Attrs.Int("linear_before_reset", 0) != 0

	x := X.Data.([]T)
	w, r := W.Data.([]T), R.Data.([]T)
	// Index helpers for the two layouts.
	xOff := func(t, b int) int {
		if layout != 0 {
			return (b*seq + t) * inSize
		}
		return (t*batch + b) * inSize
	}
	stOff := func(d, b int) int {
		if layout != 0 {
			return (b*nd + d) * hs
		}
		return (d*batch + b) * hs
	}
	var y, yh, yc []T
	if o := n.Out[0]; o != nil {
		if layout != 0 {
			o.Resize(X.DType, batch, seq, nd, hs)
		} else {
			o.Resize(X.DType, seq, nd, batch, hs)
		}
		y = o.Data.([]T)
		clear(y)
	}
	stShape := func(o *Tensor) []T {
		if layout != 0 {
			o.Resize(X.DType, batch, nd, hs)
		} else {
			o.Resize(X.DType, nd, batch, hs)
		}
		return o.Data.([]T)
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		yh = stShape(n.Out[1])
	}
	if kind == miscCellLSTM && len(n.Out) > 2 && n.Out[2] != nil {
		yc = stShape(n.Out[2])
	}

	s := miscScr[T](n)
	xw := s.get(0, seq*batch*gh)
	g := s.get(1, gh)
	h := s.get(2, batch*hs)
	c := s.get(3, batch*hs)
	tmp := s.get(4, hs)
	rh := s.get(5, hs)
	lens := s.getInts(0, batch)
	for b := range lens {
		lens[b] = seq
		if seqLens != nil {
			l := int(ewI64At(seqLens, b))
			if l < 0 || l > seq {
				return n.Errorf("sequence_lens[%d] = %d out of range [0,%d]", b, l, seq)
			}
			lens[b] = l
		}
	}

	for d := 0; d < nd; d++ {
		reverse := dir == "reverse" || d == 1
		wd := w[d*gh*inSize : (d+1)*gh*inSize]
		rd := r[d*gh*hs : (d+1)*gh*hs]
		var wb, rb []T
		if B != nil {
			bb := B.Data.([]T)
			wb = bb[d*2*gh : d*2*gh+gh]
			rb = bb[d*2*gh+gh : (d+1)*2*gh]
		}
		var pd []T
		if P != nil {
			pd = P.Data.([]T)[d*3*hs : (d+1)*3*hs]
		}
		act := acts[d*numActs : (d+1)*numActs]

		// Input projection for every step: xw = X*W^T + Wb (+ Rb where
		// the recurrent bias is not inside the reset product), one GEMM
		// over the whole sequence when X's rows are in xw's order.
		if layout == 0 || batch == 1 {
			rnnProj(seq*batch, gh, inSize, x, wd, xw)
		} else {
			for t := 0; t < seq; t++ {
				for b := 0; b < batch; b++ {
					rnnProj(1, gh, inSize, x[xOff(t, b):], wd, xw[(t*batch+b)*gh:])
				}
			}
		}
		if wb != nil {
			for row := 0; row < seq*batch; row++ {
				out := xw[row*gh : (row+1)*gh]
				for j := range out {
					out[j] += wb[j]
					if !(lbr && j >= 2*hs) {
						out[j] += rb[j]
					}
				}
			}
		}
		// The float32 recurrent product is a GEMV on R as stored ([gh, hs]:
		// dot products of its rows with h, four rows at a time, gemvRows32).
		rd32, _ := any(rd).([]float32)
		fast := kind == miscCellLSTM && rd32 != nil && !inputForget && math.IsInf(clip, 1) &&
			act[0].kind == miscActSigmoid && act[1].kind == miscActTanh && act[2].kind == miscActTanh
		// A float32 GRU with the default activations and no clip takes
		// them on whole rows (sigmoid32, tanh32).
		gruVec := kind == miscCellGRU && rd32 != nil && math.IsInf(clip, 1) &&
			act[0].kind == miscActSigmoid && act[1].kind == miscActTanh
		// Initial states.
		for b := 0; b < batch; b++ {
			o := stOff(d, b)
			if h0 != nil {
				copy(h[b*hs:(b+1)*hs], h0.Data.([]T)[o:o+hs])
			} else {
				clear(h[b*hs : (b+1)*hs])
			}
			if c0 != nil {
				copy(c[b*hs:(b+1)*hs], c0.Data.([]T)[o:o+hs])
			} else {
				clear(c[b*hs : (b+1)*hs])
			}
		}
		clipf := func(v T) float64 {
			f := float64(v)
			if f > clip {
				return clip
			}
			if f < -clip {
				return -clip
			}
			return f
		}
		for step := 0; step < seq; step++ {
			for b := 0; b < batch; b++ {
				L := lens[b]
				if step >= L {
					continue
				}
				t := step
				if reverse {
					t = L - 1 - step
				}
				hb := h[b*hs : (b+1)*hs]
				cb := c[b*hs : (b+1)*hs]
				copy(g, xw[(t*batch+b)*gh:(t*batch+b+1)*gh])
				// Recurrent projection; GRU's h gate is handled below.
				rows := gh
				if kind == miscCellGRU {
					rows = 2 * hs
				}
				if rd32 != nil {
					gemvRows32(any(g).([]float32)[:rows], any(hb).([]float32), rd32, hs)
				} else {
					for j := 0; j < rows; j++ {
						rr := rd[j*hs : (j+1)*hs]
						var acc T
						for k, hv := range hb {
							acc += hv * rr[k]
						}
						g[j] += acc
					}
				}
				if fast {
					var p32 []float32
					if pd != nil {
						p32 = any(pd).([]float32)
					}
					rnnLSTMGates32(any(g).([]float32), any(cb).([]float32), any(hb).([]float32), p32)
					if y != nil {
						var o int
						if layout != 0 {
							o = ((b*seq+t)*nd + d) * hs
						} else {
							o = ((t*nd+d)*batch + b) * hs
						}
						copy(y[o:o+hs], hb)
					}
					continue
				}
				switch kind {
				case miscCellRNN:
					for u := range hb {
						hb[u] = T(act[0].apply(clipf(g[u])))
					}
				case miscCellGRU:
					if rd32 != nil {
						var rb3 []float32
						if lbr && rb != nil {
							rb3 = any(rb).([]float32)[2*hs : 3*hs]
						}
						rnnGRUStep32(any(g).([]float32), any(hb).([]float32), any(tmp).([]float32), any(rh).([]float32),
							rd32[2*hs*hs:3*hs*hs], rb3, lbr, gruVec, act[0], act[1], any(clipf).(func(float32) float64))
						break
					}
					// z and r first.
					for u := 0; u < 2*hs; u++ {
						g[u] = T(act[0].apply(clipf(g[u])))
					}
					zg, rg := g[:hs], g[hs:2*hs]
					for u := 0; u < hs; u++ {
						rr := rd[(2*hs+u)*hs : (2*hs+u+1)*hs]
						var acc T
						if lbr {
							for k, hv := range hb {
								acc += hv * rr[k]
							}
							if rb != nil {
								acc += rb[2*hs+u]
							}
							acc *= rg[u]
						} else {
							for k, hv := range hb {
								acc += rg[k] * hv * rr[k]
							}
						}
						tmp[u] = T(act[1].apply(clipf(g[2*hs+u] + acc)))
					}
					for u := range hb {
						hb[u] = (1-zg[u])*tmp[u] + zg[u]*hb[u]
					}
				case miscCellLSTM:
					gi, gO, gf, gc := g[:hs], g[hs:2*hs], g[2*hs:3*hs], g[3*hs:]
					for u := 0; u < hs; u++ {
						pi, pf := gi[u], gf[u]
						if pd != nil {
							pi += pd[u] * cb[u]
							pf += pd[2*hs+u] * cb[u]
						}
						iv := act[0].apply(clipf(pi))
						var fv float64
						if inputForget {
							fv = 1 - iv
						} else {
							fv = act[0].apply(clipf(pf))
						}
						cc := act[1].apply(clipf(gc[u]))
						cn := T(fv*float64(cb[u]) + iv*cc)
						po := gO[u]
						if pd != nil {
							po += pd[hs+u] * cn
						}
						ov := act[0].apply(clipf(po))
						cb[u] = cn
						hb[u] = T(ov * act[2].apply(float64(cn)))
					}
				}
				if y != nil {
					var o int
					if layout != 0 {
						o = ((b*seq+t)*nd + d) * hs
					} else {
						o = ((t*nd+d)*batch + b) * hs
					}
					copy(y[o:o+hs], hb)
				}
			}
		}
		for b := 0; b < batch; b++ {
			o := stOff(d, b)
			if yh != nil {
				copy(yh[o:o+hs], h[b*hs:(b+1)*hs])
			}
			if yc != nil {
				copy(yc[o:o+hs], c[b*hs:(b+1)*hs])
			}
		}
	}
	return nil
}

// rnnGRUStep32 is one float32 GRU step after the recurrent product of
// the z and r gates (g holds the pre-activations z, r, h, the first two
// with h*R added): the h gate's product by gemvRows32 on r3 (R's h rows),
// of h (linear_before_reset, then plus its recurrent bias rb3 and times
// r) or of r*h, then h = (1-z)*tanh(...) + z*h. With vec the activations
// (sigmoid, tanh, no clip) run on whole rows (sigmoid32, tanh32), else
// a0 and a1 per element in float64 after clipf. tmp and rh are scratch
// of len(h).
func rnnGRUStep32(g, h, tmp, rh, r3, rb3 []float32, lbr, vec bool, a0, a1 miscAct, clipf func(float32) float64) {
	hs := len(h)
	zr, gh := g[:2*hs], g[2*hs:3*hs]
	if vec {
		sigmoid32(zr)
	} else {
		for u, v := range zr {
			zr[u] = float32(a0.apply(clipf(v)))
		}
	}
	zg, rg := zr[:hs], zr[hs:]
	tmp = tmp[:hs]
	clear(tmp)
	if lbr {
		gemvRows32(tmp, h, r3, hs)
		for u, v := range tmp {
			if rb3 != nil {
				v += rb3[u]
			}
			tmp[u] = gh[u] + v*rg[u]
		}
	} else {
		rh = rh[:hs]
		for k, v := range h {
			rh[k] = rg[k] * v
		}
		gemvRows32(tmp, rh, r3, hs)
		for u := range tmp {
			tmp[u] = gh[u] + tmp[u]
		}
	}
	if vec {
		tanh32(tmp)
	} else {
		for u, v := range tmp {
			tmp[u] = float32(a1.apply(clipf(v)))
		}
	}
	for u := range h {
		h[u] = (1-zg[u])*tmp[u] + zg[u]*h[u]
	}
}

// rnnSigmoid32 and rnnTanh32 are the float32 gate functions of the LSTM
// fast path, through vecExpGo (relative error about 1e-7; tanh near 0 has
// an absolute error of about 1e-7).
func rnnSigmoid32(x float32) float32 { return 1 / (1 + vecExpGo(-x)) }

func rnnTanh32(x float32) float32 { return 1 - 2/(vecExpGo(2*x)+1) }

// rnnLSTMGates32 is one LSTM step's gate equations with the default
// activations (sigmoid, tanh, tanh), no clip and no coupled input-forget:
// g holds the pre-activations i, o, f, c; c and h are updated in place; p
// (peepholes i, o, f) may be nil.
func rnnLSTMGates32(g, c, h, p []float32) {
	if p == nil {
		lstmGates32(g, c, h)
		return
	}
	hs := len(h)
	gi, gO, gf, gc := g[:hs], g[hs:2*hs], g[2*hs:3*hs], g[3*hs:4*hs]
	c = c[:hs]
	for u := range h {
		pi, pf, po := gi[u], gf[u], gO[u]
		if p != nil {
			pi += p[u] * c[u]
			pf += p[2*hs+u] * c[u]
		}
		cn := rnnSigmoid32(pf)*c[u] + rnnSigmoid32(pi)*rnnTanh32(gc[u])
		if p != nil {
			po += p[hs+u] * cn
		}
		c[u] = cn
		h[u] = rnnSigmoid32(po) * rnnTanh32(cn)
	}
}

// rnnProj sets out[m x n] = x[m x k] * w[n x k]^T through the GEMM.
func rnnProj[T miscFloat](m, n, k int, x, w, out []T) {
	switch xv := any(x).(type) {
	case []float32:
		gemmT(false, true, m, n, k, 1, xv, k, any(w).([]float32), k, 0, any(out).([]float32), n)
	case []float64:
		gemmT(false, true, m, n, k, 1, xv, k, any(w).([]float64), k, 0, any(out).([]float64), n)
	}
}
