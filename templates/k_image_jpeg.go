package templates

import (
	"image"
	"strconv"
)

// JPEG decoding (ITU T.81) that reproduces libjpeg-turbo's default
// decompression (what Pillow, and so ONNX's reference ImageDecoder, uses)
// bit for bit: the accurate integer IDCT (ISLOW: 13-bit constants, 2 extra
// bits between the passes, its range limit), "fancy" triangle upsampling of
// subsampled components with libjpeg-turbo's ordered rounding biases, and
// the 16-bit fixed-point YCbCr to RGB conversion. Go's image/jpeg uses a
// different IDCT and upsampling, which differs by up to tens of levels.
//
// Supported: baseline, extended sequential (Huffman, 8-bit) and progressive
// (Huffman) frames, restart intervals, any integral sampling factors, one
// (grayscale) or three (YCbCr, or RGB per an Adobe marker or R/G/B ids)
// components. Lossless, hierarchical, arithmetic-coded, 12-bit and
// four-component (CMYK/YCCK) JPEGs give an error naming the feature. A
// truncated or corrupt stream gives an error, never a panic.

// jpgZigzag maps the zigzag index to the natural (row-major) coefficient
// index; the 16 extra entries keep a corrupt run length that overshoots
// position 63 inside the block (libjpeg does the same).
var jpgZigzag = [80]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
	63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
}

type jpgHuff struct {
	ok      bool
	maxcode [18]int32 // largest code of each length, -1 if none (maxcode[17] sentinel)
	valoff  [17]int32 // index into vals of the first code of each length, minus that code
	vals    [256]uint8
}

type jpgComp struct {
	id, h, v, tq int
	w, ht        int     // samples per line and lines (downsampled size)
	bw, bh       int     // allocated blocks per line / column (a whole number of MCUs)
	coef         []int16 // bw*bh blocks of 64 natural-order coefficients
	qt           *[64]int32
	dc, ac       int // Huffman table selectors of the current scan
	pred         int32
}

type jpgDec struct {
	d              []byte
	p              int
	W, H           int
	progressive    bool
	comps          []jpgComp
	hmax, vmax     int
	mcux, mcuy     int
	qt             [4][64]int32
	qtOK           [4]bool
	dcT, acT       [4]jpgHuff
	ri             int
	jfif, adobe    bool
	adobeTransform int
	frame          bool
	eobrun         int
	// entropy-coded segment reader
	acc    uint64
	nbits  int
	fake   int // trailing zero bits in acc that are not data
	marker bool
	eof    bool
}

type jpgErr string

func (e jpgErr) Error() string { return "JPEG: " + string(e) }

// jpgDecode decodes a JPEG stream to *image.Gray or *image.RGBA.
func jpgDecode(d []byte) (image.Image, error) {
	j, err := jpgParse(d)
	if err != nil {
		return nil, err
	}
	return j.finish()
}

