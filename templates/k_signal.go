package templates

import "math"

// Signal processing (opset 17): DFT, STFT, the Hann, Hamming and Blackman
// windows, and MelWeightMatrix. Complex tensors carry a last dim of 2
// (real, imaginary); real ones a last dim of 1. Transforms run in float64:
// a direct DFT over a table of the L roots of unity (exact periodicity, no
// accumulated phase error), or a radix-2 FFT when L is a power of two.

// sigScratch is the float64 memory one node reuses across runs.
type sigScratch struct {
	cs, sn         []float64 // the roots of unity for the cached length
	n              int       // length cs and sn were computed for
	re, im, or, oi []float64
	win            []float64
	shape          []int
}

func sigScr(n *Node) *sigScratch {
	if s, ok := n.Cache.(*sigScratch); ok {
		return s
	}
	s := &sigScratch{}
	n.Cache = s
	return s
}

func sigGrow(b *[]float64, size int) []float64 {
	if cap(*b) < size {
		*b = make([]float64, size)
	}
	*b = (*b)[:size]
	return *b
}

// roots fills the tables with cos and sin of 2*pi*m/L, m < L.
func (s *sigScratch) roots(L int) {
	if s.n == L && len(s.cs) == L {
		return
	}
	cs, sn := sigGrow(&s.cs, L), sigGrow(&s.sn, L)
	for m := 0; m < L; m++ {
		a := 2 * math.Pi * float64(m) / float64(L)
		cs[m], sn[m] = math.Cos(a), math.Sin(a)
	}
	s.n = L
}

// transform computes bins 0..K-1 of the length-L DFT of (re, im) into
// (or, oi): forward X[k] = sum x[j] e^(-2 pi i jk/L); inverse uses
// e^(+...) and divides by L. re and im may be overwritten.
func (s *sigScratch) transform(re, im, or, oi []float64, L, K int, inverse bool) {
	s.roots(L)
	sign := -1.0
	if inverse {
		sign = 1
	}
	if L > 1 && L&(L-1) == 0 {
		sigFFT(re, im, L, s.cs, s.sn, sign)
		copy(or[:K], re)
		copy(oi[:K], im)
	} else {
		for k := 0; k < K; k++ {
			var sr, si float64
			m := 0
			for j := 0; j < L; j++ {
				c, sv := s.cs[m], sign*s.sn[m]
				sr += re[j]*c - im[j]*sv
				si += re[j]*sv + im[j]*c
				if m += k; m >= L {
					m -= L
				}
			}
			or[k], oi[k] = sr, si
		}
	}
	if inverse {
		for k := 0; k < K; k++ {
			or[k] /= float64(L)
			oi[k] /= float64(L)
		}
	}
}

// sigFFT is an in-place iterative radix-2 FFT of length L (a power of two).
func sigFFT(re, im []float64, L int, cs, sn []float64, sign float64) {
	for i, j := 1, 0; i < L; i++ {
		bit := L >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j |= bit
		if i < j {
			re[i], re[j] = re[j], re[i]
			im[i], im[j] = im[j], im[i]
		}
	}
	for size := 2; size <= L; size <<= 1 {
		half, step := size>>1, L/size
		for start := 0; start < L; start += size {
			for k := 0; k < half; k++ {
				c, sv := cs[k*step], sign*sn[k*step]
				a, b := start+k, start+k+half
				tr := re[b]*c - im[b]*sv
				ti := re[b]*sv + im[b]*c
				re[b], im[b] = re[a]-tr, im[a]-ti
				re[a], im[a] = re[a]+tr, im[a]+ti
			}
		}
	}
}

// sigScalar reads a one-element integer input.
func sigScalar(n *Node, i int, what string) (int, error) {
	t := n.Input(i)
	if t == nil {
		return 0, n.Errorf("missing input %s", what)
	}
	if t.Len() != 1 {
		return 0, n.Errorf("input %s must be a scalar, has shape %s", what, t.ShapeString())
	}
	return int(ewI64At(t, 0)), nil
}

