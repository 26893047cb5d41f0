package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// pictureModels are the models TestPictures draws: mnist always, and
// unless -short the shared models where they are (mobilenet; densenet121 with 189 nodes is
// resnet-sized and more), resnet50 where model.sh exported it.
func pictureModels() map[string]string {
	ms := map[string]string{"mnist": filepath.Join(mnist, "model.onnx")}
	if testing.Short() {
		return ms
	}
	for name, path := range map[string]string{
		"mobilenet_v2": "../../../shared/models/mobilenet_v2_op13/model.onnx",
		"densenet121":  "../../../shared/models/light_densenet121/model.onnx",
		"bert":         "../../../shared/models/bert_dynseq_op13/model.onnx",
		"resnet50":     filepath.Join(os.Getenv("HOME"), ".cache/cuvil-models/resnet50_op13/model.onnx"),
	} {
		if _, err := os.Stat(path); err == nil {
			ms[name] = path
		}
	}
	return ms
}

// TestPictures draws the memory plan and the graph of each picture model
// and checks them: well-formed SVG; every value of the plan in its table;
// one box per node, input and output, no two overlapping, the picture no
// more than three times as tall as wide (not a staircase); the HTML page
// self-contained. With rsvg-convert on PATH it renders each SVG to PNG and
// checks the PNG's size and that it is not blank; CUVIL_PICTURES=DIR keeps
// the PNGs there to look at.
func TestPictures(t *testing.T) {
	rsvg, _ := exec.LookPath("rsvg-convert")
	keep := os.Getenv("CUVIL_PICTURES")
	for name, model := range pictureModels() {
		t.Run(name, func(t *testing.T) {
			m, _, err := load(model, pipelineFlags{}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			p, err := passes.PlanModel(m)
			if err != nil {
				t.Fatal(err)
			}
			plan := memPlanSVG(p)
			checkSVG(t, "memory plan", plan)
			for _, b := range append(p.Buffers, p.Dynamic...) {
				if !strings.Contains(plan, `<text x="`) || !strings.Contains(plan, `font-weight="bold">`+html.EscapeString(shortName(b.Value.Name, 36))+"</text>") {
					t.Errorf("memory plan: value %q is not in the table", b.Value.Name)
				}
			}
			graph := graphSVG(m)
			w, h := checkSVG(t, "graph", graph)
			boxes := svgBoxes(graph)
			want := len(m.Graph.Nodes) + len(m.Graph.Outputs)
			for _, v := range m.Graph.Inputs {
				if !v.IsConst() {
					want++
				}
			}
			if len(boxes) != want {
				t.Errorf("graph: %d boxes, want %d (nodes, inputs, outputs)", len(boxes), want)
			}
			for i, a := range boxes {
				for _, b := range boxes[i+1:] {
					if a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+b[3] && b[1] < a[1]+a[3] {
						t.Fatalf("graph: boxes at %v and %v overlap", a, b)
					}
				}
			}
			if len(m.Graph.Nodes) > 40 && (h > 3*w || w > 3*h) {
				t.Errorf("graph of %d nodes is %.0fx%.0f pixels", len(m.Graph.Nodes), w, h)
			}
			page := graphHTML(model, graph)
			_, script, _ := strings.Cut(page, "<script>")
			if !strings.Contains(page, graph) || script == "" || strings.Contains(page, "<script src") || strings.Contains(script, "http") {
				t.Errorf("graph HTML page is not the SVG with an inline script")
			}
			if rsvg == "" {
				t.Skip("rsvg-convert not on PATH: SVGs checked, not rendered")
			}
			for kind, svg := range map[string]string{"memplan": plan, "graph": graph} {
				dir := t.TempDir()
				if keep != "" {
					dir = keep
				}
				in, out := filepath.Join(dir, name+"_"+kind+".svg"), filepath.Join(dir, name+"_"+kind+".png")
				if err := os.WriteFile(in, []byte(svg), 0o644); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command(rsvg, "-o", out, in).CombinedOutput(); err != nil {
					t.Fatalf("rsvg-convert %s: %v\n%s", in, err, b)
				}
				checkPNG(t, out, svg)
			}
		})
	}
}

var svgSize = regexp.MustCompile(`^<svg [^>]*width="([0-9.]+)" height="([0-9.]+)"`)

// checkSVG checks that svg is well-formed XML with a width and height, and
// returns them.
func checkSVG(t *testing.T, what, svg string) (w, h float64) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed SVG: %v", what, err)
		}
	}
	sz := svgSize.FindStringSubmatch(svg)
	if sz == nil {
		t.Fatalf("%s: no width and height in %.200s", what, svg)
	}
	w, _ = strconv.ParseFloat(sz[1], 64)
	h, _ = strconv.ParseFloat(sz[2], 64)
	if w < 100 || h < 100 || w > 20000 || h > 20000 {
		t.Errorf("%s: %.0fx%.0f pixels", what, w, h)
	}
	return w, h
}

