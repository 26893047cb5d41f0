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
// its last reader. Each value has a number; a rectangle shows the number,
// then the name and size, as far as they fit (rotated in tall narrow
// rectangles), and a table under the chart gives every value's number,
// name, size, live range, offset and type (values sized at run time
// included). Tooltips repeat the facts.
func memPlanSVG(p *passes.MemPlan) string {
	const (
		left     = 96.0 // y axis and its labels
		top      = 50.0 // title
		rowH     = 14.0 // one table row
		gapY     = 34.0 // between arenas
		minBand  = 60.0
		chartH   = 560.0
		charW    = 5.6   // average glyph width at font-size 10 (DejaVu Sans)
		tableCol = 720.0 // one column of the table
	)
	cols := float64(p.Nodes + 1)
	colW := min(max(1400/cols, 3), 14)
	chartW := cols * colW
	// Arena bands split chartH by bytes, each at least minBand.
	total := p.Total()
	base := map[ir.DType]float64{}
	scale := map[ir.DType]float64{}
	y := top
	for _, a := range p.Arenas {
		h := minBand
		if total > 0 {
			h = max(chartH*float64(a.Bytes)/float64(total), minBand)
		}
		base[a.DType] = y
		scale[a.DType] = h / float64(max(a.Bytes, 1))
		y += h + gapY
	}
	// Values sized at run time have no offset: their live ranges go in a
	// band of their own, packed into lanes (a value in the first lane free
	// over its range).
	const laneH = 7.0
	var laneEnd []int
	lane := make([]int, len(p.Dynamic))
	for i, d := range p.Dynamic {
		lane[i] = -1
		for l, end := range laneEnd {
			if end < d.First {
				lane[i], laneEnd[l] = l, d.Last
				break
			}
		}
		if lane[i] < 0 {
			lane[i] = len(laneEnd)
			laneEnd = append(laneEnd, d.Last)
		}
	}
	dynTop := y
	if len(p.Dynamic) > 0 {
		y += float64(len(laneEnd))*laneH + 4 + gapY
	}
	chartBottom := y - gapY
	axisY := chartBottom + 8

	// Every value, numbered in the order of its defining node.
	type entry struct {
		buf     passes.MemBuffer
		dynamic bool
	}
	var entries []entry
	for _, b := range p.Buffers {
		entries = append(entries, entry{buf: b})
	}
	for _, b := range p.Dynamic {
		entries = append(entries, entry{buf: b, dynamic: true})
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i].buf, entries[j].buf
		if a.First != b.First {
			return a.First < b.First
		}
		return a.Offset < b.Offset
	})
	svgW := max(left+chartW+40, 1000)
	tableCols := max(1, int((svgW-left+40)/tableCol))
	if tableCols > len(entries) {
		tableCols = max(len(entries), 1)
	}
	perCol := (len(entries) + tableCols - 1) / tableCols
	svgW = max(svgW, left+float64(tableCols)*tableCol)
	tableTop := axisY + 60
	svgH := tableTop + 22 + float64(perCol)*rowH + 16

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="DejaVu Sans, sans-serif" font-size="10">`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	summary := fmt.Sprintf("memory plan: %s of arenas for %d values (their sizes add up to %s)", byteUnits(p.Total()), len(p.Buffers), byteUnits(p.Sum()))
	sub := fmt.Sprintf("%d in place, %d sized at run time; a value's rectangle spans its live range (x) and its bytes in the arena (y); its number is in the table below", p.InPlaceCount(), len(p.Dynamic))
	fmt.Fprintf(&b, "<title>%s; %s</title>\n", html.EscapeString(summary), html.EscapeString(sub))
	fmt.Fprintf(&b, `<text x="%.1f" y="16" font-size="13" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(summary))
	fmt.Fprintf(&b, `<text x="%.1f" y="30">%s</text>`+"\n", left, html.EscapeString(sub))

	// x axis: node index, ticks every 1, 2, 5, 10... nodes, at least 40 px apart.
	xStep := niceStep(40/colW, []float64{1, 2, 5})
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, axisY, left+chartW, axisY)
	for n := 0.0; n <= cols-1; n += xStep {
		x := left + n*colW + colW/2
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, x, top, x, chartBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x, axisY, x, axisY+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%.0f</text>`+"\n", x, axisY+15, n)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">node index (a value lives from the node that defines it to its last reader)</text>`+"\n", left, axisY+32)

	// One band per arena, with its offset axis.
	for _, a := range p.Arenas {
		y0, s := base[a.DType], scale[a.DType]
		h := float64(max(a.Bytes, 1)) * s
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#999"/>`+"\n", left, y0, chartW, h)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">%s arena, %s</text>`+"\n", left, y0-5, a.DType, byteUnits(a.Bytes))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left-6, y0, left-6, y0+h)
		step := niceStep(30/s, []float64{1, 2, 4, 8})
		for off := 0.0; off <= float64(a.Bytes); off += step {
			ty := y0 + off*s
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, left-10, ty, left-6, ty)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-12, ty+3, byteUnits(int64(off)))
		}
		fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" font-size="11">offset in the %s arena</text>`+"\n", y0+h/2, a.DType)
	}

	if len(p.Dynamic) > 0 {
		h := float64(len(laneEnd))*laneH + 4
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#999" stroke-dasharray="3 2"/>`+"\n", left, dynTop, chartW, h)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">%d values sized at run time (live ranges only; not in the arenas)</text>`+"\n", left, dynTop-5, len(p.Dynamic))
	}
	colors := []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}
	numberOf := map[*ir.Value]int{}
	for k, e := range entries {
		numberOf[e.buf.Value] = k + 1
	}
	facts := func(e entry) (size, live, where, note string) {
		buf := e.buf
		live = fmt.Sprintf("nodes %d-%d", buf.First, buf.Last)
		if e.dynamic {
			return "run time", live, "-", "sized at run time"
		}
		if buf.InPlace != nil {
			note = "in place of " + shortName(buf.InPlace.Name, 28)
			if k, ok := numberOf[buf.InPlace]; ok {
				note = fmt.Sprintf("in place of %d", k)
			}
		}
		return byteUnits(buf.Bytes), live, fmt.Sprintf("@%s", byteUnits(buf.Offset)), note
	}
	dynIndex := map[*ir.Value]int{}
	for i, d := range p.Dynamic {
		dynIndex[d.Value] = i
	}
	// Rectangles, with what fits of "N name size" inside.
	for k, e := range entries {
		if e.dynamic {
			d := e.buf
			x := left + float64(d.First)*colW
			wd := float64(d.Last-d.First+1) * colW
			ly := dynTop + 2 + float64(lane[dynIndex[d.Value]])*laneH
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#999" stroke="#333" stroke-width="0.4"><title>%s</title></rect>`+"\n",
				x, ly, wd, laneH-2, html.EscapeString(fmt.Sprintf("%d: %s (%s), sized at run time, nodes %d-%d", k+1, d.Value.Name, d.Value.Type, d.First, d.Last)))
			continue
		}
		buf := e.buf
		s := scale[buf.DType]
		x := left + float64(buf.First)*colW
		wd := float64(buf.Last-buf.First+1) * colW
		ry := base[buf.DType] + float64(buf.Offset)*s
		h := max(float64(buf.Bytes)*s, 2)
		size, live, where, note := facts(e)
		title := fmt.Sprintf("%d: %s (%s %s): %s, %s, offset %s", k+1, buf.Value.Name, buf.DType, buf.Value.Type, size, live, where)
		if note != "" {
			title += ", " + note
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s" fill-opacity="0.8" stroke="#333" stroke-width="0.4"><title>%s</title></rect>`+"\n",
			x, ry, wd, h, colors[k%len(colors)], html.EscapeString(title))
		id := fmt.Sprint(k + 1)
		name := shortName(buf.Value.Name, 40)
		const fw = charW * 0.9 // font-size 9
		for _, text := range []string{id + " " + name + " " + size, id + " " + name, id + " " + size, id} {
			n := float64(len([]rune(text)))
			if h >= 11 && wd >= n*fw+4 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9">%s</text>`+"\n", x+2, ry+min(h/2+3, 10), html.EscapeString(text))
				break
			}
			if wd >= 11 && h >= n*fw+4 {
				fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(90)" font-size="9">%s</text>`+"\n", x+min(wd/2-3, 3), ry+2, html.EscapeString(text))
				break
			}
		}
	}

	// The table, column-major, perCol rows a column.
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" font-weight="bold">values (number: name, size, live range, offset in the arena, type)</text>`+"\n", left, tableTop)
	for k, e := range entries {
		c, r := k/perCol, k%perCol
		x := left + float64(c)*tableCol
		ty := tableTop + 20 + float64(r)*rowH
		if r%2 == 1 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f2f2f2"/>`, x-2, ty-10, tableCol-12, rowH)
		}
		color := "#999"
		if !e.dynamic {
			color = colors[k%len(colors)]
		}
		size, live, where, note := facts(e)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="9" height="9" fill="%s" stroke="#333" stroke-width="0.4"/>`, x, ty-8, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%d</text>`, x+38, ty, k+1)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">%s</text>`, x+44, ty, html.EscapeString(shortName(e.buf.Value.Name, 36)))
		rest := e.buf.Value.Type.String()
		if note != "" {
			rest += ", " + note
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text><text x="%.1f" y="%.1f">%s</text><text x="%.1f" y="%.1f" text-anchor="end">%s</text><text x="%.1f" y="%.1f">%s</text>`+"\n",
			x+350, ty, size, x+360, ty, live, x+505, ty, html.EscapeString(where), x+515, ty, html.EscapeString(cutEnd(rest, 34)))
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

// cutEnd keeps the start of s, at most n runes.
func cutEnd(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// shortName keeps the end of a long name (where ONNX exporters put what
// tells values apart).
func shortName(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return s
}