// DFT is ONNX DFT (versions 17 and 20): the transform along axis of a
// real [..., 1] or complex [..., 2] input, zero-padded or cut to
// dft_length, inverse when asked, only the first L/2+1 bins when onesided.
// The axis is an attribute (default 1) in v17 and input 2 (default -2,
// the last signal axis) in v20. inverse with onesided is the inverse of a
// real transform: the input holds bins 0..L/2 of a conjugate-symmetric
// spectrum (L = dft_length, else 2*(bins-1)) and the output is the real
// signal [..., L, ..., 1].
func DFT(n *Node) error {
	X := n.Input(0)
	if X == nil {
		return n.Errorf("missing input")
	}
	if !ewIsFloat(X.DType) {
		return n.Errorf("input dtype %s is not a float type", X.DType)
	}
	r := len(X.Shape)
	if r < 2 || (X.Shape[r-1] != 1 && X.Shape[r-1] != 2) {
		return n.Errorf("input shape %s: want rank >= 2 with a last dim of 1 (real) or 2 (complex)", X.ShapeString())
	}
	axis := int(n.Attrs.Int("axis", 1))
	if n.Version >= 20 {
		axis = -2
		if t := n.Input(2); t != nil {
			var err error
			if axis, err = sigScalar(n, 2, "axis"); err != nil {
				return err
			}
		}
	}
	given := axis
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis > r-2 {
		return n.Errorf("axis %d is outside the signal axes of shape %s", given, X.ShapeString())
	}
	inverse := n.Attrs.Int("inverse", 0) != 0
	onesided := n.Attrs.Int("onesided", 0) != 0
	irfft := inverse && onesided
	N := X.Shape[axis]
	L := N
	if irfft {
		L = 2 * (N - 1)
	}
	if n.Input(1) != nil {
		var err error
		if L, err = sigScalar(n, 1, "dft_length"); err != nil {
			return err
		}
	}
	if L < 1 {
		return n.Errorf("dft_length %d must be positive", L)
	}
	K, cout := L, 2
	switch {
	case irfft:
		cout = 1
	case onesided:
		K = L/2 + 1
	}
	cin := X.Shape[r-1]
	outer := 1
	for _, d := range X.Shape[:axis] {
		outer *= d
	}
	inner := 1 // elements between consecutive samples of the signal, complex dim excluded
	for _, d := range X.Shape[axis+1 : r-1] {
		inner *= d
	}
	s := sigScr(n)
	shape := append(s.shape[:0], X.Shape...)
	s.shape = shape
	shape[axis], shape[r-1] = K, cout
	out := n.Out[0]
	out.Resize(X.DType, shape...)
	re, im := sigGrow(&s.re, max(L, N)), sigGrow(&s.im, max(L, N))
	or, oi := sigGrow(&s.or, K), sigGrow(&s.oi, K)
	for o := 0; o < outer; o++ {
		for q := 0; q < inner; q++ {
			at := func(j int) int { return ((o*N+j)*inner + q) * cin }
			for j := 0; j < L; j++ {
				re[j], im[j] = 0, 0
			}
			if irfft {
				// Bins 0..L/2 from the input, the rest by symmetry.
				for j := 0; j <= L/2 && j < N; j++ {
					re[j] = ewF64At(X, at(j))
					if cin == 2 {
						im[j] = ewF64At(X, at(j)+1)
					}
					if j > 0 && L-j > L/2 {
						re[L-j], im[L-j] = re[j], -im[j]
					}
				}
			} else {
				for j := 0; j < L && j < N; j++ {
					re[j] = ewF64At(X, at(j))
					if cin == 2 {
						im[j] = ewF64At(X, at(j)+1)
					}
				}
			}
			s.transform(re, im, or, oi, L, K, inverse)
			for k := 0; k < K; k++ {
				at := ((o*K+k)*inner + q) * cout
				ewSetF64(out, at, or[k])
				if cout == 2 {
					ewSetF64(out, at+1, oi[k])
				}
			}
		}
	}
	return nil
}

