package templates

import "math"

// The epilogue of the fused conv and GEMM kernels (k_conv_fused.go, k_conv.go,
// k_conv_nhwc*.go, k_gemm*.go; also k_elem_group.go and k_elem_scaleshift.go): the decoded "activation" attribute and the row
// loops that add bias and residual and apply it to a block of output while
// it is still in cache.

// Activation kinds of the fused ops' "activation" attribute.
const (
	fusedActNone = iota
	fusedActRelu
	fusedActClip
	fusedActLeakyRelu
	fusedActSigmoid
	fusedActTanh
	fusedActHardSwish
	fusedActGelu
	fusedActGeluTanh
	fusedActSwish       // p0 alpha (SiLU: 1)
	fusedActHardSigmoid // p0 alpha, p1 beta
	fusedActElu         // p0 alpha
	fusedActCelu        // p0 alpha
	fusedActSelu        // p0 alpha, p1 gamma
	fusedActMish
)

// fusedAct is a decoded activation with its parameters.
type fusedAct struct {
	kind   int
	p0, p1 float64
}

// fusedActOf reads the activation and activation_params attributes.
func fusedActOf(n *Node) (fusedAct, error) { return fusedActNamed(n, "activation") }

// fusedActNamed reads an activation from n's attributes attr and
// attr+"_params" (FusedConvChain's stages have one each).
func fusedActNamed(n *Node, attr string) (fusedAct, error) {
	p := n.Attrs.Floats(attr + "_params")
	param := func(i int, def float64) float64 {
		if i < len(p) {
			return float64(p[i])
		}
		return def
	}
	switch name := n.Attrs.String(attr, ""); name {
	case "":
		return fusedAct{}, nil
	case "Relu":
		return fusedAct{kind: fusedActRelu}, nil
	case "Clip":
		return fusedAct{kind: fusedActClip, p0: param(0, math.Inf(-1)), p1: param(1, math.Inf(1))}, nil
	case "LeakyRelu":
		return fusedAct{kind: fusedActLeakyRelu, p0: param(0, 0.01)}, nil
	case "Sigmoid":
		return fusedAct{kind: fusedActSigmoid}, nil
	case "Tanh":
		return fusedAct{kind: fusedActTanh}, nil
	case "HardSwish":
		return fusedAct{kind: fusedActHardSwish}, nil
	case "Gelu":
		return fusedAct{kind: fusedActGelu}, nil
	case "GeluTanh":
		return fusedAct{kind: fusedActGeluTanh}, nil
	case "Swish":
		return fusedAct{kind: fusedActSwish, p0: param(0, 1)}, nil
	case "HardSigmoid":
		return fusedAct{kind: fusedActHardSigmoid, p0: param(0, 0.2), p1: param(1, 0.5)}, nil
	case "Elu":
		return fusedAct{kind: fusedActElu, p0: param(0, 1)}, nil
	case "Celu":
		return fusedAct{kind: fusedActCelu, p0: param(0, 1)}, nil
	case "Selu":
		return fusedAct{kind: fusedActSelu, p0: param(0, 1.67326319217681884765625), p1: param(1, 1.05070102214813232421875)}, nil
	case "Mish":
		return fusedAct{kind: fusedActMish}, nil
	default:
		return fusedAct{}, n.Errorf("unknown activation %q", name)
	}
}

// fusedGelu is x*0.5*(1+erf(x/sqrt2)).
func fusedGelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x*(1/math.Sqrt2))) }

// fusedGeluTanh is GELU's tanh approximation.
func fusedGeluTanh(x float64) float64 {
	const c = 0.7978845608028654 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x)))
}

// fusedActRow applies a to row in place.
func fusedActRow[T nnFloat](a fusedAct, row []T) {
	if r, ok := any(row).([]float32); ok && fusedActRow32(a, r) {
		return
	}
	switch a.kind {
	case fusedActRelu:
		// max, not a branch: half the values are negative, so a branch
		// mispredicts; max keeps NaN like the branch did.
		for j, v := range row {
			row[j] = max(v, 0)
		}
	case fusedActClip:
		lo, hi := T(a.p0), T(a.p1)
		for j, v := range row {
			if v < lo {
				row[j] = lo
			} else if v > hi {
				row[j] = hi
			}
		}
	case fusedActLeakyRelu:
		alpha := T(a.p0)
		for j, v := range row {
			if v < 0 {
				row[j] = v * alpha
			}
		}
	case fusedActSigmoid:
		for j, v := range row {
			x := float64(v)
			if x >= 0 {
				row[j] = T(1 / (1 + math.Exp(-x)))
			} else {
				e := math.Exp(x)
				row[j] = T(e / (1 + e))
			}
		}
	case fusedActTanh:
		for j, v := range row {
			row[j] = T(math.Tanh(float64(v)))
		}
	case fusedActHardSwish:
		for j, v := range row {
			x := float64(v)
			row[j] = T(x * math.Max(0, math.Min(1, x/6+0.5)))
		}
	case fusedActGelu:
		for j, v := range row {
			row[j] = T(fusedGelu(float64(v)))
		}
	case fusedActGeluTanh:
		for j, v := range row {
			row[j] = T(fusedGeluTanh(float64(v)))
		}
	default:
		// The unfused kernels' own functions and loop (k_elem_act_f64.go),
		// so a fused activation has the bits of its ONNX node.
		if f := fusedActFunc(a.kind); f != nil {
			ewMapF(row, row, f, a.p0, a.p1)
		}
	}
}

