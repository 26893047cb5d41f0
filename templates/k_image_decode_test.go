package templates

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math/rand"
	"strings"
	"testing"
)

// imgTestPixels is a random W x H RGB image (odd sizes so that BMP rows
// need padding).
func imgTestPixels(rng *rand.Rand, W, H int) []uint8 {
	p := make([]uint8, W*H*3)
	for i := range p {
		p[i] = uint8(rng.Intn(256))
	}
	return p
}

func imgEncodeBMP(p []uint8, W, H int, topDown bool) []byte {
	stride := (W*3 + 3) / 4 * 4
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 54)
	copy(hdr, "BM")
	le.PutUint32(hdr[2:], uint32(54+stride*H))
	le.PutUint32(hdr[10:], 54)
	le.PutUint32(hdr[14:], 40)
	le.PutUint32(hdr[18:], uint32(W))
	h := int32(H)
	if topDown {
		h = -h
	}
	le.PutUint32(hdr[22:], uint32(h))
	le.PutUint16(hdr[26:], 1)
	le.PutUint16(hdr[28:], 24)
	b.Write(hdr)
	for r := 0; r < H; r++ {
		src := H - 1 - r
		if topDown {
			src = r
		}
		row := make([]byte, stride)
		for c := 0; c < W; c++ {
			o := (src*W + c) * 3
			row[3*c], row[3*c+1], row[3*c+2] = p[o+2], p[o+1], p[o]
		}
		b.Write(row)
	}
	return b.Bytes()
}

func imgEncodeTIFF(p []uint8, W, H int) []byte {
	le := binary.LittleEndian
	entries := [][3]uint32{{256, 4, uint32(W)}, {257, 4, uint32(H)}, {259, 3, 1}, {262, 3, 2}, {273, 4, 0},
		{277, 3, 3}, {278, 4, uint32(H)}, {279, 4, uint32(len(p))}}
	ifd := 8
	data := ifd + 2 + 12*len(entries) + 4
	entries[4][2] = uint32(data)
	out := make([]byte, data+len(p))
	copy(out, "II*\x00")
	le.PutUint32(out[4:], uint32(ifd))
	le.PutUint16(out[ifd:], uint16(len(entries)))
	for i, e := range entries {
		o := ifd + 2 + 12*i
		le.PutUint16(out[o:], uint16(e[0]))
		le.PutUint16(out[o+2:], uint16(e[1]))
		le.PutUint32(out[o+4:], 1)
		if e[1] == 3 {
			le.PutUint16(out[o+8:], uint16(e[2]))
		} else {
			le.PutUint32(out[o+8:], e[2])
		}
	}
	copy(out[data:], p)
	return out
}

func imgDecodeRun(t *testing.T, enc []byte, format string) *Tensor {
	t.Helper()
	in := &Tensor{}
	in.Resize(U8, len(enc))
	copy(in.U8(), enc)
	n := &Node{Op: "ImageDecoder", Version: 20, Attrs: Attrs{"pixel_format": format}, In: []*Tensor{in}, Out: []*Tensor{{}}}
	miscRun(t, ImageDecoder, n)
	return n.Out[0]
}

func TestImageDecoder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	W, H := 7, 5
	p := imgTestPixels(rng, W, H)
	rgba := image.NewNRGBA(image.Rect(0, 0, W, H))
	for i := 0; i < W*H; i++ {
		copy(rgba.Pix[4*i:], p[3*i:3*i+3])
		rgba.Pix[4*i+3] = 255
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, rgba); err != nil {
		t.Fatal(err)
	}
	var ppm bytes.Buffer
	fmt.Fprintf(&ppm, "P6\n# comment\n%d %d\n255\n", W, H)
	ppm.Write(p)
	var ppmASCII bytes.Buffer
	fmt.Fprintf(&ppmASCII, "P3 %d %d 15\n", W, H)
	p15 := make([]uint8, len(p))
	for i, v := range p {
		q := int(v) * 15 / 255
		fmt.Fprintf(&ppmASCII, "%d ", q)
		p15[i] = uint8((q*255 + 7) / 15)
	}
	encs := []struct {
		name string
		data []byte
		want []uint8
	}{
		{"png", pngBuf.Bytes(), p},
		{"bmp", imgEncodeBMP(p, W, H, false), p},
		{"bmp_topdown", imgEncodeBMP(p, W, H, true), p},
		{"ppm", ppm.Bytes(), p},
		{"ppm_ascii", ppmASCII.Bytes(), p15},
		{"tiff", imgEncodeTIFF(p, W, H), p},
	}
	for _, e := range encs {
		for _, f := range []string{"RGB", "BGR", "Grayscale"} {
			t.Run(e.name+"_"+f, func(t *testing.T) {
				y := imgDecodeRun(t, e.data, f)
				C := 3
				if f == "Grayscale" {
					C = 1
				}
				if fmt.Sprint(y.Shape) != fmt.Sprint([]int{H, W, C}) {
					t.Fatalf("shape %v, want [%d %d %d]", y.Shape, H, W, C)
				}
				for i := 0; i < W*H; i++ {
					r, g, b := int(e.want[3*i]), int(e.want[3*i+1]), int(e.want[3*i+2])
					var want []int
					switch f {
					case "RGB":
						want = []int{r, g, b}
					case "BGR":
						want = []int{b, g, r}
					default:
						// 0.299 R + 0.587 G + 0.114 B, rounded.
						want = []int{int(float64(r)*0.299 + float64(g)*0.587 + float64(b)*0.114 + 0.5)}
					}
					for k, v := range want {
						got := int(y.U8()[i*C+k])
						if d := got - v; d > 1 || d < -1 || f != "Grayscale" && d != 0 {
							t.Fatalf("pixel %d channel %d: got %d, want %d", i, k, got, v)
						}
					}
				}
			})
		}
	}
	// A paletted GIF decodes to its palette colours.
	pal := color.Palette{color.RGBA{10, 20, 30, 255}, color.RGBA{200, 100, 50, 255}, color.RGBA{0, 255, 7, 255}}
	pi := image.NewPaletted(image.Rect(0, 0, W, H), pal)
	for i := range pi.Pix {
		pi.Pix[i] = uint8(rng.Intn(3))
	}
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, pi, nil); err != nil {
		t.Fatal(err)
	}
	y := imgDecodeRun(t, gifBuf.Bytes(), "RGB")
	for i, ix := range pi.Pix {
		c := pal[ix].(color.RGBA)
		if o := y.U8()[3*i:]; o[0] != c.R || o[1] != c.G || o[2] != c.B {
			t.Fatalf("gif pixel %d: got %v, want %v", i, o[:3], c)
		}
	}
	// Formats that need decoders outside the standard library name themselves.
	for _, c := range []struct{ data, want string }{
		{"RIFF\x10\x00\x00\x00WEBPVP8 ", "WebP"},
		{"\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00", "JPEG 2000"},
		{"not an image", "unknown image format"},
	} {
		in := &Tensor{}
		in.Resize(U8, len(c.data))
		copy(in.U8(), c.data)
		n := &Node{Op: "ImageDecoder", Version: 20, In: []*Tensor{in}, Out: []*Tensor{{}}}
		if err := ImageDecoder(n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %s", c.data[:4], err, c.want)
		}
	}
}