// STFT is ONNX STFT (version 17): signal [batch, length, 1 or 2], frames of
// frame_length samples every frame_step, each multiplied by the window
// (when given) and transformed; output [batch, frames, bins, 2] with
// frame_length/2+1 bins when onesided (the default).
func STFT(n *Node) error {
	X := n.Input(0)
	if X == nil {
		return n.Errorf("missing input signal")
	}
	if !ewIsFloat(X.DType) {
		return n.Errorf("signal dtype %s is not a float type", X.DType)
	}
	if len(X.Shape) != 3 || (X.Shape[2] != 1 && X.Shape[2] != 2) {
		return n.Errorf("signal shape %s: want [batch, length, 1 or 2]", X.ShapeString())
	}
	step, err := sigScalar(n, 1, "frame_step")
	if err != nil {
		return err
	}
	if step < 1 {
		return n.Errorf("frame_step %d must be positive", step)
	}
	W := n.Input(2)
	L := -1
	if W != nil {
		if len(W.Shape) != 1 {
			return n.Errorf("window shape %s: want 1-D", W.ShapeString())
		}
		L = W.Shape[0]
	}
	if n.Input(3) != nil {
		fl, err := sigScalar(n, 3, "frame_length")
		if err != nil {
			return err
		}
		if L >= 0 && fl != L {
			return n.Errorf("frame_length %d differs from the window's length %d", fl, L)
		}
		L = fl
	}
	if L < 1 {
		return n.Errorf("want a window or a positive frame_length")
	}
	B, S, cin := X.Shape[0], X.Shape[1], X.Shape[2]
	if S < L {
		return n.Errorf("signal length %d is shorter than a frame (%d)", S, L)
	}
	frames := (S-L)/step + 1
	K := L
	if n.Attrs.Int("onesided", 1) != 0 {
		K = L/2 + 1
	}
	out := n.Out[0]
	out.Resize(X.DType, B, frames, K, 2)
	s := sigScr(n)
	win := sigGrow(&s.win, L)
	for j := range win {
		win[j] = 1
		if W != nil {
			win[j] = ewF64At(W, j)
		}
	}
	re, im := sigGrow(&s.re, L), sigGrow(&s.im, L)
	or, oi := sigGrow(&s.or, K), sigGrow(&s.oi, K)
	for b := 0; b < B; b++ {
		for f := 0; f < frames; f++ {
			for j := 0; j < L; j++ {
				at := (b*S + f*step + j) * cin
				re[j], im[j] = ewF64At(X, at)*win[j], 0
				if cin == 2 {
					im[j] = ewF64At(X, at+1) * win[j]
				}
			}
			s.transform(re, im, or, oi, L, K, false)
			for k := 0; k < K; k++ {
				at := ((b*frames+f)*K + k) * 2
				ewSetF64(out, at, or[k])
				ewSetF64(out, at+1, oi[k])
			}
		}
	}
	return nil
}

// HannWindow is ONNX HannWindow: 0.5 - 0.5 cos(2 pi n / N).
func HannWindow(n *Node) error { return sigWindow(n, 0.5, 0.5, 0) }

// HammingWindow is ONNX HammingWindow: a0 - (1-a0) cos(2 pi n / N) with
// a0 = 25/46.
func HammingWindow(n *Node) error { return sigWindow(n, 25.0/46, 1-25.0/46, 0) }

// BlackmanWindow is ONNX BlackmanWindow:
// 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N).
func BlackmanWindow(n *Node) error { return sigWindow(n, 0.42, 0.5, 0.08) }

