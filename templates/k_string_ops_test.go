package templates

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func strTensor(shape []int, vals []string) *Tensor {
	t := &Tensor{}
	t.Resize(String, shape...)
	copy(t.Str(), vals)
	return t
}

func TestStringConcat(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	word := func() string { return strings.Repeat(string(rune('a'+r.Intn(26))), r.Intn(3)) + "é" }
	for _, c := range [][2][]int{{{3, 5}, {3, 5}}, {{3, 1}, {1, 7}}, {{}, {2, 3}}, {{4, 0}, {1}}, {{2, 1, 3}, {5, 1}}} {
		xs, ys := c[0], c[1]
		x, y := strTensor(xs, nil), strTensor(ys, nil)
		for i := range x.Str() {
			x.Str()[i] = word()
		}
		for i := range y.Str() {
			y.Str()[i] = word()
		}
		n := &Node{Op: "StringConcat", Version: 20, In: []*Tensor{x, y}, Out: []*Tensor{{}}}
		miscRun(t, StringConcat, n)
		var sh ewShape
		ewBroadcastShape(&sh, xs, ys)
		out := sh.s()
		if !slices.Equal(n.Out[0].Shape, out) {
			t.Fatalf("%v %v: shape %v, want %v", xs, ys, n.Out[0].Shape, out)
		}
		// Reference: index arithmetic per output element.
		idx := func(shape []int, full []int) int {
			off, k := 0, len(full)-len(shape)
			for j, d := range shape {
				i := full[k+j]
				if d == 1 {
					i = 0
				}
				off = off*d + i
			}
			return off
		}
		full := make([]int, len(out))
		for e := range n.Out[0].Str() {
			rem := e
			for j := len(out) - 1; j >= 0; j-- {
				full[j] = rem % out[j]
				rem /= out[j]
			}
			want := x.Str()[idx(xs, full)] + y.Str()[idx(ys, full)]
			if got := n.Out[0].Str()[e]; got != want {
				t.Fatalf("%v %v: element %d = %q, want %q", xs, ys, e, got, want)
			}
		}
	}
}

func TestStringSplit(t *testing.T) {
	for _, c := range []struct {
		in       []string
		delim    string
		maxsplit int64
		hasMax   bool
		want     [][]string
	}{
		{[]string{"a,b,,c", "", "x"}, ",", 0, false, [][]string{{"a", "b", "", "c"}, {""}, {"x"}}},
		{[]string{"a,b,,c", "d"}, ",", 1, true, [][]string{{"a", "b,,c"}, {"d"}}},
		{[]string{"  hello  wide\tworld ", "", "one"}, "", 0, false, [][]string{{"hello", "wide", "world"}, {}, {"one"}}},
		{[]string{"  a b  c  "}, "", 1, true, [][]string{{"a", "b  c  "}}},
		{[]string{"a--b--", "--"}, "--", 0, false, [][]string{{"a", "b", ""}, {"", ""}}},
	} {
		x := strTensor([]int{len(c.in)}, c.in)
		attrs := Attrs{"delimiter": c.delim}
		if c.hasMax {
			attrs["maxsplit"] = c.maxsplit
		}
		n := &Node{Op: "StringSplit", Version: 20, Attrs: attrs, In: []*Tensor{x}, Out: []*Tensor{{}, {}}}
		miscRun(t, StringSplit, n)
		w := 0
		for _, p := range c.want {
			w = max(w, len(p))
		}
		y, z := n.Out[0], n.Out[1]
		if !slices.Equal(y.Shape, []int{len(c.in), w}) {
			t.Fatalf("%q: shape %v, want [%d %d]", c.in, y.Shape, len(c.in), w)
		}
		for i, p := range c.want {
			row := append(slices.Clone(p), make([]string, w-len(p))...)
			if !slices.Equal(y.Str()[i*w:(i+1)*w], row) || z.I64()[i] != int64(len(p)) {
				t.Errorf("%q delim %q: row %d = %q (%d), want %q", c.in, c.delim, i, y.Str()[i*w:(i+1)*w], z.I64()[i], row)
			}
		}
	}
}

func TestRegexFullMatch(t *testing.T) {
	in := []string{"www.google.com", "www.facebook.com", "www.bbc.co.uk", "google.com", "", "www.google.comx"}
	for _, pat := range []string{`www\.[\w.-]+\.\bcom\b`, `.*`, `(?i)WWW.*`, `a|`} {
		x := strTensor([]int{2, 3}, in)
		n := &Node{Op: "RegexFullMatch", Version: 20, Attrs: Attrs{"pattern": pat}, In: []*Tensor{x}, Out: []*Tensor{{}}}
		miscRun(t, RegexFullMatch, n)
		// A full match exists iff the leftmost-longest match spans s.
		re := regexp.MustCompile(pat)
		re.Longest()
		for i, s := range in {
			loc := re.FindStringIndex(s)
			want := loc != nil && loc[0] == 0 && loc[1] == len(s)
			if got := n.Out[0].Bool()[i]; got != want {
				t.Errorf("%q on %q: %v, want %v", pat, s, got, want)
			}
		}
	}
	n := &Node{Op: "RegexFullMatch", Attrs: Attrs{"pattern": "("}, In: []*Tensor{strTensor([]int{1}, []string{"x"})}, Out: []*Tensor{{}}}
	if err := RegexFullMatch(n); err == nil {
		t.Error("bad pattern: no error")
	}
}