// jpgParse reads the markers and entropy-coded scans up to EOI, leaving
// the quantized coefficients in j.comps.
func jpgParse(d []byte) (*jpgDec, error) {
	j := &jpgDec{d: d}
	if len(d) < 2 || d[0] != 0xFF || d[1] != 0xD8 {
		return nil, jpgErr("missing SOI marker")
	}
	j.p = 2
	for {
		m, err := j.nextMarker()
		if err != nil {
			return nil, err
		}
		switch {
		case m == 0xD9: // EOI
			if !j.frame {
				return nil, jpgErr("no image (EOI before a frame)")
			}
			return j, nil
		case m == 0xC0 || m == 0xC1 || m == 0xC2:
			if err := j.readSOF(m == 0xC2); err != nil {
				return nil, err
			}
		case m == 0xC3 || m == 0xC7 || m == 0xCB || m == 0xCF:
			return nil, jpgErr("lossless JPEG is not supported")
		case m == 0xC5 || m == 0xC6 || m == 0xCD || m == 0xCE:
			return nil, jpgErr("hierarchical JPEG is not supported")
		case m == 0xC9 || m == 0xCA || m == 0xCC:
			return nil, jpgErr("arithmetic-coded JPEG is not supported")
		case m == 0xC4:
			if err := j.readDHT(); err != nil {
				return nil, err
			}
		case m == 0xDB:
			if err := j.readDQT(); err != nil {
				return nil, err
			}
		case m == 0xDD:
			seg, err := j.segment()
			if err != nil {
				return nil, err
			}
			if len(seg) != 2 {
				return nil, jpgErr("bad DRI segment")
			}
			j.ri = int(seg[0])<<8 | int(seg[1])
		case m == 0xDA:
			if err := j.readSOS(); err != nil {
				return nil, err
			}
		case m == 0xDC:
			return nil, jpgErr("DNL marker (height defined after the scan) is not supported")
		case m >= 0xD0 && m <= 0xD7:
			// A stray restart marker outside a scan: libjpeg ignores it.
		case m == 0xE0:
			seg, err := j.segment()
			if err != nil {
				return nil, err
			}
			if len(seg) >= 5 && string(seg[:5]) == "JFIF\x00" {
				j.jfif = true
			}
		case m == 0xEE:
			seg, err := j.segment()
			if err != nil {
				return nil, err
			}
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				j.adobe = true
				j.adobeTransform = int(seg[11])
			}
		case m == 0x01 || m >= 0xE1 || m == 0xFE || (m >= 0xF0 && m <= 0xFD):
			if m == 0x01 {
				continue // TEM: no length
			}
			if _, err := j.segment(); err != nil {
				return nil, err
			}
		case m == 0xD8:
			return nil, jpgErr("unexpected second SOI marker")
		default:
			return nil, jpgErr("unknown marker 0x" + strconv.FormatInt(int64(m), 16))
		}
	}
}

// nextMarker skips to the next marker (libjpeg skips garbage bytes before
// one too) and returns its code.
func (j *jpgDec) nextMarker() (int, error) {
	for {
		for j.p < len(j.d) && j.d[j.p] != 0xFF {
			j.p++
		}
		for j.p < len(j.d) && j.d[j.p] == 0xFF {
			j.p++
		}
		if j.p >= len(j.d) {
			return 0, jpgErr("truncated stream (no EOI marker)")
		}
		m := int(j.d[j.p])
		j.p++
		if m != 0 {
			return m, nil
		}
	}
}

// segment returns the payload of the marker segment at j.p.
func (j *jpgDec) segment() ([]byte, error) {
	if j.p+2 > len(j.d) {
		return nil, jpgErr("truncated marker segment")
	}
	n := int(j.d[j.p])<<8 | int(j.d[j.p+1])
	if n < 2 || j.p+n > len(j.d) {
		return nil, jpgErr("truncated marker segment")
	}
	s := j.d[j.p+2 : j.p+n]
	j.p += n
	return s, nil
}

func (j *jpgDec) readDQT() error {
	s, err := j.segment()
	if err != nil {
		return err
	}
	for len(s) > 0 {
		pq, tq := int(s[0]>>4), int(s[0]&15)
		if tq > 3 || pq > 1 {
			return jpgErr("bad DQT segment")
		}
		n := 64 << pq
		if len(s) < 1+n {
			return jpgErr("truncated DQT segment")
		}
		for k := 0; k < 64; k++ {
			var q int32
			if pq == 0 {
				q = int32(s[1+k])
			} else {
				q = int32(s[1+2*k])<<8 | int32(s[2+2*k])
			}
			j.qt[tq][jpgZigzag[k]] = q
		}
		j.qtOK[tq] = true
		s = s[1+n:]
	}
	return nil
}

