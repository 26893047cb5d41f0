package templates

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// jpgTestImage is a random image with smooth regions, edges and noise (so
// that blocks have both few and many nonzero coefficients), encoded by Go's
// image/jpeg (baseline; 4:2:0 for color).
func jpgTestImage(t *testing.T, rng *rand.Rand, W, H int, gray bool, quality int) []byte {
	t.Helper()
	var img image.Image
	fx, fy := rng.Float64()*0.5, rng.Float64()*0.5
	val := func(x, y, ch int) uint8 {
		v := 128 + 100*math.Sin(fx*float64(x)+float64(ch))*math.Cos(fy*float64(y)) + float64(rng.Intn(60)-30)
		if (x/5+y/3)%4 == 0 {
			v = float64(rng.Intn(256))
		}
		return uint8(math.Max(0, math.Min(255, v)))
	}
	if gray {
		g := image.NewGray(image.Rect(0, 0, W, H))
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				g.Pix[y*W+x] = val(x, y, 0)
			}
		}
		img = g
	} else {
		c := image.NewRGBA(image.Rect(0, 0, W, H))
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				c.SetRGBA(x, y, color.RGBA{val(x, y, 0), val(x, y, 1), val(x, y, 2), 255})
			}
		}
		img = c
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// jpgFloatRef decodes the parsed coefficients of j the straightforward
// way: dequantize, float64 IDCT (T.81 A.3.3), samples rounded to 8 bits,
// triangle-filter upsampling with replicated edges and float YCbCr->RGB.
// It returns W*H*C samples (C = 1 or 3).
func jpgFloatRef(j *jpgDec) []float64 {
	W, H := j.W, j.H
	var cosT [8][8]float64
	for x := 0; x < 8; x++ {
		for u := 0; u < 8; u++ {
			cu := 1.0
			if u == 0 {
				cu = 1 / math.Sqrt2
			}
			cosT[x][u] = cu * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16)
		}
	}
	planes := make([][]float64, len(j.comps))
	for ci := range j.comps {
		c := &j.comps[ci]
		cw, ch := (c.w+7)/8*8, (c.ht+7)/8*8
		pl := make([]float64, cw*ch)
		for by := 0; by < ch/8; by++ {
			for bx := 0; bx < cw/8; bx++ {
				blk := c.coef[(by*c.bw+bx)*64:]
				for y := 0; y < 8; y++ {
					for x := 0; x < 8; x++ {
						s := 0.0
						for v := 0; v < 8; v++ {
							for u := 0; u < 8; u++ {
								s += cosT[x][u] * cosT[y][v] * float64(blk[v*8+u]) * float64(c.qt[v*8+u])
							}
						}
						pl[(by*8+y)*cw+bx*8+x] = math.Max(0, math.Min(255, math.Round(s/4+128)))
					}
				}
			}
		}
		at := func(x, y int) float64 {
			x = max(0, min(c.w-1, x))
			y = max(0, min(c.ht-1, y))
			return pl[y*cw+x]
		}
		// Triangle filter: output pixel centres fall 1/4 and 3/4 of the
		// way between input sample centres.
		hr, vr := j.hmax/c.h, j.vmax/c.v
		up := make([]float64, W*H)
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				sx := (float64(x)+0.5)/float64(hr) - 0.5
				sy := (float64(y)+0.5)/float64(vr) - 0.5
				if hr == 1 {
					sx = float64(x)
				}
				if vr == 1 {
					sy = float64(y)
				}
				// libjpeg-turbo replicates for ratios above 2, and for 2:1
				// horizontal when a line has at most two samples.
				if hr > 2 || vr > 2 || (hr == 2 && c.w <= 2) {
					sx, sy = float64(x/hr), float64(y/vr)
				}
				x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
				ax, ay := sx-float64(x0), sy-float64(y0)
				up[y*W+x] = (1-ay)*((1-ax)*at(x0, y0)+ax*at(x0+1, y0)) + ay*((1-ax)*at(x0, y0+1)+ax*at(x0+1, y0+1))
			}
		}
		planes[ci] = up
	}
	if len(planes) == 1 {
		return planes[0]
	}
	out := make([]float64, 3*W*H)
	for i := 0; i < W*H; i++ {
		y, cb, cr := planes[0][i], planes[1][i]-128, planes[2][i]-128
		out[3*i] = y + 1.402*cr
		out[3*i+1] = y - 0.344136*cb - 0.714136*cr
		out[3*i+2] = y + 1.772*cb
	}
	for i, v := range out {
		out[i] = math.Max(0, math.Min(255, v))
	}
	return out
}