// fusedActFunc returns the float64 function of the activations that
// apply their unfused kernel's function per element, nil for the others.
func fusedActFunc(kind int) func(x, p, q float64) float64 {
	switch kind {
	case fusedActSwish:
		return actSwish64
	case fusedActHardSigmoid:
		return actHardSigmoid64
	case fusedActElu:
		return actElu64
	case fusedActCelu:
		return actCelu64
	case fusedActSelu:
		return actSelu64
	case fusedActMish:
		return actMish64
	}
	return nil
}

// fusedEpilogue finishes one output row segment y in cache:
// y = act(y + bias + bscale*bvec + z) with z added after act instead when
// zAfter. bvec and z may be nil; bvec is indexed like y.
func fusedEpilogue[T nnFloat](y []T, bias T, bvec []T, bscale T, z []T, zAfter bool, a fusedAct) {
	if r, ok := any(y).([]float32); ok {
		fusedEpilogue32(r, float32(bias), any(bvec).([]float32), float32(bscale), any(z).([]float32), zAfter, a)
		return
	}
	zb := z
	if zAfter {
		zb = nil
	}
	switch {
	case bvec != nil && zb != nil:
		bvec, zb = bvec[:len(y)], zb[:len(y)]
		for j := range y {
			y[j] += bias + bscale*bvec[j] + zb[j]
		}
	case bvec != nil:
		bvec = bvec[:len(y)]
		for j := range y {
			y[j] += bias + bscale*bvec[j]
		}
	case zb != nil:
		zb = zb[:len(y)]
		for j := range y {
			y[j] += bias + zb[j]
		}
	case bias != 0:
		for j := range y {
			y[j] += bias
		}
	}
	fusedActRow(a, y)
	if z != nil && zAfter {
		z = z[:len(y)]
		for j := range y {
			y[j] += z[j]
		}
	}
}

// fusedEpilogue32 is fusedEpilogue for float32 with the vector kernels:
// the bias vector and residual as axpy passes, then bias and activation.
func fusedEpilogue32(y []float32, bias float32, bvec []float32, bscale float32, z []float32, zAfter bool, a fusedAct) {
	if a.kind == fusedActGelu && bvec != nil && bscale == 1 && bias == 0 && (z == nil || zAfter) {
		// A transformer's FFN: bias and GELU in one pass, the bits of
		// the two passes below.
		geluBias32(y, bvec)
		if z != nil {
			axpy32(y, z[:len(y)], 1)
		}
		return
	}
	if bvec != nil {
		axpy32(y, bvec[:len(y)], bscale)
	}
	if z != nil && !zAfter {
		axpy32(y, z[:len(y)], 1)
	}
	if !fusedBiasAct32(y, bias, a) {
		if bias != 0 {
			biasClamp(y, bias, float32(math.Inf(-1)), float32(math.Inf(1)))
		}
		fusedActRow(a, y)
	}
	if z != nil && zAfter {
		axpy32(y, z[:len(y)], 1)
	}
}

// fusedL2Floats is the output block, in elements, the fused kernels aim to
// keep in L2 between the GEMM and its epilogue.
const fusedL2Floats = 64 << 10

// fusedCheckZ checks that the residual Z, if any, has Y's shape.
func fusedCheckZ(n *Node, Z *Tensor, dt DType, shape []int) error {
	if Z == nil {
		return nil
	}
	if Z.DType != dt || len(Z.Shape) != len(shape) {
		return n.Errorf("residual Z %v must have the output's dtype and shape %v", Z.ShapeString(), shape)
	}
	for i, d := range shape {
		if Z.Shape[i] != d {
			return n.Errorf("residual Z %v must have the output's shape %v", Z.ShapeString(), shape)
		}
	}
	return nil
}
