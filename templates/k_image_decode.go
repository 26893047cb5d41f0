package templates

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"strconv"
)

// ImageDecoder is ONNX ImageDecoder (v20): a 1-D uint8 encoded image to
// [H, W, 3] (pixel_format RGB or BGR) or [H, W, 1] (Grayscale) uint8.
// JPEG decodes with the decoder in k_image_jpeg.go, which reproduces
// libjpeg-turbo's default output bit for bit (what Pillow, and so ONNX's
// reference, gives; Go's image/jpeg differs by up to tens of levels):
// baseline and progressive Huffman, grayscale and YCbCr/RGB; 12-bit,
// lossless, arithmetic-coded and CMYK JPEGs fail with an error naming the
// feature. For pixel_format Grayscale a color JPEG is converted to RGB and
// then to luma as Pillow's convert("L") does, a grayscale JPEG gives its
// samples as they are. PNG and GIF decode with Go's standard library;
// BMP (uncompressed 1/4/8/24/32-bit), PNM (P1-P6) and baseline
// uncompressed TIFF with the small decoders below. WebP, JPEG 2000 and compressed TIFF would need
// decoders outside the standard library (generated packages import only
// it): they fail at run time with an error naming the format.
func ImageDecoder(n *Node) error {
	in := n.Input(0)
	if in == nil || in.DType != U8 {
		return n.Errorf("needs a uint8 encoded_stream")
	}
	format := n.Attrs.String("pixel_format", "RGB")
	if format != "RGB" && format != "BGR" && format != "Grayscale" {
		return n.Errorf("unknown pixel_format %q", format)
	}
	data := in.U8()
	img, err := imgDecode(data)
	if err != nil {
		return n.Errorf("%v", err)
	}
	b := img.Bounds()
	H, W := b.Dy(), b.Dx()
	y := n.Out[0]
	if format == "Grayscale" {
		y.Resize(U8, H, W, 1)
		out := y.U8()
		for r := 0; r < H; r++ {
			for c := 0; c < W; c++ {
				px := img.At(b.Min.X+c, b.Min.Y+r)
				if g, ok := px.(color.Gray); ok {
					out[r*W+c] = g.Y
					continue
				}
				rr, gg, bb := imgRGB(px)
				// ITU-R 601 luma in 16-bit fixed point, rounded (what
				// Pillow's convert("L") computes).
				out[r*W+c] = uint8((uint32(rr)*19595 + uint32(gg)*38470 + uint32(bb)*7471 + 0x8000) >> 16)
			}
		}
		return nil
	}
	y.Resize(U8, H, W, 3)
	out := y.U8()
	for r := 0; r < H; r++ {
		for c := 0; c < W; c++ {
			rr, gg, bb := imgRGB(img.At(b.Min.X+c, b.Min.Y+r))
			if format == "BGR" {
				rr, bb = bb, rr
			}
			o := (r*W + c) * 3
			out[o], out[o+1], out[o+2] = rr, gg, bb
		}
	}
	return nil
}

// imgRGB is c's non-premultiplied 8-bit red, green and blue.
func imgRGB(c color.Color) (uint8, uint8, uint8) {
	switch p := c.(type) {
	case color.RGBA:
		if p.A == 255 {
			return p.R, p.G, p.B
		}
	case color.NRGBA:
		return p.R, p.G, p.B
	case color.Gray:
		return p.Y, p.Y, p.Y
	case color.YCbCr:
		return color.YCbCrToRGB(p.Y, p.Cb, p.Cr)
	}
	q := color.NRGBAModel.Convert(c).(color.NRGBA)
	return q.R, q.G, q.B
}

// imgDecode picks a decoder by the stream's signature.
func imgDecode(d []byte) (image.Image, error) {
	has := func(p string) bool { return bytes.HasPrefix(d, []byte(p)) }
	switch {
	case has("\x89PNG\r\n\x1a\n"):
		return png.Decode(bytes.NewReader(d))
	case has("\xff\xd8"):
		return jpgDecode(d)
	case has("GIF87a"), has("GIF89a"):
		return gif.Decode(bytes.NewReader(d))
	case has("BM"):
		return imgBMP(d)
	case len(d) >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6':
		return imgPNM(d)
	case has("II*\x00"), has("MM\x00*"):
		return imgTIFF(d)
	case has("RIFF") && len(d) >= 12 && string(d[8:12]) == "WEBP":
		return nil, errImg("WebP images are not supported: decoding WebP needs a decoder outside the Go standard library")
	case has("\x00\x00\x00\x0cjP  \r\n\x87\n"), has("\xff\x4f\xff\x51"):
		return nil, errImg("JPEG 2000 images are not supported: decoding JPEG 2000 needs a decoder outside the Go standard library")
	}
	return nil, errImg("unknown image format (PNG, JPEG, GIF, BMP, PNM and uncompressed TIFF are supported)")
}

type errImg string

func (e errImg) Error() string { return string(e) }