// jpgPixels returns the decoded samples, 1 or 3 per pixel.
func jpgPixels(t *testing.T, d []byte) ([]uint8, int, int) {
	t.Helper()
	img, err := jpgDecode(d)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix, b.Dx(), b.Dy()
	case *image.RGBA:
		p := make([]uint8, 0, 3*b.Dx()*b.Dy())
		for i := 0; i < len(m.Pix); i += 4 {
			p = append(p, m.Pix[i:i+3]...)
		}
		return p, b.Dx(), b.Dy()
	}
	t.Fatalf("unexpected image type %T", img)
	return nil, 0, 0
}

var jpgTestSizes = [][2]int{{1, 1}, {2, 3}, {7, 13}, {17, 33}, {33, 65}, {40, 9}}

func TestJPEGFloatReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, sz := range jpgTestSizes {
		for _, gray := range []bool{true, false} {
			for _, q := range []int{50, 95} {
				W, H := sz[0], sz[1]
				name := fmt.Sprintf("%dx%d_gray%v_q%d", W, H, gray, q)
				t.Run(name, func(t *testing.T) {
					d := jpgTestImage(t, rng, W, H, gray, q)
					got, gw, gh := jpgPixels(t, d)
					if gw != W || gh != H {
						t.Fatalf("size %dx%d, want %dx%d", gw, gh, W, H)
					}
					j, err := jpgParse(d)
					if err != nil {
						t.Fatal(err)
					}
					ref := jpgFloatRef(j)
					if len(ref) != len(got) {
						t.Fatalf("%d samples, reference %d", len(got), len(ref))
					}
					tol := 1.5
					if !gray {
						tol = 2.5
					}
					worst := 0.0
					for i := range ref {
						worst = math.Max(worst, math.Abs(float64(got[i])-ref[i]))
					}
					if worst > tol {
						t.Fatalf("max difference from the float64 reference %.2f > %.1f", worst, tol)
					}
					// Against Go's decoder (grayscale: its color path
					// replicates chroma instead of interpolating): the
					// same image up to IDCT rounding.
					if !gray {
						return
					}
					gimg, err := jpeg.Decode(bytes.NewReader(d))
					if err != nil {
						t.Fatal(err)
					}
					gworst := 0
					for y := 0; y < H; y++ {
						for x := 0; x < W; x++ {
							r, g, b := imgRGB(gimg.At(x, y))
							want := []uint8{r, g, b}
							if gray {
								want = want[:1]
							}
							for k, v := range want {
								dd := int(got[(y*W+x)*len(want)+k]) - int(v)
								gworst = max(gworst, dd, -dd)
							}
						}
					}
					t.Logf("max difference: float64 reference %.2f, image/jpeg %d", worst, gworst)
					if gworst > 1 {
						t.Fatalf("differs from image/jpeg by %d levels", gworst)
					}
				})
			}
		}
	}
}

// jpgBitWriter writes entropy-coded data with 0xFF byte stuffing.
type jpgBitWriter struct {
	out  []byte
	acc  uint32
	n    int
	code [2][4][256]uint32 // [class][table][symbol] = code<<8 | length
}

func (w *jpgBitWriter) put(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>uint(i))&1
		w.n++
		if w.n == 8 {
			w.out = append(w.out, byte(w.acc))
			if byte(w.acc) == 0xFF {
				w.out = append(w.out, 0)
			}
			w.acc, w.n = 0, 0
		}
	}
}

func (w *jpgBitWriter) flush() {
	for w.n != 0 {
		w.put(1, 1)
	}
}

func (w *jpgBitWriter) sym(class, tab, s int) {
	c := w.code[class][tab][s]
	if c&0xFF == 0 {
		panic(fmt.Sprintf("no Huffman code for symbol %#x", s))
	}
	w.put(c>>8, int(c&0xFF))
}

// value writes v's size category symbol (through sym) and its bits.
func (w *jpgBitWriter) value(v int, run int, class, tab int) {
	a := v
	if a < 0 {
		a = -a
	}
	s := 0
	for a>>uint(s) != 0 {
		s++
	}
	w.sym(class, tab, run<<4|s)
	if v < 0 {
		v += 1<<uint(s) - 1
	}
	w.put(uint32(v), s)
}