var boxRect = regexp.MustCompile(`<g><title>[^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`)

// svgBoxes returns the x, y, width and height of the graph picture's boxes.
func svgBoxes(svg string) [][4]float64 {
	var out [][4]float64
	for _, m := range boxRect.FindAllStringSubmatch(svg, -1) {
		var r [4]float64
		for i := range r {
			r[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		out = append(out, r)
	}
	return out
}

// checkPNG checks that rsvg-convert's PNG has the SVG's size and is not
// blank.
func checkPNG(t *testing.T, path, svg string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sz := svgSize.FindStringSubmatch(svg)
	r := img.Bounds()
	if fmt.Sprint(r.Dx()) != strings.Split(sz[1], ".")[0] || fmt.Sprint(r.Dy()) != strings.Split(sz[2], ".")[0] {
		t.Errorf("%s is %dx%d, the SVG %sx%s", path, r.Dx(), r.Dy(), sz[1], sz[2])
	}
	ink := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			if cr, cg, cb, _ := img.At(x, y).RGBA(); cr+cg+cb < 3*0xf000 {
				ink++
			}
		}
	}
	if frac := float64(ink) / float64(r.Dx()*r.Dy()/4); frac < 0.01 {
		t.Errorf("%s is blank (%.2f%% ink)", path, 100*frac)
	}
}

