package templates

import "math"

// GridSample is ONNX GridSample: v16 (4-D, bilinear/nearest/bicubic) and
// v20/v22 (N-D, linear/nearest/cubic). X is [N, C, D1..Dr], grid is
// [N, O1..Or, r] with grid[..., 0] indexing the last spatial axis. Each
// output point gathers taps (1 for nearest, 2^r for linear, 4^r for cubic)
// whose offsets and weights are shared by all channels.
func GridSample(n *Node) error {
	if ok, err := nnViaF32(n, GridSample); ok {
		return err
	}
	x, grid := n.Input(0), n.Input(1)
	if x == nil || grid == nil {
		return n.Errorf("needs X and grid")
	}
	r := len(x.Shape) - 2
	if r < 1 || len(grid.Shape) != r+2 || grid.Shape[r+1] != r || grid.Shape[0] != x.Shape[0] {
		return n.Errorf("needs X [N,C,D1..Dr] and grid [N,O1..Or,r], have X %v and grid %v", x.Shape, grid.Shape)
	}
	if n.Version < 20 && r != 2 {
		return n.Errorf("GridSample-%d takes 4-D inputs, have rank %d", n.Version, r+2)
	}
	def := "linear"
	if n.Version < 20 {
		def = "bilinear"
	}
	mode := 1 // 0 nearest, 1 linear, 2 cubic
	switch m := n.Attrs.String("mode", def); m {
	case "nearest":
		mode = 0
	case "bilinear", "linear":
	case "bicubic", "cubic":
		mode = 2
	default:
		return n.Errorf("unknown mode %q", m)
	}
	pad := 0 // 0 zeros, 1 border, 2 reflection
	switch p := n.Attrs.String("padding_mode", "zeros"); p {
	case "zeros":
	case "border":
		pad = 1
	case "reflection":
		pad = 2
	default:
		return n.Errorf("unknown padding_mode %q", p)
	}
	align := n.Attrs.Int("align_corners", 0) != 0
	N, C := x.Shape[0], x.Shape[1]
	st := miscScr[float64](n)
	// size[a], stride[a] for spatial axis a (a = 0 is D1); lo/hi the
	// range of valid coordinates, which reflection folds into.
	size := st.getInts(0, r)
	stride := st.getInts(1, r)
	lo, hi := st.getF64(0, r), st.getF64(1, r)
	outShape := st.getInts(2, r+2)
	outShape[0], outShape[1] = N, C
	spatial, opts := 1, 1
	for a := r - 1; a >= 0; a-- {
		size[a] = x.Shape[2+a]
		stride[a] = spatial
		spatial *= size[a]
		outShape[2+a] = grid.Shape[1+a]
		opts *= grid.Shape[1+a]
		lo[a], hi[a] = -0.5, float64(size[a])-0.5
		if align {
			lo[a], hi[a] = 0, float64(size[a]-1)
		}
	}
	y := n.Out[0]
	y.Resize(x.DType, outShape...)
	per := [...]int{1, 2, 4}[mode]
	taps := 1
	for range r {
		taps *= per
	}
	// Per axis: per indices (-1 = outside, reads 0) and weights.
	aIdx := st.getInts(3, r*per)
	aW := st.getF64(2, r*per)
	tOff := st.getInts(4, taps)
	tW := st.getF64(3, taps)
	sel := st.getInts(5, r)
	xd := st.getF64(4, 0)
	if x.DType != F64 {
		xd = st.getF64(4, x.Len())
		for i := range xd {
			xd[i] = ewF64At(x, i)
		}
	} else {
		xd = x.F64()
	}
	for b := 0; b < N; b++ {
		for o := 0; o < opts; o++ {
			g := (b*opts + o) * r
			for a := 0; a < r; a++ {
				v := ewF64At(grid, g+r-1-a) // grid's last entry is D1's
				l := size[a]
				var c float64
				if align {
					c = (v + 1) / 2 * float64(l-1)
				} else {
					c = ((v+1)*float64(l) - 1) / 2
				}
				if mode != 2 && (c < lo[a] || c > hi[a]) {
					switch pad {
					case 1:
						c = min(max(c, 0), float64(l-1))
					case 2:
						c = miscReflect(c, lo[a], hi[a])
					}
				}
				ix, w := aIdx[a*per:(a+1)*per], aW[a*per:(a+1)*per]
				switch mode {
				case 0:
					ix[0], w[0] = int(math.RoundToEven(c)), 1
				case 1:
					f := math.Floor(c)
					ix[0], ix[1] = int(f), int(f)+1
					w[0], w[1] = 1-(c-f), c-f
				case 2:
					f := math.Floor(c)
					cw := miscCubic(c-f, -0.75)
					for k := 0; k < 4; k++ {
						ix[k], w[k] = int(f)-1+k, cw[k]
					}
				}
				for k := range ix {
					q := ix[k]
					switch pad {
					case 0:
						if q < 0 || q >= l {
							q = -1
						}
					case 1:
						q = min(max(q, 0), l-1)
					case 2:
						q = int(miscReflect(float64(q), lo[a], hi[a]))
						q = min(max(q, 0), l-1)
					}
					ix[k] = q
				}
			}
			// The product of the axes' taps.
			clear(sel)
			for t := 0; t < taps; t++ {
				off, w := 0, 1.0
				for a := 0; a < r; a++ {
					q := aIdx[a*per+sel[a]]
					if q < 0 {
						off = -1
					} else if off >= 0 {
						off += q * stride[a]
					}
					w *= aW[a*per+sel[a]]
				}
				tOff[t], tW[t] = off, w
				for a := r - 1; a >= 0; a-- {
					sel[a]++
					if sel[a] < per {
						break
					}
					sel[a] = 0
				}
			}
			for c := 0; c < C; c++ {
				plane := xd[(b*C+c)*spatial:]
				v := 0.0
				for t := 0; t < taps; t++ {
					if tOff[t] >= 0 {
						v += tW[t] * plane[tOff[t]]
					}
				}
				miscSetAt(y, (b*C+c)*opts+o, v)
			}
		}
	}
	return nil
}

