package main

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// memPlanSVG draws the plan as a timeline: x is the node index, y the
// byte offset in the arena (one band per dtype arena, stacked, each with
// its own offset axis), one rectangle per buffer from its defining node to
// its last reader. Every value is labelled in the picture, in a column to
// the right joined to its rectangle by a leader line (name, size, live
// range), and inside the rectangle too where its name fits; tooltips
// repeat the facts.
func memPlanSVG(p *passes.MemPlan) string {
	const (
		left    = 96.0 // y axis and its labels
		top     = 44.0 // title
		bottom  = 56.0 // x axis
		rowH    = 13.0 // one label row
		gapY    = 34.0 // between arenas
		minBand = 60.0
	)
	cols := float64(p.Nodes + 1)
	colW := min(max(1600/cols, 3), 14)
	chartW := cols * colW
	// Arena bands: as tall as the labels they hold need, at least minBand,
	// split among arenas by bytes.
	height := max(420, float64(len(p.Buffers))*rowH)
	total := p.Total()
	base := map[ir.DType]float64{}
	scale := map[ir.DType]float64{}
	y := top
	for _, a := range p.Arenas {
		h := minBand
		if total > 0 {
			h = max(height*float64(a.Bytes)/float64(total), minBand)
		}
		base[a.DType] = y
		scale[a.DType] = h / float64(max(a.Bytes, 1))
		y += h + gapY
	}
	chartBottom := y - gapY
	labelX := left + chartW + 60
	type label struct {
		want, at float64
		i        int
	}
	labels := make([]label, len(p.Buffers))
	for i, buf := range p.Buffers {
		s := scale[buf.DType]
		labels[i] = label{want: base[buf.DType] + (float64(buf.Offset)+float64(buf.Bytes)/2)*s, i: i}
	}
	sort.SliceStable(labels, func(a, b int) bool { return labels[a].want < labels[b].want })
	next := top
	for k := range labels {
		labels[k].at = max(labels[k].want, next)
		next = labels[k].at + rowH
	}
	svgH := max(chartBottom, next) + bottom
	if len(p.Dynamic) > 0 {
		svgH += rowH * 2
	}
	svgW := labelX + 420

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="10">`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	summary := fmt.Sprintf("memory plan: %s of arenas for %d values (their sizes add up to %s)", byteUnits(p.Total()), len(p.Buffers), byteUnits(p.Sum()))
	sub := fmt.Sprintf("%d in place, %d sized at run time; a value's rectangle spans its live range (x) and its bytes in the arena (y)", p.InPlaceCount(), len(p.Dynamic))
	fmt.Fprintf(&b, "<title>%s; %s</title>\n", html.EscapeString(summary), html.EscapeString(sub))
	fmt.Fprintf(&b, `<text x="%.1f" y="16" font-size="13" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(summary))
	fmt.Fprintf(&b, `<text x="%.1f" y="30">%s</text>`+"\n", left, html.EscapeString(sub))

	// x axis: node index, ticks every 1, 2, 5, 10... nodes, at least 40 px apart.
	xStep := niceStep(40/colW, []float64{1, 2, 5})
	axisY := chartBottom + 8
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, axisY, left+chartW, axisY)
	for n := 0.0; n <= cols-1; n += xStep {
		x := left + n*colW + colW/2
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, x, top, x, chartBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x, axisY, x, axisY+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%.0f</text>`+"\n", x, axisY+15, n)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">node index (a value lives from the node that defines it to its last reader)</text>`+"\n", left+chartW/2, axisY+32)

	// One band per arena, with its offset axis.
	for _, a := range p.Arenas {
		y0, s := base[a.DType], scale[a.DType]
		h := float64(max(a.Bytes, 1)) * s
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#999"/>`+"\n", left, y0, chartW, h)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">%s arena, %s</text>`+"\n", left, y0-4, a.DType, byteUnits(a.Bytes))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left-6, y0, left-6, y0+h)
		step := niceStep(30/s, []float64{1, 2, 4, 8})
		for off := 0.0; off <= float64(a.Bytes); off += step {
			ty := y0 + off*s
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, left-10, ty, left-6, ty)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-12, ty+3, byteUnits(int64(off)))
		}
		fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" font-size="11">offset in the %s arena (bytes)</text>`+"\n", y0+h/2, a.DType)
	}

	colors := []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}
	for _, l := range labels {
		buf := p.Buffers[l.i]
		s := scale[buf.DType]
		x := left + float64(buf.First)*colW
		wd := float64(buf.Last-buf.First+1) * colW
		ry := base[buf.DType] + float64(buf.Offset)*s
		h := max(float64(buf.Bytes)*s, 1)
		color := colors[l.i%len(colors)]
		facts := fmt.Sprintf("%s, nodes %d-%d", byteUnits(buf.Bytes), buf.First, buf.Last)
		if buf.InPlace != nil {
			facts += ", in place of " + buf.InPlace.Name
		}
		title := fmt.Sprintf("%s (%s): %s at offset %d", buf.Value.Name, buf.DType, facts, buf.Offset)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s" fill-opacity="0.75" stroke="#333" stroke-width="0.3"><title>%s</title></rect>`+"\n",
			x, ry, wd, h, color, html.EscapeString(title))
		name := shortName(buf.Value.Name, 44)
		if h >= 11 && wd >= float64(len(name))*5.6+4 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9">%s</text>`+"\n", x+2, ry+9, html.EscapeString(name))
		}
		// Leader line from the rectangle's right edge to the label.
		cy := ry + h/2
		fmt.Fprintf(&b, `<polyline points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="0.7"/>`,
			x+wd, cy, labelX-30, cy, labelX-4, l.at, color)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/>`, labelX-2, l.at-4, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f"><tspan font-weight="bold">%s</tspan> %s</text>`+"\n", labelX+10, l.at+3.5, html.EscapeString(name), html.EscapeString(facts))
	}
	if len(p.Dynamic) > 0 {
		var names []string
		for _, d := range p.Dynamic {
			names = append(names, shortName(d.Value.Name, 40))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">sized at run time (not in the arenas): %s</text>`+"\n", left, svgH-8, html.EscapeString(strings.Join(names, ", ")))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep returns the least m*10^k (m in mults; for mults 1,2,4,8 m*2^k
// from 1) at least min.
func niceStep(min float64, mults []float64) float64 {
	if mults[len(mults)-1] == 8 { // bytes: powers of two
		s := 1.0
		for s < min {
			s *= 2
		}
		return s
	}
	for p := 1.0; ; p *= 10 {
		for _, m := range mults {
			if m*p >= min {
				return m * p
			}
		}
	}
}

// byteUnits prints n bytes as B, KiB, MiB or GiB.
func byteUnits(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.4g KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.4g GiB", float64(n)/(1<<30))
}

// shortName keeps the end of a long name (where ONNX exporters put what
// tells values apart).
func shortName(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return s
}