// jpgFlatTable is a Huffman table that codes every byte value (255 codes
// of 8 bits, one of 9), so that every symbol a progressive scan needs
// exists.
func jpgFlatTable() (counts [16]byte, vals []byte) {
	counts[7], counts[8] = 255, 1
	for i := 0; i < 256; i++ {
		vals = append(vals, byte(i))
	}
	return
}

func jpgCodes(counts [16]byte, vals []byte) (c [256]uint32) {
	code, k := uint32(0), 0
	for l := 1; l <= 16; l++ {
		for i := 0; i < int(counts[l-1]); i++ {
			c[vals[k]] = code<<8 | uint32(l)
			code++
			k++
		}
		code <<= 1
	}
	return
}

// jpgReencode writes the coefficients parsed into j as a new JPEG, baseline
// or progressive (DC and AC successive approximation, spectral bands, EOB
// runs), with restart interval ri (0: none). Decoding it must give exactly
// the pixels of the original.
func jpgReencode(j *jpgDec, progressive bool, ri int) []byte {
	var o []byte
	seg := func(m byte, p []byte) {
		o = append(o, 0xFF, m, byte((len(p)+2)>>8), byte(len(p)+2))
		o = append(o, p...)
	}
	o = append(o, 0xFF, 0xD8)
	for ci, c := range j.comps {
		p := []byte{byte(ci)}
		for k := 0; k < 64; k++ {
			p = append(p, byte(c.qt[jpgZigzag[k]]))
		}
		seg(0xDB, p)
	}
	sof := []byte{8, byte(j.H >> 8), byte(j.H), byte(j.W >> 8), byte(j.W), byte(len(j.comps))}
	for ci, c := range j.comps {
		sof = append(sof, byte(c.id), byte(c.h<<4|c.v), byte(ci))
	}
	m := byte(0xC0)
	if progressive {
		m = 0xC2
	}
	seg(m, sof)
	counts, vals := jpgFlatTable()
	w := &jpgBitWriter{}
	for class := 0; class < 2; class++ {
		p := append([]byte{byte(class << 4)}, counts[:]...)
		seg(0xC4, append(p, vals...))
		w.code[class][0] = jpgCodes(counts, vals)
	}
	if ri > 0 {
		seg(0xDD, []byte{byte(ri >> 8), byte(ri)})
	}
	type scanT struct {
		comps          []int
		ss, se, ah, al int
	}
	var scans []scanT
	all := make([]int, len(j.comps))
	for i := range all {
		all[i] = i
	}
	if !progressive {
		scans = []scanT{{all, 0, 63, 0, 0}}
	} else {
		scans = append(scans, scanT{all, 0, 0, 0, 1})
		for ci := range j.comps {
			scans = append(scans, scanT{[]int{ci}, 1, 5, 0, 2}, scanT{[]int{ci}, 6, 63, 0, 1})
		}
		scans = append(scans, scanT{all, 0, 0, 1, 0})
		for ci := range j.comps {
			scans = append(scans, scanT{[]int{ci}, 1, 5, 2, 1}, scanT{[]int{ci}, 1, 5, 1, 0}, scanT{[]int{ci}, 6, 63, 1, 0})
		}
	}
	abs := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	for _, sc := range scans {
		p := []byte{byte(len(sc.comps))}
		for _, ci := range sc.comps {
			p = append(p, byte(j.comps[ci].id), 0)
		}
		p = append(p, byte(sc.ss), byte(sc.se), byte(sc.ah<<4|sc.al))
		seg(0xDA, p)
		w.out = w.out[:0]
		preds := make([]int, len(j.comps))
		eobrun := 0
		flushEOB := func() {
			if eobrun == 0 {
				return
			}
			r := 0
			for eobrun>>uint(r+1) != 0 {
				r++
			}
			w.sym(1, 0, r<<4)
			w.put(uint32(eobrun-1<<uint(r)), r)
			eobrun = 0
		}
		block := func(ci int, b []int16) {
			if !progressive || sc.ss == 0 {
				if !progressive || sc.ah == 0 {
					v := int(b[0]) >> uint(sc.al)
					w.value(v-preds[ci], 0, 0, 0)
					preds[ci] = v
				} else {
					w.put(uint32(int(b[0])>>uint(sc.al))&1, 1)
				}
				if progressive {
					return
				}
			}
			lo, hi := sc.ss, sc.se
			if !progressive {
				lo = 1
			}
			if sc.ah == 0 {
				run := 0
				for k := lo; k <= hi; k++ {
					c := int(b[jpgZigzag[k]])
					v := abs(c) >> uint(sc.al)
					if v == 0 {
						run++
						continue
					}
					if c < 0 {
						v = -v
					}
					flushEOB()
					for run > 15 {
						w.sym(1, 0, 0xF0)
						run -= 16
					}
					w.value(v, run, 1, 0)
					run = 0
				}
				if run > 0 {
					if progressive {
						eobrun++
						if eobrun == 32767 {
							flushEOB()
						}
					} else {
						w.sym(1, 0, 0)
					}
				}
				return
			}
			// Refinement: events since the last symbol are zero-history
			// positions (-1) and correction bits (0/1) of earlier nonzero
			// coefficients.
			var ev []int
			zeros := 0
			endsAtNew := false
			for k := lo; k <= hi; k++ {
				c := abs(int(b[jpgZigzag[k]]))
				endsAtNew = false
				switch {
				case c>>uint(sc.al+1) != 0:
					ev = append(ev, (c>>uint(sc.al))&1)
				case c>>uint(sc.al) == 0:
					ev = append(ev, -1)
					zeros++
				default:
					for zeros >= 16 {
						w.sym(1, 0, 0xF0)
						n := 0
						for n < 16 {
							if ev[0] < 0 {
								n++
							} else {
								w.put(uint32(ev[0]), 1)
							}
							ev = ev[1:]
						}
						zeros -= 16
					}
					w.sym(1, 0, zeros<<4|1)
					sign := uint32(1)
					if b[jpgZigzag[k]] < 0 {
						sign = 0
					}
					w.put(sign, 1)
					for _, e := range ev {
						if e >= 0 {
							w.put(uint32(e), 1)
						}
					}
					ev, zeros = ev[:0], 0
					endsAtNew = true
				}
			}
			if !endsAtNew {
				w.sym(1, 0, 0)
				for _, e := range ev {
					if e >= 0 {
						w.put(uint32(e), 1)
					}
				}
			}
		}
		var mcus [][][2]int // per MCU: (component, block index) pairs
		if len(sc.comps) == 1 {
			c := &j.comps[sc.comps[0]]
			for by := 0; by < (c.ht+7)/8; by++ {
				for bx := 0; bx < (c.w+7)/8; bx++ {
					mcus = append(mcus, [][2]int{{sc.comps[0], by*c.bw + bx}})
				}
			}
		} else {
			for my := 0; my < j.mcuy; my++ {
				for mx := 0; mx < j.mcux; mx++ {
					var u [][2]int
					for _, ci := range sc.comps {
						c := &j.comps[ci]
						for v := 0; v < c.v; v++ {
							for h := 0; h < c.h; h++ {
								u = append(u, [2]int{ci, (my*c.v+v)*c.bw + mx*c.h + h})
							}
						}
					}
					mcus = append(mcus, u)
				}
			}
		}
		for mi, u := range mcus {
			if ri > 0 && mi > 0 && mi%ri == 0 {
				flushEOB()
				w.flush()
				w.out = append(w.out, 0xFF, byte(0xD0+(mi/ri-1)%8))
				for i := range preds {
					preds[i] = 0
				}
			}
			for _, bl := range u {
				block(bl[0], j.comps[bl[0]].coef[bl[1]*64:][:64])
			}
		}
		flushEOB()
		w.flush()
		o = append(o, w.out...)
	}
	return append(o, 0xFF, 0xD9)
}