// AffineGrid is ONNX AffineGrid (v20): for theta [N, 2, 3] and size
// [N, C, H, W] (or [N, 3, 4] and [N, C, D, H, W]) the grid [N, H, W, 2]
// (or [N, D, H, W, 3]) of theta applied to the normalised coordinates
// (x, y[, z], 1) of each output point, x running along W.
func AffineGrid(n *Node) error {
	if ok, err := nnViaF32(n, AffineGrid); ok {
		return err
	}
	theta, sz := n.Input(0), n.Input(1)
	if theta == nil || sz == nil || len(theta.Shape) != 3 {
		return n.Errorf("needs theta [N, r, r+1] and size")
	}
	r := sz.Len() - 2
	N := theta.Shape[0]
	if r != 2 && r != 3 || theta.Shape[1] != r || theta.Shape[2] != r+1 {
		return n.Errorf("theta %v does not match size with %d entries", theta.Shape, sz.Len())
	}
	if int(ewI64At(sz, 0)) != N {
		return n.Errorf("size[0] = %d, theta has N = %d", ewI64At(sz, 0), N)
	}
	align := n.Attrs.Int("align_corners", 0) != 0
	st := miscScr[float64](n)
	dims := st.getInts(0, r) // D1..Dr (H, W or D, H, W)
	shape := st.getInts(1, r+2)
	shape[0], shape[r+1] = N, r
	pts := 1
	for a := 0; a < r; a++ {
		dims[a] = int(ewI64At(sz, 2+a))
		if dims[a] <= 0 {
			return n.Errorf("size %d on axis %d must be positive", dims[a], 2+a)
		}
		shape[1+a] = dims[a]
		pts *= dims[a]
	}
	y := n.Out[0]
	y.Resize(theta.DType, shape...)
	coord := st.getInts(2, r)
	hom := st.getF64(0, r+1) // (x, y[, z], 1)
	for b := 0; b < N; b++ {
		clear(coord)
		for p := 0; p < pts; p++ {
			for a := 0; a < r; a++ {
				l, i := dims[a], coord[a]
				var v float64
				switch {
				case !align:
					v = float64(2*i+1)/float64(l) - 1
				case l > 1:
					v = -1 + 2*float64(i)/float64(l-1)
				default:
					v = -1
				}
				hom[r-1-a] = v
			}
			hom[r] = 1
			for j := 0; j < r; j++ {
				s := 0.0
				for k := 0; k <= r; k++ {
					s += ewF64At(theta, (b*r+j)*(r+1)+k) * hom[k]
				}
				miscSetAt(y, (b*pts+p)*r+j, s)
			}
			for a := r - 1; a >= 0; a-- {
				coord[a]++
				if coord[a] < dims[a] {
					break
				}
				coord[a] = 0
			}
		}
	}
	return nil
}