// imgBMP decodes an uncompressed Windows bitmap (BI_RGB, or BI_BITFIELDS
// with the standard 32-bit masks): 1, 4 and 8 bits with a palette, 24 and
// 32 bits BGR(X).
func imgBMP(d []byte) (image.Image, error) {
	if len(d) < 54 {
		return nil, errImg("BMP: truncated header")
	}
	le := binary.LittleEndian
	pix := int(le.Uint32(d[10:]))
	dib := int(le.Uint32(d[14:]))
	if dib < 40 || 14+dib > len(d) {
		return nil, errImg("BMP: unsupported header (OS/2 or truncated)")
	}
	W, H := int(int32(le.Uint32(d[18:]))), int(int32(le.Uint32(d[22:])))
	bpp := int(le.Uint16(d[28:]))
	comp := le.Uint32(d[30:])
	topDown := H < 0
	if topDown {
		H = -H
	}
	if W <= 0 || H <= 0 || W > 1<<15 || H > 1<<15 {
		return nil, errImg("BMP: bad size")
	}
	if comp != 0 && !(comp == 3 && (bpp == 32 || bpp == 16)) {
		return nil, errImg("BMP: compressed bitmaps (RLE) are not supported")
	}
	var pal []color.NRGBA
	if bpp <= 8 {
		cnt := int(le.Uint32(d[46:]))
		if cnt == 0 {
			cnt = 1 << bpp
		}
		p := 14 + dib
		for i := 0; i < cnt && p+4 <= len(d); i++ {
			pal = append(pal, color.NRGBA{d[p+2], d[p+1], d[p], 255})
			p += 4
		}
	}
	stride := (W*bpp + 31) / 32 * 4
	if pix < 0 || pix+stride*H > len(d) {
		return nil, errImg("BMP: truncated pixel data")
	}
	img := image.NewNRGBA(image.Rect(0, 0, W, H))
	for r := 0; r < H; r++ {
		src := r
		if !topDown {
			src = H - 1 - r
		}
		row := d[pix+src*stride:]
		for c := 0; c < W; c++ {
			var px color.NRGBA
			switch bpp {
			case 1, 4, 8:
				bit := c * bpp
				v := int(row[bit/8]>>(8-bpp-bit%8)) & (1<<bpp - 1)
				if v < len(pal) {
					px = pal[v]
				}
			case 16:
				v := le.Uint16(row[2*c:]) // 5-5-5
				px = color.NRGBA{uint8((v >> 10 & 31) * 255 / 31), uint8((v >> 5 & 31) * 255 / 31), uint8((v & 31) * 255 / 31), 255}
			case 24:
				px = color.NRGBA{row[3*c+2], row[3*c+1], row[3*c], 255}
			case 32:
				px = color.NRGBA{row[4*c+2], row[4*c+1], row[4*c], 255}
			default:
				return nil, errImg("BMP: unsupported bit depth " + strconv.Itoa(bpp))
			}
			img.SetNRGBA(c, r, px)
		}
	}
	return img, nil
}