func TestJPEGProgressiveAndRestart(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, sz := range jpgTestSizes {
		for _, gray := range []bool{true, false} {
			W, H := sz[0], sz[1]
			d := jpgTestImage(t, rng, W, H, gray, 90)
			want, _, _ := jpgPixels(t, d)
			j, err := jpgParse(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, prog := range []bool{false, true} {
				for _, ri := range []int{0, 1, 3} {
					t.Run(fmt.Sprintf("%dx%d_gray%v_prog%v_ri%d", W, H, gray, prog, ri), func(t *testing.T) {
						e := jpgReencode(j, prog, ri)
						got, _, _ := jpgPixels(t, e)
						if !bytes.Equal(got, want) {
							t.Fatalf("re-encoded stream decodes differently")
						}
					})
				}
			}
		}
	}
}

// jpgNoPanic decodes d and reports a panic as a test failure.
func jpgNoPanic(t *testing.T, d []byte) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic on %d bytes: %v", len(d), r)
		}
	}()
	_, err = jpgDecode(d)
	return err
}

func TestJPEGCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var streams [][]byte
	for _, gray := range []bool{true, false} {
		d := jpgTestImage(t, rng, 17, 33, gray, 80)
		j, err := jpgParse(d)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, d, jpgReencode(j, true, 0), jpgReencode(j, false, 2), jpgReencode(j, true, 3))
	}
	for si, d := range streams {
		// Every proper prefix is truncated: an error, never a panic.
		for n := 0; n < len(d); n++ {
			if err := jpgNoPanic(t, d[:n]); err == nil {
				t.Fatalf("stream %d: prefix of %d of %d bytes decoded without error", si, n, len(d))
			}
		}
		// Random changes to the bytes after the headers: no panic.
		sos := bytes.Index(d, []byte{0xFF, 0xDA})
		for trial := 0; trial < 300; trial++ {
			e := append([]byte(nil), d...)
			for k := 0; k < 1+rng.Intn(8); k++ {
				e[sos+rng.Intn(len(e)-sos)] = byte(rng.Intn(256))
			}
			jpgNoPanic(t, e)
		}
	}
	for trial := 0; trial < 2000; trial++ {
		e := make([]byte, rng.Intn(300))
		rng.Read(e)
		if len(e) >= 2 && trial%2 == 0 {
			e[0], e[1] = 0xFF, 0xD8
		}
		jpgNoPanic(t, e)
	}
	for _, c := range []struct{ name, data string }{
		{"arithmetic", "\xff\xd8\xff\xc9\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00\xff\xd9"},
		{"lossless", "\xff\xd8\xff\xc3\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00\xff\xd9"},
		{"CMYK", "\xff\xd8\xff\xc0\x00\x14\x08\x00\x01\x00\x01\x04\x01\x11\x00\x02\x11\x00\x03\x11\x00\x04\x11\x00\xff\xd9"},
		{"12-bit", "\xff\xd8\xff\xc0\x00\x0b\x0c\x00\x01\x00\x01\x01\x01\x11\x00\xff\xd9"},
	} {
		if err := jpgNoPanic(t, []byte(c.data)); err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// TestJPEGConformanceInput decodes the ONNX 1.22 ImageDecoder test JPEG
// (expected pixels from libjpeg-turbo through Pillow) when the suite is
// present, comparing exactly.
func TestJPEGConformanceInput(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "onnx-tests-1.22", "node")
	for _, c := range []struct{ test, format string }{
		{"test_image_decoder_decode_jpeg_rgb", "RGB"},
		{"test_image_decoder_decode_jpeg_bgr", "BGR"},
		{"test_image_decoder_decode_jpeg_grayscale", "Grayscale"},
	} {
		in, err1 := os.ReadFile(filepath.Join(dir, c.test, "test_data_set_0", "input_0.pb"))
		out, err2 := os.ReadFile(filepath.Join(dir, c.test, "test_data_set_0", "output_0.pb"))
		if err1 != nil || err2 != nil {
			t.Skip("ONNX 1.22 suite not found")
		}
		// The raw tensor bytes are the tails of the protobufs: the JPEG
		// runs from SOI to the end, the pixels are the last H*W*C bytes.
		jp := in[bytes.Index(in, []byte{0xFF, 0xD8, 0xFF}):]
		y := imgDecodeRun(t, jp, c.format)
		want := out[len(out)-len(y.U8()):]
		if !bytes.Equal(y.U8(), want) {
			t.Errorf("%s: decoded pixels differ from the expected ones", c.test)
		}
	}
}