// TestGraphHTMLScript runs the pan/zoom page's script under node (where it
// is on PATH) against a stand-in for the DOM: the script parses, takes the
// SVG's size as its viewBox, and a wheel turn, a drag and the 0 key move
// the viewBox as they should.
func TestGraphHTMLScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	page := graphHTML("g", `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="400"></svg>`)
	_, script, _ := strings.Cut(page, "<script>")
	script, _, _ = strings.Cut(script, "</script>")
	harness := `
var attrs={width:'800',height:'400'},on={},won={},log=[];
var svg={getAttribute:function(k){return attrs[k]},removeAttribute:function(k){delete attrs[k]},
  setAttribute:function(k,v){attrs[k]=v;if(k=='viewBox')log.push(v)},
  addEventListener:function(k,f){on[k]=f},getBoundingClientRect:function(){return {left:0,top:0,width:rw,height:400}}};
var rw=800;
var document={querySelector:function(){return svg}};
var window={addEventListener:function(k,f){won[k]=f}};
` + script + `
if(attrs.viewBox!=='0 0 800 400')throw new Error('initial viewBox '+attrs.viewBox);
on.wheel({deltaY:-1,clientX:400,clientY:200,preventDefault:function(){}});
var v=attrs.viewBox.split(' ').map(Number);
if(!(v[2]<800&&Math.abs(v[0]+v[2]/2-400)<1e-6))throw new Error('zoom in at the centre: '+attrs.viewBox);
// Zooming at a point keeps that point of the picture under the cursor:
// (600,100) on the screen is (600,100) in the picture at the start.
won.keydown({key:'0'});
on.wheel({deltaY:-1,clientX:600,clientY:100,preventDefault:function(){}});
on.wheel({deltaY:-1,clientX:600,clientY:100,preventDefault:function(){}});
var z=attrs.viewBox.split(' ').map(Number),k=800/z[2];
if(Math.abs(z[0]+600/k-600)>1e-6||Math.abs(z[1]+100/k-100)>1e-6)throw new Error('zoom at (600,100): '+attrs.viewBox);
// In a window wider than the picture, the picture is centred: screen
// (600,100) is picture (500,100), and stays so.
rw=1000;won.keydown({key:'0'});
on.wheel({deltaY:-1,clientX:600,clientY:100,preventDefault:function(){}});
z=attrs.viewBox.split(' ').map(Number);k=Math.min(1000/z[2],400/z[3]);
var ox=(1000-z[2]*k)/2;
if(Math.abs(z[0]+(600-ox)/k-500)>1e-6||Math.abs(z[1]+100/k-100)>1e-6)throw new Error('zoom at (600,100) in a wide window: '+attrs.viewBox);
rw=800;
won.keydown({key:'0'});
on.wheel({deltaY:-1,clientX:400,clientY:200,preventDefault:function(){}});
v=attrs.viewBox.split(' ').map(Number);
on.mousedown({clientX:100,clientY:100});won.mousemove({clientX:150,clientY:100});won.mouseup();
var w=attrs.viewBox.split(' ').map(Number);
if(!(w[0]<v[0]&&w[1]==v[1]))throw new Error('drag right: '+attrs.viewBox);
won.keydown({key:'0'});
if(attrs.viewBox!=='0 0 800 400')throw new Error('0 key: '+attrs.viewBox);
console.log('ok '+log.length);
`
	path := filepath.Join(t.TempDir(), "page.js")
	if err := os.WriteFile(path, []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, path).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("node: %v\n%s", err, out)
	}
}

// TestPicturesOddGraphs: a graph with no nodes, one whose output is a
// constant, and one with a rank 40 nodes wide draw without overlapping
// boxes; the plan of a graph with nothing to plan draws too.
func TestPicturesOddGraphs(t *testing.T) {
	empty := &irbuild.B{G: &ir.Graph{Name: "empty"}}
	x := empty.In("x", irbuild.F32(2))
	konst := &irbuild.B{G: &ir.Graph{Name: "konst"}}
	konst.In("x", irbuild.F32(2))
	wide := &irbuild.B{G: &ir.Graph{Name: "wide"}}
	y := wide.In("x", irbuild.F32(2))
	var parts []*ir.Value
	for range 40 {
		parts = append(parts, wide.Op("Neg", nil, y))
	}
	sum := wide.Op("Sum", nil, parts...)
	for _, m := range []*ir.Model{irbuild.Model(empty, x), irbuild.Model(konst, konst.ConstF32([]int64{1}, 1)), irbuild.Model(wide, sum)} {
		svg := graphSVG(m)
		checkSVG(t, m.Graph.Name, svg)
		boxes := svgBoxes(svg)
		for i, a := range boxes {
			for _, b := range boxes[i+1:] {
				if a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+b[3] && b[1] < a[1]+a[3] {
					t.Fatalf("%s: boxes at %v and %v overlap", m.Graph.Name, a, b)
				}
			}
		}
		if want := len(m.Graph.Nodes) + 2; len(boxes) != want && m.Graph.Name != "konst" {
			t.Errorf("%s: %d boxes, want %d", m.Graph.Name, len(boxes), want)
		}
		p, err := passes.PlanModel(m)
		if err != nil {
			t.Fatal(err)
		}
		checkSVG(t, m.Graph.Name+" plan", memPlanSVG(p))
	}
}