// imgPNM decodes Netpbm images: P1/P4 bitmaps, P2/P5 graymaps and P3/P6
// pixmaps, samples scaled from maxval to 255.
func imgPNM(d []byte) (image.Image, error) {
	kind := d[1]
	p := 2
	// token reads the next header number, skipping whitespace and comments.
	token := func() (int, error) {
		for p < len(d) {
			switch c := d[p]; {
			case c == '#':
				for p < len(d) && d[p] != '\n' && d[p] != '\r' {
					p++
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				p++
			default:
				goto num
			}
		}
	num:
		s := p
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
		if s == p {
			return 0, errImg("PNM: bad header")
		}
		return strconv.Atoi(string(d[s:p]))
	}
	W, err := token()
	if err != nil {
		return nil, err
	}
	H, err := token()
	if err != nil {
		return nil, err
	}
	maxv := 1
	if kind != '1' && kind != '4' {
		if maxv, err = token(); err != nil {
			return nil, err
		}
	}
	if W <= 0 || H <= 0 || W > 1<<15 || H > 1<<15 || maxv <= 0 || maxv > 65535 {
		return nil, errImg("PNM: bad size or maxval")
	}
	p++ // the single whitespace after the header
	ch := 1
	if kind == '3' || kind == '6' {
		ch = 3
	}
	scale := func(v int) uint8 { return uint8((v*255 + maxv/2) / maxv) }
	vals := make([]uint8, W*H*ch)
	switch kind {
	case '1', '2', '3':
		p-- // ASCII: tokens are whitespace separated
		for i := range vals {
			if kind == '1' {
				for p < len(d) && (d[p] < '0' || d[p] > '1') {
					p++
				}
				if p >= len(d) {
					return nil, errImg("PNM: truncated data")
				}
				vals[i] = 255 * (1 - (d[p] - '0')) // 1 is black
				p++
				continue
			}
			v, err := token()
			if err != nil {
				return nil, errImg("PNM: truncated data")
			}
			vals[i] = scale(v)
		}
	case '4':
		stride := (W + 7) / 8
		if p+stride*H > len(d) {
			return nil, errImg("PNM: truncated data")
		}
		for r := 0; r < H; r++ {
			for c := 0; c < W; c++ {
				bit := d[p+r*stride+c/8] >> (7 - c%8) & 1
				vals[r*W+c] = 255 * (1 - bit)
			}
		}
	default:
		bps := 1
		if maxv > 255 {
			bps = 2
		}
		if p+len(vals)*bps > len(d) {
			return nil, errImg("PNM: truncated data")
		}
		for i := range vals {
			v := int(d[p+i*bps])
			if bps == 2 {
				v = v<<8 | int(d[p+i*bps+1])
			}
			vals[i] = scale(v)
		}
	}
	if ch == 1 {
		return &image.Gray{Pix: vals, Stride: W, Rect: image.Rect(0, 0, W, H)}, nil
	}
	img := image.NewNRGBA(image.Rect(0, 0, W, H))
	for i := 0; i < W*H; i++ {
		copy(img.Pix[4*i:], vals[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img, nil
}

// imgTIFF decodes the first image of a baseline TIFF when it is
// uncompressed, 8 bits per sample, chunky, grayscale or RGB(A) in strips.
// Compressed TIFFs (LZW, Deflate, JPEG, PackBits) are not supported.
func imgTIFF(d []byte) (image.Image, error) {
	var bo binary.ByteOrder = binary.LittleEndian
	if d[0] == 'M' {
		bo = binary.BigEndian
	}
	if len(d) < 8 {
		return nil, errImg("TIFF: truncated header")
	}
	ifd := int(bo.Uint32(d[4:]))
	if ifd+2 > len(d) {
		return nil, errImg("TIFF: bad IFD offset")
	}
	cnt := int(bo.Uint16(d[ifd:]))
	W, H, comp, photo, spp, planar, rps := 0, 0, 1, -1, 1, 1, 0
	var offs, bits []int
	var counts []int
	// vals reads a tag's values (SHORT or LONG).
	vals := func(e []byte) []int {
		typ, n := bo.Uint16(e[2:]), int(bo.Uint32(e[4:]))
		size := map[uint16]int{3: 2, 4: 4}[typ]
		if size == 0 || n <= 0 || n > 1<<20 {
			return nil
		}
		src := e[8:12]
		if n*size > 4 {
			o := int(bo.Uint32(e[8:]))
			if o < 0 || o+n*size > len(d) {
				return nil
			}
			src = d[o : o+n*size]
		}
		out := make([]int, n)
		for i := range out {
			if size == 2 {
				out[i] = int(bo.Uint16(src[2*i:]))
			} else {
				out[i] = int(bo.Uint32(src[4*i:]))
			}
		}
		return out
	}
	first := func(v []int, def int) int {
		if len(v) == 0 {
			return def
		}
		return v[0]
	}
	for i := 0; i < cnt; i++ {
		o := ifd + 2 + 12*i
		if o+12 > len(d) {
			return nil, errImg("TIFF: truncated IFD")
		}
		e := d[o : o+12]
		switch bo.Uint16(e) {
		case 256:
			W = first(vals(e), 0)
		case 257:
			H = first(vals(e), 0)
		case 258:
			bits = vals(e)
		case 259:
			comp = first(vals(e), 1)
		case 262:
			photo = first(vals(e), -1)
		case 273:
			offs = vals(e)
		case 277:
			spp = first(vals(e), 1)
		case 278:
			rps = first(vals(e), 0)
		case 279:
			counts = vals(e)
		case 284:
			planar = first(vals(e), 1)
		}
	}
	if comp != 1 {
		return nil, errImg("TIFF: compressed TIFF (compression " + strconv.Itoa(comp) + ") is not supported: it needs a decoder outside the Go standard library")
	}
	for _, b := range bits {
		if b != 8 {
			return nil, errImg("TIFF: only 8 bits per sample are supported")
		}
	}
	if W <= 0 || H <= 0 || W > 1<<15 || H > 1<<15 || planar != 1 || len(offs) == 0 || len(offs) != len(counts) ||
		!(photo == 2 && spp >= 3 || (photo == 0 || photo == 1) && spp >= 1) {
		return nil, errImg("TIFF: unsupported layout (want chunky 8-bit grayscale or RGB strips)")
	}
	if rps <= 0 {
		rps = H
	}
	raw := make([]byte, 0, W*H*spp)
	for i, o := range offs {
		if o < 0 || o+counts[i] > len(d) {
			return nil, errImg("TIFF: truncated strip")
		}
		raw = append(raw, d[o:o+counts[i]]...)
	}
	if len(raw) < W*H*spp {
		return nil, errImg("TIFF: truncated image data")
	}
	img := image.NewNRGBA(image.Rect(0, 0, W, H))
	for i := 0; i < W*H; i++ {
		s := raw[i*spp:]
		var r, g, b uint8
		if photo == 2 {
			r, g, b = s[0], s[1], s[2]
		} else {
			r = s[0]
			if photo == 0 {
				r = 255 - r
			}
			g, b = r, r
		}
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = r, g, b, 255
	}
	return img, nil
}