func (j *jpgDec) readDHT() error {
	s, err := j.segment()
	if err != nil {
		return err
	}
	for len(s) > 0 {
		if len(s) < 17 {
			return jpgErr("truncated DHT segment")
		}
		tc, th := int(s[0]>>4), int(s[0]&15)
		if tc > 1 || th > 3 {
			return jpgErr("bad DHT segment")
		}
		t := &j.dcT[th]
		if tc == 1 {
			t = &j.acT[th]
		}
		total := 0
		for l := 1; l <= 16; l++ {
			total += int(s[l])
		}
		if total > 256 || len(s) < 17+total {
			return jpgErr("bad DHT segment")
		}
		*t = jpgHuff{ok: true}
		copy(t.vals[:], s[17:17+total])
		code, k := int32(0), int32(0)
		for l := 1; l <= 16; l++ {
			n := int32(s[l])
			if n == 0 {
				t.maxcode[l] = -1
			} else {
				t.valoff[l] = k - code
				code += n
				k += n
				t.maxcode[l] = code - 1
				if code > 1<<uint(l) {
					return jpgErr("bad Huffman table (code lengths overflow)")
				}
			}
			code <<= 1
		}
		t.maxcode[17] = 1 << 30
		s = s[17+total:]
	}
	return nil
}

func (j *jpgDec) readSOF(progressive bool) error {
	if j.frame {
		return jpgErr("more than one frame")
	}
	s, err := j.segment()
	if err != nil {
		return err
	}
	if len(s) < 6 {
		return jpgErr("truncated SOF segment")
	}
	if s[0] != 8 {
		return jpgErr(strconv.Itoa(int(s[0])) + "-bit samples are not supported (only 8-bit)")
	}
	j.H = int(s[1])<<8 | int(s[2])
	j.W = int(s[3])<<8 | int(s[4])
	nc := int(s[5])
	if j.H == 0 {
		return jpgErr("image height 0 (DNL) is not supported")
	}
	if j.W == 0 {
		return jpgErr("image width is 0")
	}
	if nc == 4 {
		return jpgErr("four-component (CMYK/YCCK) JPEG is not supported")
	}
	if nc != 1 && nc != 3 {
		return jpgErr(strconv.Itoa(nc) + "-component JPEG is not supported (only 1 or 3)")
	}
	if len(s) < 6+3*nc {
		return jpgErr("truncated SOF segment")
	}
	if j.W*j.H > 2*89478485 {
		// Pillow refuses images this large too (DecompressionBombError).
		return jpgErr("image too large (" + strconv.Itoa(j.W) + "x" + strconv.Itoa(j.H) + " pixels)")
	}
	j.progressive = progressive
	j.comps = make([]jpgComp, nc)
	j.hmax, j.vmax = 1, 1
	for i := range j.comps {
		c := &j.comps[i]
		c.id = int(s[6+3*i])
		c.h, c.v = int(s[7+3*i]>>4), int(s[7+3*i]&15)
		c.tq = int(s[8+3*i])
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return jpgErr("bad component parameters in SOF")
		}
		for k := 0; k < i; k++ {
			if j.comps[k].id == c.id {
				return jpgErr("duplicate component id")
			}
		}
		if c.h > j.hmax {
			j.hmax = c.h
		}
		if c.v > j.vmax {
			j.vmax = c.v
		}
	}
	if nc == 1 {
		// A one-component scan is non-interleaved: its sampling factors
		// do not matter.
		j.comps[0].h, j.comps[0].v = 1, 1
		j.hmax, j.vmax = 1, 1
	}
	j.mcux = (j.W + 8*j.hmax - 1) / (8 * j.hmax)
	j.mcuy = (j.H + 8*j.vmax - 1) / (8 * j.vmax)
	for i := range j.comps {
		c := &j.comps[i]
		c.w = (j.W*c.h + j.hmax - 1) / j.hmax
		c.ht = (j.H*c.v + j.vmax - 1) / j.vmax
		c.bw, c.bh = j.mcux*c.h, j.mcuy*c.v
		c.coef = make([]int16, c.bw*c.bh*64)
	}
	j.frame = true
	return nil
}

