package templates

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String operators of opset 20: StringConcat, StringSplit, RegexFullMatch.

// StringConcat is ONNX StringConcat: Z = X + Y elementwise, with
// multidirectional broadcasting.
func StringConcat(n *Node) error {
	X, Y := n.Input(0), n.Input(1)
	if X == nil || Y == nil || X.DType != String || Y.DType != String {
		return n.Errorf("want two string inputs")
	}
	var shape ewShape
	if !ewBroadcastShape(&shape, X.Shape, Y.Shape) {
		return n.Errorf("shapes %s and %s do not broadcast", X.ShapeString(), Y.ShapeString())
	}
	out := n.Out[0]
	out.Resize(String, shape.s()...)
	o, x, y := out.Str(), X.Str(), Y.Str()
	var w ewWalk
	w.initBroadcast(shape.s(), X.Shape, Y.Shape)
	k, so, sx, sy, _ := w.inner()
	for it := w.iter(); it.next(); {
		a, b, c := it.off[0], it.off[1], it.off[2]
		for i := 0; i < k; i++ {
			o[a+i*so] = x[b+i*sx] + y[c+i*sy]
		}
	}
	return nil
}

// RegexFullMatch is ONNX RegexFullMatch: whether each string matches the
// pattern as a whole. ONNX specifies RE2 syntax, which Go's regexp is.
func RegexFullMatch(n *Node) error {
	X := n.Input(0)
	if X == nil || X.DType != String {
		return n.Errorf("want a string input")
	}
	re, ok := n.Cache.(*regexp.Regexp)
	if !ok {
		var err error
		re, err = regexp.Compile(`\A(?:` + n.Attrs.String("pattern", "") + `)\z`)
		if err != nil {
			return n.Errorf("pattern: %v", err)
		}
		n.Cache = re
	}
	out := n.Out[0]
	out.Resize(Bool, X.Shape...)
	o := out.Bool()
	for i, s := range X.Str() {
		o[i] = re.MatchString(s)
	}
	return nil
}

// StringSplit is ONNX StringSplit: each string of X split at delimiter
// (or, when it is empty or absent, at runs of whitespace, ignoring leading
// and trailing whitespace), at most maxsplit times when maxsplit is given.
// Y is X's shape plus the largest part count, padded with empty strings; Z
// holds each string's part count.
func StringSplit(n *Node) error {
	X := n.Input(0)
	if X == nil || X.DType != String {
		return n.Errorf("want a string input")
	}
	delim := n.Attrs.String("delimiter", "")
	maxsplit := -1
	if n.Attrs.Has("maxsplit") {
		maxsplit = int(n.Attrs.Int("maxsplit", -1))
		if maxsplit < 0 {
			maxsplit = -1
		}
	}
	in := X.Str()
	counts := n.Out[1]
	counts.Resize(I64, X.Shape...)
	c := counts.I64()
	width := 0
	for i, s := range in {
		k := stringSplitCount(s, delim, maxsplit)
		c[i] = int64(k)
		width = max(width, k)
	}
	out := n.Out[0]
	shape := miscScr[string](n).getInts(0, len(X.Shape)+1)
	copy(shape, X.Shape)
	shape[len(X.Shape)] = width
	out.Resize(String, shape...)
	o := out.Str()
	for i := range o {
		o[i] = ""
	}
	for i, s := range in {
		row := o[i*width : (i+1)*width]
		stringSplitInto(row, s, delim, maxsplit)
	}
	return nil
}

// stringSplitCount is the number of parts stringSplitInto writes.
func stringSplitCount(s, delim string, maxsplit int) int {
	if delim != "" {
		k := strings.Count(s, delim) + 1
		if maxsplit >= 0 && k > maxsplit+1 {
			k = maxsplit + 1
		}
		return k
	}
	k := 0
	stringSplitSpace(s, maxsplit, func(string) { k++ })
	return k
}

func stringSplitInto(dst []string, s, delim string, maxsplit int) {
	i := 0
	if delim != "" {
		for maxsplit < 0 || i < maxsplit {
			j := strings.Index(s, delim)
			if j < 0 {
				break
			}
			dst[i] = s[:j]
			i++
			s = s[j+len(delim):]
		}
		dst[i] = s
		return
	}
	stringSplitSpace(s, maxsplit, func(p string) { dst[i] = p; i++ })
}

// stringSplitSpace calls f with the whitespace-separated words of s, as
// Python's str.split() with no separator: after maxsplit splits the rest,
// leading whitespace dropped, is the last part.
func stringSplitSpace(s string, maxsplit int, f func(string)) {
	splits := 0
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return
		}
		if maxsplit >= 0 && splits == maxsplit {
			f(s)
			return
		}
		j := strings.IndexFunc(s, unicode.IsSpace)
		if j < 0 {
			f(s)
			return
		}
		f(s[:j])
		splits++
		_, w := utf8.DecodeRuneInString(s[j:])
		s = s[j+w:]
	}
}
