package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

type miscRefActT struct {
	name        string
	alpha, beta float64
}

func (a miscRefActT) f(x float64) float64 {
	switch a.name {
	case "Sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "Tanh":
		return math.Tanh(x)
	case "Relu":
		return math.Max(0, x)
	case "HardSigmoid":
		return math.Min(1, math.Max(0, a.alpha*x+a.beta))
	case "ScaledTanh":
		return a.alpha * math.Tanh(a.beta*x)
	case "LeakyRelu":
		if x < 0 {
			return a.alpha * x
		}
		return x
	case "Affine":
		return a.alpha*x + a.beta
	case "Softsign":
		return x / (1 + math.Abs(x))
	case "Softplus":
		return math.Log(1 + math.Exp(x))
	case "Elu":
		if x < 0 {
			return a.alpha * (math.Exp(x) - 1)
		}
		return x
	case "ThresholdedRelu":
		if x > a.alpha {
			return x
		}
		return 0
	}
	panic(a.name)
}

type miscRNNCase struct {
	op                 string
	seq, batch, in, hs int
	dir                string
	layout             int
	bias, h0, c0, peep bool
	lens               []int32
	clip               float64
	inputForget, lbr   bool
	acts               []string // attribute value (nil = default)
	alphas, betas      []float32
	refActs            []miscRefActT // per direction, per activation
	noY                bool
}

func (c miscRNNCase) gates() int {
	return map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[c.op]
}

// miscRNNRef computes Y [seq][nd][batch][hs], Y_h, Y_c [nd][batch][hs]
// straight from the ONNX equations, in layout 0.
func miscRNNRef(c miscRNNCase, x, w, r, b, h0, c0, p []float64) (y, yh, yc []float64) {
	nd := 1
	if c.dir == "bidirectional" {
		nd = 2
	}
	G, H, I := c.gates(), c.hs, c.in
	y = make([]float64, c.seq*nd*c.batch*H)
	yh = make([]float64, nd*c.batch*H)
	yc = make([]float64, nd*c.batch*H)
	nacts := len(c.refActs) / nd
	clip := func(v float64) float64 {
		if c.clip > 0 {
			return math.Max(-c.clip, math.Min(c.clip, v))
		}
		return v
	}
	for d := 0; d < nd; d++ {
		act := c.refActs[d*nacts : (d+1)*nacts]
		// Wx(t,bb,gate,u) etc.
		wx := func(t, bb, row int) float64 {
			s := 0.0
			for k := 0; k < I; k++ {
				s += x[(t*c.batch+bb)*I+k] * w[(d*G*H+row)*I+k]
			}
			return s
		}
		rh := func(hv []float64, row int) float64 {
			s := 0.0
			for k := 0; k < H; k++ {
				s += hv[k] * r[(d*G*H+row)*H+k]
			}
			return s
		}
		wb := func(row int) float64 {
			if b == nil {
				return 0
			}
			return b[d*2*G*H+row]
		}
		rb := func(row int) float64 {
			if b == nil {
				return 0
			}
			return b[d*2*G*H+G*H+row]
		}
		for bb := 0; bb < c.batch; bb++ {
			L := c.seq
			if c.lens != nil {
				L = int(c.lens[bb])
			}
			hv := make([]float64, H)
			cv := make([]float64, H)
			if h0 != nil {
				copy(hv, h0[(d*c.batch+bb)*H:])
			}
			if c0 != nil {
				copy(cv, c0[(d*c.batch+bb)*H:])
			}
			for s := 0; s < L; s++ {
				t := s
				if c.dir == "reverse" || d == 1 {
					t = L - 1 - s
				}
				nh := make([]float64, H)
				nc := make([]float64, H)
				for u := 0; u < H; u++ {
					switch c.op {
					case "RNN":
						nh[u] = act[0].f(clip(wx(t, bb, u) + rh(hv, u) + wb(u) + rb(u)))
					case "GRU":
						z := act[0].f(clip(wx(t, bb, u) + rh(hv, u) + wb(u) + rb(u)))
						var hh float64
						if c.lbr {
							rr := act[0].f(clip(wx(t, bb, H+u) + rh(hv, H+u) + wb(H+u) + rb(H+u)))
							hh = act[1].f(clip(wx(t, bb, 2*H+u) + rr*(rh(hv, 2*H+u)+rb(2*H+u)) + wb(2*H+u)))
						} else {
							rhv := make([]float64, H)
							for k := range rhv {
								rk := act[0].f(clip(wx(t, bb, H+k) + rh(hv, H+k) + wb(H+k) + rb(H+k)))
								rhv[k] = rk * hv[k]
							}
							hh = act[1].f(clip(wx(t, bb, 2*H+u) + rh(rhv, 2*H+u) + rb(2*H+u) + wb(2*H+u)))
						}
						nh[u] = (1-z)*hh + z*hv[u]
					case "LSTM":
						var pi, po, pf float64
						if p != nil {
							pi, po, pf = p[d*3*H+u], p[d*3*H+H+u], p[d*3*H+2*H+u]
						}
						ig := act[0].f(clip(wx(t, bb, u) + rh(hv, u) + pi*cv[u] + wb(u) + rb(u)))
						fg := act[0].f(clip(wx(t, bb, 2*H+u) + rh(hv, 2*H+u) + pf*cv[u] + wb(2*H+u) + rb(2*H+u)))
						if c.inputForget {
							fg = 1 - ig
						}
						cg := act[1].f(clip(wx(t, bb, 3*H+u) + rh(hv, 3*H+u) + wb(3*H+u) + rb(3*H+u)))
						nc[u] = fg*cv[u] + ig*cg
						og := act[0].f(clip(wx(t, bb, H+u) + rh(hv, H+u) + po*nc[u] + wb(H+u) + rb(H+u)))
						nh[u] = og * act[2].f(nc[u])
					}
				}
				hv = nh
				if c.op == "LSTM" {
					cv = nc
				}
				copy(y[((t*nd+d)*c.batch+bb)*H:], hv)
			}
			copy(yh[(d*c.batch+bb)*H:], hv)
			copy(yc[(d*c.batch+bb)*H:], cv)
		}
	}
	return
}