func (j *jpgDec) readSOS() error {
	if !j.frame {
		return jpgErr("SOS before SOF")
	}
	s, err := j.segment()
	if err != nil {
		return err
	}
	if len(s) < 1 {
		return jpgErr("truncated SOS segment")
	}
	ns := int(s[0])
	if ns < 1 || ns > len(j.comps) || len(s) != 4+2*ns {
		return jpgErr("bad SOS segment")
	}
	scan := make([]*jpgComp, ns)
	for i := 0; i < ns; i++ {
		id := int(s[1+2*i])
		var c *jpgComp
		for k := range j.comps {
			if j.comps[k].id == id {
				c = &j.comps[k]
			}
		}
		if c == nil {
			return jpgErr("scan names an unknown component")
		}
		for k := 0; k < i; k++ {
			if scan[k] == c {
				return jpgErr("scan names a component twice")
			}
		}
		c.dc, c.ac = int(s[2+2*i]>>4), int(s[2+2*i]&15)
		if c.dc > 3 || c.ac > 3 {
			return jpgErr("bad Huffman table selector")
		}
		if c.qt == nil {
			// libjpeg latches a component's table at its first scan.
			if !j.qtOK[c.tq] {
				return jpgErr("missing quantization table")
			}
			q := j.qt[c.tq]
			c.qt = &q
		}
		scan[i] = c
	}
	ss, se := int(s[1+2*ns]), int(s[2+2*ns])
	ah, al := int(s[3+2*ns]>>4), int(s[3+2*ns]&15)
	if j.progressive {
		if ss > se || se > 63 || (ss == 0 && se != 0) || (ss > 0 && ns != 1) || ah > 13 || al > 13 {
			return jpgErr("bad progressive scan parameters")
		}
	} else if ss != 0 || se != 63 || ah != 0 || al != 0 {
		// libjpeg only warns here; the values carry no meaning.
		ss, se, ah, al = 0, 63, 0, 0
	}
	for _, c := range scan {
		needDC := !j.progressive || (ss == 0 && ah == 0)
		needAC := !j.progressive || ss > 0
		if needDC && !j.dcT[c.dc].ok || needAC && !j.acT[c.ac].ok {
			return jpgErr("missing Huffman table")
		}
		c.pred = 0
	}
	return j.decodeScan(scan, ss, se, ah, al)
}

// Bit reader over the entropy-coded segment. At a marker or the end of the
// data it supplies zero bits (as libjpeg does); bits consumed past the end
// of the data are an error (truncated stream).
func (j *jpgDec) fill() {
	for j.nbits <= 56 {
		var b byte
		switch {
		case j.marker || j.eof:
			j.fake += 8
		case j.p >= len(j.d):
			j.eof = true
			j.fake += 8
		case j.d[j.p] == 0xFF:
			if j.p+1 >= len(j.d) {
				j.eof = true
				j.fake += 8
			} else if j.d[j.p+1] == 0 {
				b = 0xFF
				j.p += 2
			} else {
				j.marker = true
				j.fake += 8
			}
		default:
			b = j.d[j.p]
			j.p++
		}
		j.acc = j.acc<<8 | uint64(b)
		j.nbits += 8
	}
}

func (j *jpgDec) used(n int) error {
	j.nbits -= n
	if j.nbits < j.fake {
		j.fake = j.nbits
		if j.eof {
			return jpgErr("truncated entropy-coded data")
		}
	}
	return nil
}

func (j *jpgDec) bits(n int) (int32, error) {
	if n == 0 {
		return 0, nil
	}
	if j.nbits < n {
		j.fill()
	}
	v := int32(j.acc>>uint(j.nbits-n)) & (1<<uint(n) - 1)
	return v, j.used(n)
}

// receive reads n bits and extends them to a signed value (T.81 F.2.2.1).
func (j *jpgDec) receive(n int) (int32, error) {
	if n > 16 {
		return 0, jpgErr("bad coefficient size")
	}
	v, err := j.bits(n)
	if n > 0 && v < 1<<uint(n-1) {
		v += -1<<uint(n) + 1
	}
	return v, err
}