// sigWindow writes a0 - a1 cos(2 pi n/N) + a2 cos(4 pi n/N) for n < size,
// where N is size when periodic (the default) and size-1 when symmetric.
func sigWindow(n *Node, a0, a1, a2 float64) error {
	size, err := sigScalar(n, 0, "size")
	if err != nil {
		return err
	}
	if size < 0 {
		return n.Errorf("size %d is negative", size)
	}
	dt := DType(n.Attrs.Int("output_datatype", int64(F32)))
	if !ewIsNumeric(dt) {
		return n.Errorf("output_datatype %d is not a numeric dtype", int(dt))
	}
	N := size
	if n.Attrs.Int("periodic", 1) == 0 {
		N = size - 1
	}
	out := n.Out[0]
	out.Resize(dt, size)
	for i := 0; i < size; i++ {
		v := 1.0 // a symmetric window of one sample
		if N > 0 {
			a := 2 * math.Pi * float64(i) / float64(N)
			v = a0 - a1*math.Cos(a) + a2*math.Cos(2*a)
		}
		ewSetF64(out, i, v)
	}
	return nil
}

// MelWeightMatrix is ONNX MelWeightMatrix: [dft_length/2+1, num_mel_bins]
// triangular filters, num_mel_bins+2 points spaced evenly on the mel scale
// (mel = 2595 log10(1 + hz/700)) from lower to upper edge, each mapped to
// the spectrogram bin floor((dft_length+1) hz / sample_rate), as the
// operator's reference implementation does.
func MelWeightMatrix(n *Node) error {
	bins, err := sigScalar(n, 0, "num_mel_bins")
	if err != nil {
		return err
	}
	dftLen, err := sigScalar(n, 1, "dft_length")
	if err != nil {
		return err
	}
	rate, err := sigScalar(n, 2, "sample_rate")
	if err != nil {
		return err
	}
	lo, hi := n.Input(3), n.Input(4)
	if lo == nil || hi == nil || lo.Len() != 1 || hi.Len() != 1 {
		return n.Errorf("lower_edge_hertz and upper_edge_hertz must be scalars")
	}
	if bins < 1 || dftLen < 1 || rate < 1 {
		return n.Errorf("num_mel_bins %d, dft_length %d and sample_rate %d must be positive", bins, dftLen, rate)
	}
	dt := DType(n.Attrs.Int("output_datatype", int64(F32)))
	if !ewIsNumeric(dt) {
		return n.Errorf("output_datatype %d is not a numeric dtype", int(dt))
	}
	spec := dftLen/2 + 1
	out := n.Out[0]
	out.Resize(dt, spec, bins)
	ewZero(out.Data, 0, spec*bins)
	lowMel := 2595 * math.Log10(1+ewF64At(lo, 0)/700)
	highMel := 2595 * math.Log10(1+ewF64At(hi, 0)/700)
	step := (highMel - lowMel) / float64(bins+2)
	pts := miscScr[float64](n).getInts(0, bins+2)
	for i := range pts {
		hz := 700 * (math.Pow(10, (float64(i)*step+lowMel)/2595) - 1)
		pts[i] = int(math.Floor(float64(dftLen+1) * hz / float64(rate)))
	}
	set := func(j, i int, v float64) error {
		if j < 0 || j >= spec {
			return n.Errorf("mel band %d reaches spectrogram bin %d, outside [0, %d)", i, j, spec)
		}
		ewSetF64(out, j*bins+i, v)
		return nil
	}
	for i := 0; i < bins; i++ {
		left, center, right := pts[i], pts[i+1], pts[i+2]
		if up := center - left; up == 0 {
			if err := set(center, i, 1); err != nil {
				return err
			}
		} else {
			for j := left; j <= center; j++ {
				if err := set(j, i, float64(j-left)/float64(up)); err != nil {
					return err
				}
			}
		}
		if down := right - center; down > 0 {
			for j := center; j < right; j++ {
				if err := set(j, i, float64(right-j)/float64(down)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
