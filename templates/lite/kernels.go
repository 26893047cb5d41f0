// Package lite holds the kernels of cuvil's lite profile (compile -profile
// lite, docs/lite.md): pure Go for microcontroller-class targets, single
// threaded, float32, with no allocation, no unsafe, no sync and no fmt.
// Activations are float32 slices of the caller's arena; constant weights
// are little-endian float32 bytes read in place from the package's weights
// string (flash on a microcontroller), never copied to RAM. gen/lite.go
// copies this file into a lite package with the package clause renamed;
// the generated Run calls these functions with every shape as a literal.
package lite

import "math"

// wf is float32 element i of the little-endian blob w.
func wf(w string, i int) float32 {
	w = w[4*i : 4*i+4]
	return math.Float32frombits(uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24)
}

// conv2d is an NCHW convolution of x [n, c, h, wd] with the constant
// weights w [m, c/group, kh, kw] and bias b ([m], or "" for none) into y
// [n, m, oh, ow]: stride sh, sw, dilation dh, dw, top and left padding
// pt, pl (the bottom and right padding only shape oh and ow). y must not
// overlap x.
func conv2d(y, x []float32, w, b string, n, c, h, wd, m, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl, group int) {
	cg, mg := c/group, m/group
	for bn := 0; bn < n; bn++ {
		for oc := 0; oc < m; oc++ {
			g := oc / mg
			yp := y[(bn*m+oc)*oh*ow : (bn*m+oc+1)*oh*ow]
			bias := float32(0)
			if b != "" {
				bias = wf(b, oc)
			}
			for i := range yp {
				yp[i] = bias
			}
			for ic := 0; ic < cg; ic++ {
				xp := x[(bn*c+g*cg+ic)*h*wd : (bn*c+g*cg+ic+1)*h*wd]
				for ky := 0; ky < kh; ky++ {
					for kx := 0; kx < kw; kx++ {
						wv := wf(w, ((oc*cg+ic)*kh+ky)*kw+kx)
						// ox in [lo, hi) keeps ix = ox*sw - pl + kx*dw in [0, wd).
						off := kx*dw - pl
						lo := 0
						if off < 0 {
							lo = (-off + sw - 1) / sw
						}
						hi := ow
						if lim := (wd - off + sw - 1) / sw; lim < hi {
							hi = lim
						}
						for oy := 0; oy < oh; oy++ {
							iy := oy*sh - pt + ky*dh
							if iy < 0 || iy >= h {
								continue
							}
							row := xp[iy*wd : iy*wd+wd]
							yr := yp[oy*ow : oy*ow+ow]
							for ox := lo; ox < hi; ox++ {
								yr[ox] += wv * row[ox*sw+off]
							}
						}
					}
				}
			}
		}
	}
}

// gemm is y [m, n] = alpha * A' B' + beta * C with A' = a [m, k] (or a
// [k, m] transposed when ta), B' = the constant b [k, n] (or [n, k] when
// tb) and C the constant c broadcast by ck: 0 none, 1 a scalar, 2 a row
// [n], 3 a column [m], 4 a full [m, n]. y must not overlap a.
func gemm(y, a []float32, b, c string, m, k, n int, ta, tb bool, alpha, beta float32, ck int) {
	for i := 0; i < m; i++ {
		yr := y[i*n : i*n+n]
		for j := range yr {
			yr[j] = 0
		}
		for p := 0; p < k; p++ {
			var av float32
			if ta {
				av = a[p*m+i]
			} else {
				av = a[i*k+p]
			}
			if av == 0 {
				continue
			}
			if tb {
				for j := range yr {
					yr[j] += av * wf(b, j*k+p)
				}
			} else {
				bp := b[4*p*n : 4*(p+1)*n]
				for j := range yr {
					yr[j] += av * wf(bp, j)
				}
			}
		}
		for j := range yr {
			v := alpha * yr[j]
			switch ck {
			case 1:
				v += beta * wf(c, 0)
			case 2:
				v += beta * wf(c, j)
			case 3:
				v += beta * wf(c, i)
			case 4:
				v += beta * wf(c, i*n+j)
			}
			yr[j] = v
		}
	}
}