func (j *jpgDec) huff(t *jpgHuff) (int, error) {
	if j.nbits < 16 {
		j.fill()
	}
	p := int32(j.acc>>uint(j.nbits-16)) & 0xFFFF
	for l := 1; l <= 16; l++ {
		code := p >> uint(16-l)
		if code <= t.maxcode[l] {
			idx := t.valoff[l] + code
			if idx < 0 || idx > 255 {
				return 0, jpgErr("bad Huffman code")
			}
			return int(t.vals[idx]), j.used(l)
		}
	}
	return 0, jpgErr("bad Huffman code")
}

func (j *jpgDec) resetBits() {
	j.acc, j.nbits, j.fake, j.marker = 0, 0, 0, false
}

func (j *jpgDec) decodeScan(scan []*jpgComp, ss, se, ah, al int) error {
	j.resetBits()
	j.eof = false
	j.eobrun = 0
	var mx, my int
	if len(scan) == 1 {
		c := scan[0]
		mx, my = (c.w+7)/8, (c.ht+7)/8
	} else {
		mx, my = j.mcux, j.mcuy
	}
	total := mx * my
	rst := 0
	for m := 0; m < total; m++ {
		if j.ri > 0 && m > 0 && m%j.ri == 0 {
			if err := j.restart(rst); err != nil {
				return err
			}
			rst = (rst + 1) & 7
			for _, c := range scan {
				c.pred = 0
			}
			j.eobrun = 0
		}
		bx, by := m%mx, m/mx
		if len(scan) == 1 {
			c := scan[0]
			if err := j.block(c, c.coef[(by*c.bw+bx)*64:][:64], ss, se, ah, al); err != nil {
				return err
			}
			continue
		}
		for _, c := range scan {
			for v := 0; v < c.v; v++ {
				for h := 0; h < c.h; h++ {
					b := (by*c.v+v)*c.bw + bx*c.h + h
					if err := j.block(c, c.coef[b*64:][:64], ss, se, ah, al); err != nil {
						return err
					}
				}
			}
		}
	}
	// Leave j.p at the byte after the scan's data: nextMarker finds the
	// following marker.
	j.resetBits()
	return nil
}

func (j *jpgDec) restart(n int) error {
	j.resetBits()
	m, err := j.nextMarker()
	if err != nil {
		return err
	}
	if m != 0xD0+n {
		return jpgErr("missing or out-of-order restart marker")
	}
	j.eof = false
	return nil
}