// TestJPEGAgainstDjpeg compares the decoder with libjpeg-turbo's djpeg
// (default settings: what Pillow decodes) on files cjpeg makes with many
// sampling factors, progressive and restart options. It runs only where
// cjpeg and djpeg are installed (Debian: libjpeg-turbo-progs); the
// fixtures in testdata/jpeg keep a few of these cases for everyone.
func TestJPEGAgainstDjpeg(t *testing.T) {
	if _, err := exec.LookPath("cjpeg"); err != nil {
		t.Skip("cjpeg/djpeg not installed")
	}
	if _, err := exec.LookPath("djpeg"); err != nil {
		t.Skip("cjpeg/djpeg not installed")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(13))
	opts := [][]string{
		{}, {"-progressive"}, {"-sample", "1x1"}, {"-sample", "2x1"}, {"-sample", "1x2"},
		{"-sample", "2x2", "-progressive", "-restart", "1"}, {"-sample", "4x1"}, {"-sample", "1x4"},
		{"-sample", "4x2"}, {"-sample", "3x1"}, {"-sample", "2x2,1x2,2x1"}, {"-sample", "1x1,2x2,1x1"},
		{"-restart", "2B"}, {"-restart", "1", "-optimize"}, {"-grayscale"}, {"-grayscale", "-progressive"},
		{"-rgb"}, {"-rgb", "-progressive"}, {"-quality", "100"}, {"-quality", "5"},
		{"-progressive", "-quality", "98", "-restart", "3B"},
	}
	sizes := [][2]int{{1, 1}, {2, 2}, {3, 5}, {7, 13}, {17, 33}, {33, 65}, {64, 48}, {9, 40}}
	cases := 0
	defer func() { t.Logf("%d files compared with djpeg", cases) }()
	for _, sz := range sizes {
		W, H := sz[0], sz[1]
		var ppm bytes.Buffer
		fmt.Fprintf(&ppm, "P6\n%d %d\n255\n", W, H)
		fx, fy := rng.Float64(), rng.Float64()
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				for ch := 0; ch < 3; ch++ {
					v := 128 + 110*math.Sin(fx*float64(x)+2*float64(ch))*math.Cos(fy*float64(y+ch)) + float64(rng.Intn(50)-25)
					if (x/3+y/4)%5 == 0 {
						v = float64(rng.Intn(256))
					}
					ppm.WriteByte(uint8(math.Max(0, math.Min(255, v))))
				}
			}
		}
		src := filepath.Join(dir, "in.ppm")
		if err := os.WriteFile(src, ppm.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			name := fmt.Sprintf("%dx%d_%v", W, H, o)
			jp, err := exec.Command("cjpeg", append(o, src)...).Output()
			if err != nil {
				t.Fatalf("%s: cjpeg: %v", name, err)
			}
			f := filepath.Join(dir, "x.jpg")
			if err := os.WriteFile(f, jp, 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := exec.Command("djpeg", "-pnm", f).Output()
			if err != nil {
				t.Fatalf("%s: djpeg: %v", name, err)
			}
			got, gw, gh := jpgPixels(t, jp)
			cases++
			if gw != W || gh != H || len(want) < len(got) {
				t.Fatalf("%s: size %dx%d", name, gw, gh)
			}
			if fixtures := os.Getenv("CUVIL_WRITE_JPEG_FIXTURES"); fixtures != "" && W == 17 {
				base := fmt.Sprintf("%dx%d_%s", W, H, strings.Join(strings.Fields(strings.ReplaceAll(fmt.Sprint(o), "-", "")), "_"))
				base = strings.NewReplacer("[", "", "]", "", ",", "-").Replace(base)
				if len(o) == 0 {
					base += "default"
				}
				os.MkdirAll(fixtures, 0o755)
				os.WriteFile(filepath.Join(fixtures, base+".jpg"), jp, 0o644)
				os.WriteFile(filepath.Join(fixtures, base+".pnm"), want, 0o644)
			}
			exp := want[len(want)-len(got):]
			if !bytes.Equal(got, exp) {
				worst, at := 0, 0
				for i := range got {
					if d := int(got[i]) - int(exp[i]); d > worst || -d > worst {
						worst, at = max(d, -d), i
					}
				}
				t.Errorf("%s: differs from djpeg by up to %d (sample %d)", name, worst, at)
			}
		}
	}
}

// TestJPEGFixtures decodes the files in testdata/jpeg (made by cjpeg, see
// TestJPEGAgainstDjpeg) and compares with djpeg's output exactly.
func TestJPEGFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "jpeg", "*.jpg"))
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata/jpeg")
	}
	for _, f := range files {
		jp, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, ".jpg") + ".pnm")
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := jpgPixels(t, jp)
		if len(want) < len(got) || !bytes.Equal(got, want[len(want)-len(got):]) {
			t.Errorf("%s: differs from djpeg's output", f)
		}
	}
}
