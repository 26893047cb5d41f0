package main

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// graphSVG lays out m's top-level graph without Graphviz: nodes in ranks
// (a node one rank below the lowest of its inputs' producers), the ranks
// top to bottom in columns read left to right like a newspaper, as many
// columns as keep the picture about as wide as it is tall. Each box shows
// the node's number (its index in the graph, as in the memory plan and the
// trace), its op (with a fused activation), the end of its name and its
// first output's type; fused nodes are filled, and their tooltip lists what
// they absorbed. Nodes of one block (the first two parts of an exporter's
// "/a/b/..." name) sit on a shaded band labelled with the block. An edge
// to the next rank is a curve; one skipping ranks runs down a lane to the
// right of the column; one to another column is a stub at both ends
// naming the other node. Constants are left out.
func graphSVG(m *ir.Model) string {
	const (
		boxW, boxH = 196.0, 46.0
		gapX       = 22.0
		rankH      = boxH + 34
		laneW      = 7.0
		top        = 60.0
		left       = 20.0
		colGap     = 46.0
	)
	g := m.Graph
	// Vertices: inputs, nodes, outputs.
	type vert struct {
		kind       byte // 'i' input, 'n' node, 'o' output
		idx        int  // index in g.Inputs, g.Nodes or g.Outputs
		rank       int
		pos        float64 // order within the rank
		x, y       float64 // top-left
		col        int
		block      string
		in, outIDs []int
	}
	var vs []*vert
	src := map[*ir.Value]int{}
	for i, v := range g.Inputs {
		if v.IsConst() {
			continue
		}
		src[v] = len(vs)
		vs = append(vs, &vert{kind: 'i', idx: i})
	}
	addEdge := func(from, to int) {
		for _, o := range vs[to].in {
			if o == from {
				return
			}
		}
		vs[to].in = append(vs[to].in, from)
		vs[from].outIDs = append(vs[from].outIDs, to)
	}
	for i, n := range g.Nodes {
		k := len(vs)
		vs = append(vs, &vert{kind: 'n', idx: i, block: blockOf(n.Name)})
		for _, v := range n.Inputs {
			if s, ok := src[v]; ok && v != nil {
				addEdge(s, k)
			}
		}
		for _, v := range n.Outputs {
			if v != nil {
				src[v] = k
			}
		}
	}
	for i, v := range g.Outputs {
		k := len(vs)
		vs = append(vs, &vert{kind: 'o', idx: i})
		if s, ok := src[v]; ok {
			addEdge(s, k)
		}
	}
	// Ranks: vertices are in topological order.
	ranks := 0
	for _, v := range vs {
		if v.kind != 'i' {
			v.rank = 1
		}
		for _, p := range v.in {
			v.rank = max(v.rank, vs[p].rank+1)
		}
		ranks = max(ranks, v.rank+1)
	}
	ranks = max(ranks, 1)
	byRank := make([][]*vert, ranks)
	for _, v := range vs {
		v.pos = float64(len(byRank[v.rank]))
		byRank[v.rank] = append(byRank[v.rank], v)
	}
	// Order within a rank by the mean position of the inputs' producers
	// (one downward sweep), ties in graph order.
	for r := 1; r < ranks; r++ {
		row := byRank[r]
		key := make(map[*vert]float64, len(row))
		for _, v := range row {
			if len(v.in) == 0 {
				key[v] = v.pos
				continue
			}
			s := 0.0
			for _, p := range v.in {
				s += vs[p].pos - float64(len(byRank[vs[p].rank]))/2
			}
			key[v] = s / float64(len(v.in))
		}
		sort.SliceStable(row, func(i, j int) bool { return key[row[i]] < key[row[j]] })
		for i, v := range row {
			v.pos = float64(i)
		}
	}
	widest := 1
	for _, row := range byRank {
		widest = max(widest, len(row))
	}
	// Columns: about as wide as tall, at least 8 ranks each.
	contentW := float64(widest)*(boxW+gapX) - gapX
	colW := contentW + 10 + 6*laneW // an estimate of the room for the skip lanes
	cols := int(math.Round(math.Sqrt(1.3 * float64(ranks) * rankH / (colW + colGap))))
	cols = max(1, min(cols, (ranks+7)/8))
	perCol := (ranks + cols - 1) / cols
	cols = (ranks + perCol - 1) / perCol
	for _, v := range vs {
		v.col = v.rank / perCol
	}
	// Skip edges (to a later rank of the same column, not the next): lanes
	// right of the column's boxes, packed by rank span.
	type skip struct {
		from, to *vert
		lane     int
	}
	var skips []skip
	for _, v := range vs {
		for _, o := range v.outIDs {
			if w := vs[o]; w.col == v.col && w.rank > v.rank+1 {
				skips = append(skips, skip{from: v, to: w})
			}
		}
	}
	sort.SliceStable(skips, func(i, j int) bool { return skips[i].from.rank < skips[j].from.rank })
	laneEnd := make([][]int, cols) // per column, the last rank each lane is busy to
	lanes := 0
	for i := range skips {
		s := &skips[i]
		ends := laneEnd[s.from.col]
		s.lane = -1
		for l, e := range ends {
			if e <= s.from.rank {
				s.lane, ends[l] = l, s.to.rank
				break
			}
		}
		if s.lane < 0 {
			s.lane = len(ends)
			ends = append(ends, s.to.rank)
		}
		laneEnd[s.from.col] = ends
		lanes = max(lanes, len(ends))
	}
	colW = contentW + 10 + float64(lanes)*laneW
	for _, v := range vs {
		row := byRank[v.rank]
		rowW := float64(len(row))*(boxW+gapX) - gapX
		x0 := left + float64(v.col)*(colW+colGap) + (contentW-rowW)/2
		v.x = x0 + v.pos*(boxW+gapX)
		v.y = top + 24 + float64(v.rank%perCol)*rankH
	}
	svgW := max(left*2+float64(cols)*(colW+colGap)-colGap, 700) // room for the captions
	svgH := top + 24 + float64(perCol)*rankH + 30

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, sans-serif" font-size="9">`+"\n", svgW, svgH, svgW, svgH)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>` + "\n")
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fused := 0
	for _, n := range g.Nodes {
		if len(n.Fused) > 0 {
			fused++
		}
	}
	name := g.Name
	if name == "" {
		name = "graph"
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="18" font-size="14" font-weight="bold">%s: %d nodes (%d fused), %d ranks</text>`+"\n", left, html.EscapeString(name), len(g.Nodes), fused, ranks)
	fmt.Fprintf(&b, `<text x="%.1f" y="31" font-size="10">read the columns left to right, each top to bottom; hover a box for its details</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%.1f" y="44" font-size="10">a box: number (as in the memory plan and the trace), op, its name's end, output type; "to N", "from N": an edge to another column</text>`+"\n", left)

	// Block bands: one per run of consecutive ranks of a block in a column.
	type band struct {
		block          string
		col            int
		x0, y0, x1, y1 float64
	}
	var bands []band
	last := map[string]int{} // block -> index in bands of its open band
	for _, v := range vs {
		if v.block == "" {
			continue
		}
		if k, ok := last[v.block]; ok && bands[k].y1 >= v.y-rankH-1 && bands[k].col == v.col {
			bd := &bands[k]
			bd.x0, bd.y0 = min(bd.x0, v.x-6), min(bd.y0, v.y-14)
			bd.x1, bd.y1 = max(bd.x1, v.x+boxW+6), max(bd.y1, v.y+boxH+6)
			continue
		}
		last[v.block] = len(bands)
		bands = append(bands, band{v.block, v.col, v.x - 6, v.y - 14, v.x + boxW + 6, v.y + boxH + 6})
	}
	for i, bd := range bands {
		fill := []string{"#eef3fa", "#f6f0e6"}[i%2]
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="%s" stroke="#c8d0dc" stroke-width="0.6"/>`, bd.x0, bd.y0, bd.x1-bd.x0, bd.y1-bd.y0, fill)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" fill="#456">%s</text>`+"\n", bd.x0+4, bd.y0+10, html.EscapeString(shortName(bd.block, 40)))
	}

	// Edges.
	number := func(v *vert) string {
		switch v.kind {
		case 'i':
			return "input " + g.Inputs[v.idx].Name
		case 'o':
			return "output " + g.Outputs[v.idx].Name
		}
		return fmt.Sprint(v.idx)
	}
	for _, v := range vs {
		var away []string // the other columns' vertices v feeds: one stub
		sx, sy := v.x+boxW/2, v.y+boxH
		for _, o := range v.outIDs {
			w := vs[o]
			dx, dy := w.x+boxW/2, w.y
			switch {
			case w.col != v.col:
				away = append(away, number(w))
				fmt.Fprintf(&b, `<path d="M%.1f,%.1f v12" fill="none" stroke="#555" stroke-dasharray="3 2" marker-end="url(#arrow)"/><text x="%.1f" y="%.1f" fill="#a33">from %s</text>`+"\n",
					dx, dy-13, dx+4, dy-6, html.EscapeString(shortName(number(v), 30)))
			case w.rank == v.rank+1:
				fmt.Fprintf(&b, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="#555" stroke-width="0.9" marker-end="url(#arrow)"/>`+"\n",
					sx, sy, sx, sy+18, dx, dy-18, dx, dy)
			}
		}
		if len(away) > 0 {
			fmt.Fprintf(&b, `<path d="M%.1f,%.1f v14" fill="none" stroke="#555" stroke-dasharray="3 2" marker-end="url(#arrow)"/><text x="%.1f" y="%.1f" fill="#a33">to %s</text>`+"\n",
				sx, sy, sx+4, sy+14, html.EscapeString(cutEnd(strings.Join(away, ", "), 40)))
		}
	}
	// Skip edges: down from the source into the gap under its rank, along
	// its lane, into the gap over the destination's rank and down into it,
	// so that no leg crosses a box.
	for _, sk := range skips {
		laneX := left + float64(sk.from.col)*(colW+colGap) + contentW + 10 + float64(sk.lane)*laneW
		dy := 8 + float64(sk.lane%4)*4
		sx, sy := sk.from.x+boxW/2+12, sk.from.y+boxH
		dx, ty := sk.to.x+boxW/2+12, sk.to.y
		fmt.Fprintf(&b, `<path d="M%.1f,%.1f V%.1f H%.1f V%.1f H%.1f V%.1f" fill="none" stroke="#6a7f99" stroke-width="0.9" stroke-linejoin="round" marker-end="url(#arrow)"><title>%s to %s</title></path>`+"\n",
			sx, sy, sy+dy, laneX, ty-dy-2, dx, ty, html.EscapeString(number(sk.from)), html.EscapeString(number(sk.to)))
	}

	// Boxes.
	for _, v := range vs {
		switch v.kind {
		case 'i', 'o':
			val := g.Inputs
			what := "input"
			if v.kind == 'o' {
				val, what = g.Outputs, "output"
			}
			x := val[v.idx]
			fmt.Fprintf(&b, `<g><title>%s %s %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="%.1f" fill="#e4e4e4" stroke="#555"/>`, what, html.EscapeString(x.Name), html.EscapeString(x.Type.String()), v.x, v.y, boxW, boxH, boxH/2)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11" font-weight="bold">%s %s</text>`, v.x+boxW/2, v.y+19, what, html.EscapeString(shortName(x.Name, 24)))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%s</text></g>`+"\n", v.x+boxW/2, v.y+34, html.EscapeString(shortName(x.Type.String(), 36)))
			continue
		}
		n := g.Nodes[v.idx]
		op := n.Op
		if a := n.Attr("activation"); a != nil && a.S != "" {
			op += " +" + a.S
		}
		fill, stroke := "#ffffff", "#555"
		if len(n.Fused) > 0 {
			fill, stroke = "#f9d5cf", "#c0392b"
		}
		var tip strings.Builder
		fmt.Fprintf(&tip, "%d %s %s", v.idx, n.Op, n.Name)
		for _, o := range n.Outputs {
			if o != nil {
				fmt.Fprintf(&tip, "\n-> %s %s", o.Name, o.Type)
			}
		}
		if len(n.Fused) > 0 {
			fmt.Fprintf(&tip, "\nfused %d ops:", len(n.Fused))
			for _, f := range n.Fused {
				fmt.Fprintf(&tip, "\n  %s %s", f.Op, f.Name)
			}
		}
		out := ""
		if len(n.Outputs) > 0 && n.Outputs[0] != nil {
			out = n.Outputs[0].Type.String()
			if len(n.Outputs) > 1 {
				out += fmt.Sprintf(" (+%d)", len(n.Outputs)-1)
			}
		}
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" stroke="%s"/>`, html.EscapeString(tip.String()), v.x, v.y, boxW, boxH, fill, stroke)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11"><tspan fill="#777">%d</tspan> <tspan font-weight="bold">%s</tspan></text>`, v.x+5, v.y+14, v.idx, html.EscapeString(cutEnd(op, 26)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`, v.x+5, v.y+27, html.EscapeString(shortName(n.Name, 36)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#555">%s</text></g>`+"\n", v.x+5, v.y+39, html.EscapeString(cutEnd(out, 36)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// blockOf names the block an exporter's node name puts the node in: the
// first two parts of "/a/b/c/Op" ("a/b"), the first of "/a/Op"; "" when
// the name has no path.
func blockOf(name string) string {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	return strings.Join(parts[:min(2, len(parts)-1)], "/")
}

// graphHTML wraps the graph's SVG in a page that pans (drag) and zooms
// (wheel, or + and -; 0 fits the page), with no script from elsewhere.
func graphHTML(title, svg string) string {
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>` + html.EscapeString(title) + `</title>
<style>html,body{margin:0;height:100%;overflow:hidden;font-family:sans-serif}
#view{width:100%;height:100%;cursor:grab}#view svg{width:100%;height:100%}
#help{position:fixed;right:8px;top:8px;background:#fffc;padding:4px 8px;border:1px solid #ccc;font-size:12px}</style>
</head><body><div id="view">` + svg + `</div>
<div id="help">drag to pan, wheel or +/- to zoom, 0 to fit</div>
<script>
(function(){
  var svg=document.querySelector('#view svg');
  var W=+svg.getAttribute('width'),H=+svg.getAttribute('height');
  svg.removeAttribute('width');svg.removeAttribute('height');
  var vb={x:0,y:0,w:W,h:H};
  function set(){svg.setAttribute('viewBox',vb.x+' '+vb.y+' '+vb.w+' '+vb.h);}
  // The viewBox is shown scaled by k and centred (preserveAspectRatio
  // xMidYMid meet): the point under the cursor stays put while zooming.
  function zoom(f,cx,cy){var r=svg.getBoundingClientRect();
    var k=Math.min(r.width/vb.w,r.height/vb.h),ox=(r.width-vb.w*k)/2,oy=(r.height-vb.h*k)/2;
    var px=vb.x+(cx-r.left-ox)/k,py=vb.y+(cy-r.top-oy)/k;
    vb.w*=f;vb.h*=f;k/=f;ox=(r.width-vb.w*k)/2;oy=(r.height-vb.h*k)/2;
    vb.x=px-(cx-r.left-ox)/k;vb.y=py-(cy-r.top-oy)/k;set();}
  svg.addEventListener('wheel',function(e){e.preventDefault();zoom(e.deltaY>0?1.15:1/1.15,e.clientX,e.clientY);},{passive:false});
  var drag=null;
  svg.addEventListener('mousedown',function(e){drag={x:e.clientX,y:e.clientY};});
  window.addEventListener('mouseup',function(){drag=null;});
  window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();
    var s=Math.max(vb.w/r.width,vb.h/r.height);vb.x-=(e.clientX-drag.x)*s;vb.y-=(e.clientY-drag.y)*s;drag={x:e.clientX,y:e.clientY};set();});
  window.addEventListener('keydown',function(e){var r=svg.getBoundingClientRect(),cx=r.left+r.width/2,cy=r.top+r.height/2;
    if(e.key=='+'||e.key=='=')zoom(1/1.3,cx,cy);else if(e.key=='-')zoom(1.3,cx,cy);else if(e.key=='0'){vb={x:0,y:0,w:W,h:H};set();}});
  set();
})();
</script></body></html>
`
}