func (j *jpgDec) block(c *jpgComp, b []int16, ss, se, ah, al int) error {
	if !j.progressive {
		s, err := j.huff(&j.dcT[c.dc])
		if err != nil {
			return err
		}
		d, err := j.receive(s)
		if err != nil {
			return err
		}
		c.pred += d
		b[0] = int16(c.pred)
		t := &j.acT[c.ac]
		for k := 1; k < 64; k++ {
			rs, err := j.huff(t)
			if err != nil {
				return err
			}
			r, s := rs>>4, rs&15
			if s == 0 {
				if r != 15 {
					break
				}
				k += 15
				continue
			}
			k += r
			v, err := j.receive(s)
			if err != nil {
				return err
			}
			b[jpgZigzag[k]] = int16(v)
		}
		return nil
	}
	if ss == 0 { // DC scan
		if ah == 0 {
			s, err := j.huff(&j.dcT[c.dc])
			if err != nil {
				return err
			}
			d, err := j.receive(s)
			if err != nil {
				return err
			}
			c.pred += d
			b[0] = int16(c.pred << uint(al))
			return nil
		}
		bit, err := j.bits(1)
		if bit != 0 {
			b[0] |= int16(1 << uint(al))
		}
		return err
	}
	t := &j.acT[c.ac]
	if ah == 0 { // AC first pass
		if j.eobrun > 0 {
			j.eobrun--
			return nil
		}
		for k := ss; k <= se; k++ {
			rs, err := j.huff(t)
			if err != nil {
				return err
			}
			r, s := rs>>4, rs&15
			if s == 0 {
				if r == 15 {
					k += 15
					continue
				}
				run := int32(1) << uint(r)
				if r > 0 {
					e, err := j.bits(r)
					if err != nil {
						return err
					}
					run += e
				}
				j.eobrun = int(run) - 1
				break
			}
			k += r
			v, err := j.receive(s)
			if err != nil {
				return err
			}
			b[jpgZigzag[k]] = int16(v << uint(al))
		}
		return nil
	}
	// AC refinement (T.81 G.1.2.3).
	p1, m1 := int16(1)<<uint(al), int16(-1)<<uint(al)
	refine := func(x *int16) error {
		bit, err := j.bits(1)
		if bit != 0 && *x&p1 == 0 {
			if *x >= 0 {
				*x += p1
			} else {
				*x += m1
			}
		}
		return err
	}
	k := ss
	if j.eobrun == 0 {
		for ; k <= se; k++ {
			rs, err := j.huff(t)
			if err != nil {
				return err
			}
			r, s := rs>>4, rs&15
			var nv int16
			if s != 0 {
				// s should be 1; libjpeg treats any other size as 1.
				bit, err := j.bits(1)
				if err != nil {
					return err
				}
				if bit != 0 {
					nv = p1
				} else {
					nv = m1
				}
			} else if r != 15 {
				run := int32(1) << uint(r)
				if r > 0 {
					e, err := j.bits(r)
					if err != nil {
						return err
					}
					run += e
				}
				j.eobrun = int(run)
				break
			}
			// Skip r zero coefficients (refining the nonzero ones met on
			// the way), then place the new one.
			for ; k <= se; k++ {
				x := &b[jpgZigzag[k]]
				if *x != 0 {
					if err := refine(x); err != nil {
						return err
					}
				} else {
					if r == 0 {
						break
					}
					r--
				}
			}
			if nv != 0 {
				b[jpgZigzag[k]] = nv
			}
		}
	}
	if j.eobrun > 0 {
		for ; k <= se; k++ {
			x := &b[jpgZigzag[k]]
			if *x != 0 {
				if err := refine(x); err != nil {
					return err
				}
			}
		}
		j.eobrun--
	}
	return nil
}

// jpgIDCT is libjpeg's accurate integer inverse DCT (jidctint.c, the
// Loeffler-Ligtenberg-Moschytz algorithm with 13-bit constants) of one
// dequantized block, written to out with the given stride.
func jpgIDCT(in []int16, q *[64]int32, out []uint8, stride int) {
	const (
		cb    = 13 // CONST_BITS
		p1b   = 2  // PASS1_BITS
		f0298 = 2446
		f0390 = 3196
		f0541 = 4433
		f0765 = 6270
		f0899 = 7373
		f1175 = 9633
		f1501 = 12299
		f1847 = 15137
		f1961 = 16069
		f2053 = 16819
		f2562 = 20995
		f3072 = 25172
	)
	var ws [64]int32
	// One 1-D pass: the even part from s0, s2, s4, s6, the odd part from
	// s1, s3, s5, s7; returns the eight outputs before descaling.
	kern := func(s0, s1, s2, s3, s4, s5, s6, s7 int64) (o [8]int64) {
		z1 := (s2 + s6) * f0541
		t2 := z1 - s6*f1847
		t3 := z1 + s2*f0765
		t0 := (s0 + s4) << cb
		t1 := (s0 - s4) << cb
		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		a3, a2, a1, a0 := s1, s3, s5, s7
		z4 := a1 + a3
		z3 := a0 + a2
		z2 := a1 + a2
		zz1 := a0 + a3
		z5 := (z3 + z4) * f1175
		a3 *= f1501
		a2 *= f3072
		a1 *= f2053
		a0 *= f0298
		z4 = z4*-f0390 + z5
		z3 = z3*-f1961 + z5
		zz1 *= -f0899
		z2 *= -f2562
		a3 += zz1 + z4
		a2 += z2 + z3
		a1 += z2 + z4
		a0 += zz1 + z3
		o[0], o[7] = t10+a3, t10-a3
		o[1], o[6] = t11+a2, t11-a2
		o[2], o[5] = t12+a1, t12-a1
		o[3], o[4] = t13+a0, t13-a0
		return
	}
	for c := 0; c < 8; c++ {
		dq := func(r int) int64 { return int64(in[r*8+c]) * int64(q[r*8+c]) }
		if in[8+c] == 0 && in[16+c] == 0 && in[24+c] == 0 && in[32+c] == 0 &&
			in[40+c] == 0 && in[48+c] == 0 && in[56+c] == 0 {
			dc := int32(dq(0) << p1b)
			for r := 0; r < 8; r++ {
				ws[r*8+c] = dc
			}
			continue
		}
		o := kern(dq(0), dq(1), dq(2), dq(3), dq(4), dq(5), dq(6), dq(7))
		const sh = cb - p1b
		for r := 0; r < 8; r++ {
			ws[r*8+c] = int32((o[r] + 1<<(sh-1)) >> sh)
		}
	}
	for r := 0; r < 8; r++ {
		w := ws[r*8 : r*8+8]
		row := out[r*stride : r*stride+8]
		if w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0 && w[6] == 0 && w[7] == 0 {
			v := jpgRange((int64(w[0]) + 1<<(p1b+2)) >> (p1b + 3))
			for i := range row {
				row[i] = v
			}
			continue
		}
		o := kern(int64(w[0]), int64(w[1]), int64(w[2]), int64(w[3]), int64(w[4]), int64(w[5]), int64(w[6]), int64(w[7]))
		const sh = cb + p1b + 3
		for i := 0; i < 8; i++ {
			row[i] = jpgRange((o[i] + 1<<(sh-1)) >> sh)
		}
	}
}