// miscPermute moves a row-major tensor's axes: out axis i is in axis perm[i].
func miscPermute(v []float64, shape []int, perm []int) ([]float64, []int) {
	ns := make([]int, len(shape))
	for i, p := range perm {
		ns[i] = shape[p]
	}
	st := miscStrides(shape, make([]int, len(shape)))
	out := make([]float64, len(v))
	idx := make([]int, len(shape))
	for o := range out {
		rem := o
		for i := len(ns) - 1; i >= 0; i-- {
			idx[i] = rem % ns[i]
			rem /= ns[i]
		}
		src := 0
		for i, p := range perm {
			src += idx[i] * st[p]
		}
		out[o] = v[src]
	}
	return out, ns
}

func TestRecurrent(t *testing.T) {
	sig, tanh := miscRefActT{name: "Sigmoid"}, miscRefActT{name: "Tanh"}
	cases := []miscRNNCase{
		{op: "RNN", seq: 5, batch: 3, in: 4, hs: 3, dir: "forward", refActs: []miscRefActT{tanh}},
		{op: "RNN", seq: 4, batch: 2, in: 3, hs: 5, dir: "bidirectional", bias: true, h0: true,
			acts: []string{"Relu", "LeakyRelu"}, alphas: []float32{0.3},
			refActs: []miscRefActT{{name: "Relu"}, {name: "LeakyRelu", alpha: 0.3}}},
		{op: "RNN", seq: 5, batch: 3, in: 2, hs: 3, dir: "reverse", bias: true, lens: []int32{5, 2, 0}, clip: 0.7, refActs: []miscRefActT{tanh}},
		{op: "GRU", seq: 5, batch: 3, in: 4, hs: 3, dir: "forward", bias: true, refActs: []miscRefActT{sig, tanh}},
		{op: "GRU", seq: 4, batch: 2, in: 3, hs: 4, dir: "bidirectional", bias: true, h0: true, lbr: true, layout: 1, refActs: []miscRefActT{sig, tanh, sig, tanh}},
		{op: "GRU", seq: 6, batch: 3, in: 3, hs: 2, dir: "reverse", bias: true, lens: []int32{3, 6, 1}, clip: 0.5,
			acts: []string{"HardSigmoid", "Softsign"}, alphas: []float32{0.3}, betas: []float32{0.45},
			refActs: []miscRefActT{{name: "HardSigmoid", alpha: 0.3, beta: 0.45}, {name: "Softsign"}}},
		{op: "GRU", seq: 3, batch: 2, in: 5, hs: 3, dir: "bidirectional", h0: true, lens: []int32{2, 3}, refActs: []miscRefActT{sig, tanh, sig, tanh}},
		// Wide enough for the float32 GRU step's vector paths (gemvRows32's
		// kernels, whole-row sigmoid32 and tanh32 with their masked tails).
		{op: "GRU", seq: 6, batch: 2, in: 7, hs: 19, dir: "forward", bias: true, h0: true, lbr: true, refActs: []miscRefActT{sig, tanh}},
		{op: "GRU", seq: 5, batch: 1, in: 9, hs: 32, dir: "bidirectional", bias: true, refActs: []miscRefActT{sig, tanh, sig, tanh}},
		{op: "GRU", seq: 4, batch: 2, in: 5, hs: 20, dir: "forward", bias: true, clip: 2.5, refActs: []miscRefActT{sig, tanh}},
		{op: "LSTM", seq: 5, batch: 3, in: 4, hs: 3, dir: "forward", refActs: []miscRefActT{sig, tanh, tanh}},
		{op: "LSTM", seq: 7, batch: 1, in: 13, hs: 19, dir: "forward", bias: true, h0: true, c0: true, refActs: []miscRefActT{sig, tanh, tanh}},
		{op: "LSTM", seq: 4, batch: 3, in: 3, hs: 5, dir: "bidirectional", bias: true, h0: true, c0: true, peep: true, lens: []int32{4, 1, 3},
			refActs: []miscRefActT{sig, tanh, tanh, sig, tanh, tanh}},
		{op: "LSTM", seq: 5, batch: 2, in: 3, hs: 4, dir: "reverse", bias: true, peep: true, inputForget: true, clip: 0.9, layout: 1, c0: true,
			acts: []string{"HardSigmoid", "ScaledTanh", "Elu"}, alphas: []float32{0.25, 0.9, 0.7}, betas: []float32{0.55, 1.3},
			refActs: []miscRefActT{{name: "HardSigmoid", alpha: 0.25, beta: 0.55}, {name: "ScaledTanh", alpha: 0.9, beta: 1.3}, {name: "Elu", alpha: 0.7}}},
		{op: "LSTM", seq: 3, batch: 2, in: 2, hs: 3, dir: "bidirectional", bias: true, noY: true,
			acts: []string{"Sigmoid", "Softplus", "Affine", "Sigmoid", "Tanh", "ThresholdedRelu"}, alphas: []float32{0.6, 0.1}, betas: []float32{0.2},
			refActs: []miscRefActT{sig, {name: "Softplus"}, {name: "Affine", alpha: 0.6, beta: 0.2}, sig, tanh, {name: "ThresholdedRelu", alpha: 0.1}}},
	}
	for ci, c := range cases {
		for _, dt := range []DType{F32, F64, F16} {
			t.Run(fmt.Sprintf("%d_%s_%s_%s", ci, c.op, c.dir, dt), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(ci)*7 + int64(dt)))
				nd := 1
				if c.dir == "bidirectional" {
					nd = 2
				}
				G, H := c.gates(), c.hs
				x := miscRepr(dt, miscRandF64(rng, c.seq, c.batch, c.in))
				w := miscRepr(dt, miscRandF64(rng, nd, G*H, c.in))
				r := miscRepr(dt, miscRandF64(rng, nd, G*H, H))
				var b, h0, c0, p []float64
				in := make([]*Tensor, 8)
				if c.op != "LSTM" {
					in = in[:6]
				}
				xs := []int{c.seq, c.batch, c.in}
				xv := x
				if c.layout == 1 {
					xv, xs = miscPermute(x, xs, []int{1, 0, 2})
				}
				in[0] = miscTensorF(dt, xv, xs...)
				in[1] = miscTensorF(dt, w, nd, G*H, c.in)
				in[2] = miscTensorF(dt, r, nd, G*H, H)
				if c.bias {
					b = miscRepr(dt, miscRandF64(rng, nd, 2*G*H))
					in[3] = miscTensorF(dt, b, nd, 2*G*H)
				}
				if c.lens != nil {
					in[4] = miscTensorI32(c.lens, c.batch)
				}
				stIn := func(v []float64) *Tensor {
					s := []int{nd, c.batch, H}
					if c.layout == 1 {
						v, s = miscPermute(v, s, []int{1, 0, 2})
					}
					return miscTensorF(dt, v, s...)
				}
				if c.h0 {
					h0 = miscRepr(dt, miscRandF64(rng, nd, c.batch, H))
					in[5] = stIn(h0)
				}
				if c.c0 {
					c0 = miscRepr(dt, miscRandF64(rng, nd, c.batch, H))
					in[6] = stIn(c0)
				}
				if c.peep {
					p = miscRepr(dt, miscRandF64(rng, nd, 3*H))
					in[7] = miscTensorF(dt, p, nd, 3*H)
				}
				attrs := Attrs{"hidden_size": int64(H), "direction": c.dir}
				if c.layout != 0 {
					attrs["layout"] = int64(c.layout)
				}
				if c.clip > 0 {
					attrs["clip"] = float32(c.clip)
				}
				if c.inputForget {
					attrs["input_forget"] = int64(1)
				}
				if c.lbr {
					attrs["linear_before_reset"] = int64(1)
				}
				if c.acts != nil {
					attrs["activations"] = c.acts
				}
				if c.alphas != nil {
					attrs["activation_alpha"] = c.alphas
				}
				if c.betas != nil {
					attrs["activation_beta"] = c.betas
				}
				out := []*Tensor{{}, {}}
				if c.op == "LSTM" {
					out = append(out, &Tensor{})
				}
				if c.noY {
					out[0] = nil
				}
				n := &Node{Name: "r", Op: c.op, Version: 14, Attrs: attrs, In: in, Out: out}
				k := map[string]Kernel{"RNN": RNN, "GRU": GRU, "LSTM": LSTM}[c.op]
				if err := k(n); err != nil {
					t.Fatal(err)
				}
				// The reference works in f64 on the rounded inputs; f16
				// tolerance also covers f16 rounding of the outputs.
				if c.clip > 0 {
					c.clip = float64(float32(c.clip))
				}
				ra := make([]miscRefActT, len(c.refActs))
				for i, a := range c.refActs {
					ra[i] = miscRefActT{a.name, float64(float32(a.alpha)), float64(float32(a.beta))}
				}
				c.refActs = ra
				y, yh, yc := miscRNNRef(c, x, w, r, b, h0, c0, p)
				tol := miscTol(dt)
				if dt == F32 {
					tol = 1e-5
				} else if dt == F16 {
					tol = 5e-3
				}
				ys := []int{c.seq, nd, c.batch, H}
				hsh := []int{nd, c.batch, H}
				if c.layout == 1 {
					y, ys = miscPermute(y, ys, []int{2, 0, 1, 3})
					yh, hsh = miscPermute(yh, hsh, []int{1, 0, 2})
					yc, _ = miscPermute(yc, []int{nd, c.batch, H}, []int{1, 0, 2})
				}
				if !c.noY {
					miscCheckClose(t, "Y", out[0], y, ys, tol)
				}
				miscCheckClose(t, "Y_h", out[1], yh, hsh, tol)
				if c.op == "LSTM" {
					miscCheckClose(t, "Y_c", out[2], yc, hsh, tol)
				}
				miscNoAllocs(t, n, k)
			})
		}
	}
}