// pool2d is max (avg false) or average pooling of x [nc, h, wd] into y
// [nc, oh, ow] with window kh x kw, stride sh, sw, dilation dh, dw and top
// and left padding pt, pl. An average divides by the window's elements
// inside the input, or (inclPad) inside the padded input, h+pt+pb by
// wd+pl+pr, given by he, we (= h+pb, wd+pr).
func pool2d(y, x []float32, avg, inclPad bool, nc, h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, he, we int) {
	for q := 0; q < nc; q++ {
		xp := x[q*h*wd : (q+1)*h*wd]
		for oy := 0; oy < oh; oy++ {
			for ox := 0; ox < ow; ox++ {
				acc := float32(0)
				if !avg {
					acc = float32(math.Inf(-1))
				}
				cnt, padCnt := 0, 0
				for ky := 0; ky < kh; ky++ {
					iy := oy*sh - pt + ky*dh
					for kx := 0; kx < kw; kx++ {
						ix := ox*sw - pl + kx*dw
						if iy >= -pt && iy < he && ix >= -pl && ix < we {
							padCnt++
						}
						if iy < 0 || iy >= h || ix < 0 || ix >= wd {
							continue
						}
						v := xp[iy*wd+ix]
						cnt++
						if avg {
							acc += v
						} else if v > acc || v != v {
							acc = v
						}
					}
				}
				if avg {
					d := cnt
					if inclPad {
						d = padCnt
					}
					if d > 0 {
						acc /= float32(d)
					}
				}
				y[(q*oh+oy)*ow+ox] = acc
			}
		}
	}
}

// globalAvg is y[q] = the mean of x[q*hw : (q+1)*hw].
func globalAvg(y, x []float32, nc, hw int) {
	for q := 0; q < nc; q++ {
		s := float32(0)
		for _, v := range x[q*hw : (q+1)*hw] {
			s += v
		}
		y[q] = s / float32(hw)
	}
}

// Unary element-wise ops of unary.
const (
	opRelu = iota
	opSigmoid
	opTanh
	opClip
	opLeakyRelu
	opNeg
	opExp
	opSqrt
	opAbs
)

// unary is y = op(x) element-wise; y may be x. p and q are Clip's min and
// max and LeakyRelu's alpha (p).
func unary(y, x []float32, op int, p, q float32) {
	y = y[:len(x)]
	for i, v := range x {
		switch op {
		case opRelu:
			if v < 0 {
				v = 0
			}
		case opSigmoid:
			v = float32(1 / (1 + math.Exp(-float64(v))))
		case opTanh:
			v = float32(math.Tanh(float64(v)))
		case opClip:
			if v < p {
				v = p
			}
			if v > q {
				v = q
			}
		case opLeakyRelu:
			if v < 0 {
				v *= p
			}
		case opNeg:
			v = -v
		case opExp:
			v = float32(math.Exp(float64(v)))
		case opSqrt:
			v = float32(math.Sqrt(float64(v)))
		case opAbs:
			v = float32(math.Abs(float64(v)))
		}
		y[i] = v
	}
}

// Binary element-wise ops of binary.
const (
	opAdd = iota
	opSub
	opMul
	opDiv
	opMax
	opMin
)

// binRank is the rank binary's shapes are padded to.
const binRank = 6

// binary is y = a op b with numpy broadcasting: dims are y's dims, sa and
// sb a's and b's element strides (0 along a broadcast dim), all padded in
// front to binRank. An operand is the arena slice a (b) or, when ac (bc)
// is not "", that constant. y may be a or b when it has their shape.
func binary(y, a []float32, ac string, b []float32, bc string, op int, dims, sa, sb [binRank]int) {
	var idx [binRank]int
	ia, ib := 0, 0
	for i := range y {
		var x, z float32
		if ac != "" {
			x = wf(ac, ia)
		} else {
			x = a[ia]
		}
		if bc != "" {
			z = wf(bc, ib)
		} else {
			z = b[ib]
		}
		switch op {
		case opAdd:
			x += z
		case opSub:
			x -= z
		case opMul:
			x *= z
		case opDiv:
			x /= z
		case opMax:
			if z > x || z != z {
				x = z
			}
		case opMin:
			if z < x || z != z {
				x = z
			}
		}
		y[i] = x
		// Step the index, last dim fastest.
		for d := binRank - 1; d >= 0; d-- {
			idx[d]++
			ia += sa[d]
			ib += sb[d]
			if idx[d] < dims[d] {
				break
			}
			ia -= sa[d] * dims[d]
			ib -= sb[d] * dims[d]
			idx[d] = 0
		}
	}
}

// softmax is the softmax (log false) or log-softmax of each row of n
// elements of x into y; y may be x.
func softmax(y, x []float32, rows, n int, log bool) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*n:r*n+n], y[r*n:r*n+n]
		mx := float32(math.Inf(-1))
		for _, v := range xr {
			if v > mx {
				mx = v
			}
		}
		s := 0.0
		for _, v := range xr {
			s += math.Exp(float64(v - mx))
		}
		if log {
			ls := float32(math.Log(s))
			for i, v := range xr {
				yr[i] = v - mx - ls
			}
			continue
		}
		for i, v := range xr {
			yr[i] = float32(math.Exp(float64(v-mx)) / s)
		}
	}
}

// copyF32 copies a constant into y (a graph output that is a constant
// after folding is still written to the arena).
func copyF32(y []float32, c string) {
	for i := range y {
		y[i] = wf(c, i)
	}
}