// jpgRange is libjpeg's post-IDCT range limit: the output (before the +128
// level shift) is taken modulo 1024, values in [-512, 511] are shifted and
// clamped to [0, 255].
func jpgRange(v int64) uint8 {
	x := int(v & 1023)
	if x >= 512 {
		x -= 1024
	}
	x += 128
	if x < 0 {
		return 0
	}
	if x > 255 {
		return 255
	}
	return uint8(x)
}

// finish runs the IDCT, upsampling and color conversion.
func (j *jpgDec) finish() (image.Image, error) {
	W, H := j.W, j.H
	planes := make([][]uint8, len(j.comps))
	for i := range j.comps {
		c := &j.comps[i]
		if c.qt == nil {
			return nil, jpgErr("a component has no scan")
		}
		stride := c.bw * 8
		pl := make([]uint8, stride*c.bh*8)
		for by := 0; by < (c.ht+7)/8; by++ {
			for bx := 0; bx < (c.w+7)/8; bx++ {
				b := by*c.bw + bx
				jpgIDCT(c.coef[b*64:b*64+64], c.qt, pl[by*8*stride+bx*8:], stride)
			}
		}
		up, err := j.upsample(c, pl, stride)
		if err != nil {
			return nil, err
		}
		planes[i] = up
	}
	if len(j.comps) == 1 {
		g := image.NewGray(image.Rect(0, 0, W, H))
		copy(g.Pix, planes[0])
		return g, nil
	}
	rgb := j.adobe && j.adobeTransform == 0
	if !j.jfif && !j.adobe {
		rgb = j.comps[0].id == 'R' && j.comps[1].id == 'G' && j.comps[2].id == 'B'
	}
	if j.jfif {
		rgb = false
	}
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	Y, Cb, Cr := planes[0], planes[1], planes[2]
	for i := 0; i < W*H; i++ {
		o := img.Pix[4*i : 4*i+4]
		if rgb {
			o[0], o[1], o[2] = Y[i], Cb[i], Cr[i]
		} else {
			o[0], o[1], o[2] = jpgYCC(Y[i], Cb[i], Cr[i])
		}
		o[3] = 255
	}
	return img, nil
}

// jpgYCC is libjpeg's YCbCr to RGB conversion (jdcolor.c): 16-bit fixed
// point, R and B rounded per term, G from the rounded sum of both terms.
func jpgYCC(y, cb, cr uint8) (uint8, uint8, uint8) {
	const (
		half = 1 << 15
		fR   = 91881  // FIX(1.40200)
		fB   = 116130 // FIX(1.77200)
		fGr  = 46802  // FIX(0.71414)
		fGb  = 22554  // FIX(0.34414)
	)
	x, z := int(cb)-128, int(cr)-128
	Y := int(y)
	r := Y + (fR*z+half)>>16
	g := Y + ((-fGb*x+half)+(-fGr*z))>>16
	b := Y + (fB*x+half)>>16
	return jpgClamp(r), jpgClamp(g), jpgClamp(b)
}

func jpgClamp(v int) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// upsample expands component c (its c.w x c.ht samples in pl) to the
// image size the way libjpeg-turbo does with do_fancy_upsampling: triangle
// filters for 2:1 horizontal, 2:1 vertical and 2:1 both ways (the first
// two need more than two samples per line), replication otherwise.
func (j *jpgDec) upsample(c *jpgComp, pl []uint8, stride int) ([]uint8, error) {
	W, H := j.W, j.H
	out := make([]uint8, W*H)
	hin, vin := c.h, c.v
	hout, vout := j.hmax, j.vmax
	at := func(r, x int) int { return int(pl[r*stride+x]) }
	clampRow := func(r int) int {
		if r < 0 {
			return 0
		}
		if r >= c.ht {
			return c.ht - 1
		}
		return r
	}
	switch {
	case hin == hout && vin == vout:
		for y := 0; y < H; y++ {
			copy(out[y*W:y*W+W], pl[y*stride:y*stride+W])
		}
	case hin*2 == hout && vin == vout && c.w > 2:
		row := make([]uint8, 2*c.w)
		for y := 0; y < H; y++ {
			n := c.w
			row[0] = uint8(at(y, 0))
			row[1] = uint8((at(y, 0)*3 + at(y, 1) + 2) >> 2)
			for x := 1; x < n-1; x++ {
				v := at(y, x) * 3
				row[2*x] = uint8((v + at(y, x-1) + 1) >> 2)
				row[2*x+1] = uint8((v + at(y, x+1) + 2) >> 2)
			}
			row[2*n-2] = uint8((at(y, n-1)*3 + at(y, n-2) + 1) >> 2)
			row[2*n-1] = uint8(at(y, n-1))
			copy(out[y*W:y*W+W], row)
		}
	case hin == hout && vin*2 == vout:
		for y := 0; y < H; y++ {
			i := y / 2
			nb, bias := clampRow(i-1), 1
			if y%2 == 1 {
				nb, bias = clampRow(i+1), 2
			}
			for x := 0; x < W; x++ {
				out[y*W+x] = uint8((at(i, x)*3 + at(nb, x) + bias) >> 2)
			}
		}
	case hin*2 == hout && vin*2 == vout && c.w > 2:
		row := make([]uint8, 2*c.w)
		sum := make([]int, c.w)
		for y := 0; y < H; y++ {
			i := y / 2
			nb := clampRow(i - 1)
			if y%2 == 1 {
				nb = clampRow(i + 1)
			}
			for x := range sum {
				sum[x] = at(i, x)*3 + at(nb, x)
			}
			n := c.w
			row[0] = uint8((sum[0]*4 + 8) >> 4)
			row[1] = uint8((sum[0]*3 + sum[1] + 7) >> 4)
			for x := 1; x < n-1; x++ {
				row[2*x] = uint8((sum[x]*3 + sum[x-1] + 8) >> 4)
				row[2*x+1] = uint8((sum[x]*3 + sum[x+1] + 7) >> 4)
			}
			row[2*n-2] = uint8((sum[n-1]*3 + sum[n-2] + 8) >> 4)
			row[2*n-1] = uint8((sum[n-1]*4 + 7) >> 4)
			copy(out[y*W:y*W+W], row)
		}
	case hout%hin == 0 && vout%vin == 0:
		he, ve := hout/hin, vout/vin
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				out[y*W+x] = pl[(y/ve)*stride+x/he]
			}
		}
	default:
		return nil, jpgErr("fractional sampling factors are not supported")
	}
	return out, nil
}
