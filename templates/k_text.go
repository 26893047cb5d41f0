package templates

import (
	"strings"
	"unicode/utf8"
)

// Text operators: StringNormalizer (version 10) and TfIdfVectorizer
// (version 9).

// StringNormalizer is ONNX StringNormalizer: X is [C] or [1, C]; it drops
// the stopwords (compared case-insensitively unless is_case_sensitive)
// and then changes case (LOWER, UPPER or NONE). When every string goes,
// the output is one empty string. Case mapping is Unicode's simple one;
// the locale attribute is not consulted.
func StringNormalizer(n *Node) error {
	X := n.Input(0)
	if X == nil || X.DType != String {
		return n.Errorf("want a string input")
	}
	twoD := len(X.Shape) == 2
	if !(len(X.Shape) == 1 || twoD && X.Shape[0] == 1) {
		return n.Errorf("input shape %s: want [C] or [1, C]", X.ShapeString())
	}
	action := n.Attrs.String("case_change_action", "NONE")
	if action != "NONE" && action != "LOWER" && action != "UPPER" {
		return n.Errorf("case_change_action %q: want NONE, LOWER or UPPER", action)
	}
	sensitive := n.Attrs.Int("is_case_sensitive", 0) != 0
	stop := n.Attrs.Strings("stopwords")
	in := X.Str()
	kept := miscScr[string](n).get(0, len(in))[:0]
	for _, s := range in {
		drop := false
		for _, w := range stop {
			if s == w || !sensitive && strings.EqualFold(s, w) {
				drop = true
				break
			}
		}
		if !drop {
			kept = append(kept, s)
		}
	}
	c := max(len(kept), 1)
	out := n.Out[0]
	if twoD {
		out.Resize(String, 1, c)
	} else {
		out.Resize(String, c)
	}
	o := out.Str()
	if len(kept) == 0 {
		o[0] = ""
		return nil
	}
	for i, s := range kept {
		switch action {
		case "LOWER":
			s = textMapCase(s, false)
		case "UPPER":
			s = textMapCase(s, true)
		}
		o[i] = s
	}
	return nil
}

// textMapCase is strings.ToUpper/ToLower that returns s itself, without
// allocating, when nothing changes.
func textMapCase(s string, upper bool) string {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			goto slow
		}
		if upper && 'a' <= r && r <= 'z' || !upper && 'A' <= r && r <= 'Z' {
			goto slow
		}
	}
	return s
slow:
	if upper {
		return strings.ToUpper(s)
	}
	return strings.ToLower(s)
}

// textTrie holds the pool of n-grams: the node reached by tokens t1..tk
// has index >= 0 when that k-gram is in the pool (its output column).
type textTrie struct {
	idx  int
	strs map[string]*textTrie
	ints map[int64]*textTrie
}

func (t *textTrie) childS(s string, add bool) *textTrie {
	c := t.strs[s]
	if c == nil && add {
		if t.strs == nil {
			t.strs = map[string]*textTrie{}
		}
		c = &textTrie{idx: -1}
		t.strs[s] = c
	}
	return c
}

func (t *textTrie) childI(v int64, add bool) *textTrie {
	c := t.ints[v]
	if c == nil && add {
		if t.ints == nil {
			t.ints = map[int64]*textTrie{}
		}
		c = &textTrie{idx: -1}
		t.ints[v] = c
	}
	return c
}

// tfidfState is what TfIdfVectorizer derives from its attributes once.
type tfidfState struct {
	root    *textTrie
	width   int // output columns: max(ngram_indexes)+1
	weights []float32
	counts  []float64
}

func tfidfBuild(n *Node) (*tfidfState, error) {
	if st, ok := n.Cache.(*tfidfState); ok {
		return st, nil
	}
	counts := n.Attrs.Ints("ngram_counts")
	indexes := n.Attrs.Ints("ngram_indexes")
	strs := n.Attrs.Strings("pool_strings")
	ints := n.Attrs.Ints("pool_int64s")
	useStr := len(strs) > 0
	pool := len(ints)
	if useStr {
		pool = len(strs)
	}
	st := &tfidfState{root: &textTrie{idx: -1}, weights: n.Attrs.Floats("weights")}
	for _, ix := range indexes {
		if ix < 0 {
			return nil, n.Errorf("negative ngram index %d", ix)
		}
		st.width = max(st.width, int(ix)+1)
	}
	if st.weights != nil && len(st.weights) != len(indexes) {
		return nil, n.Errorf("%d weights for %d n-grams", len(st.weights), len(indexes))
	}
	ord := 0 // ordinal of the n-gram across all sizes
	for k, start := range counts {
		size := k + 1
		end := int64(pool)
		if k+1 < len(counts) {
			end = counts[k+1]
		}
		if start < 0 || end < start || end > int64(pool) || (end-start)%int64(size) != 0 {
			return nil, n.Errorf("ngram_counts %v do not split a pool of %d into %d-grams", counts, pool, size)
		}
		for p := int(start); p < int(end); p += size {
			node := st.root
			for j := p; j < p+size; j++ {
				if useStr {
					node = node.childS(strs[j], true)
				} else {
					node = node.childI(ints[j], true)
				}
			}
			if ord >= len(indexes) {
				return nil, n.Errorf("the pool holds more n-grams than ngram_indexes (%d)", len(indexes))
			}
			node.idx = int(indexes[ord])
			ord++
		}
	}
	n.Cache = st
	return st, nil
}

// TfIdfVectorizer is ONNX TfIdfVectorizer: for each row of X ([N] or
// [B, N]) it counts the pool's n-grams, of sizes min_gram_length to
// max_gram_length, whose items lie skip+1 apart for skip 0 to
// max_skip_count (unigrams counted once), and writes TF (the counts), IDF
// (weight, or 1, where the count is not zero) or TFIDF (count * weight)
// into [B, columns] or [columns].
func TfIdfVectorizer(n *Node) error {
	X := n.Input(0)
	if X == nil {
		return n.Errorf("missing input")
	}
	st, err := tfidfBuild(n)
	if err != nil {
		return err
	}
	minN := int(n.Attrs.Int("min_gram_length", 1))
	maxN := int(n.Attrs.Int("max_gram_length", 1))
	maxSkip := int(n.Attrs.Int("max_skip_count", 0))
	mode := n.Attrs.String("mode", "")
	if mode != "TF" && mode != "IDF" && mode != "TFIDF" {
		return n.Errorf("mode %q: want TF, IDF or TFIDF", mode)
	}
	if minN < 1 || maxN < minN || maxSkip < 0 {
		return n.Errorf("bad n-gram range [%d, %d] or max_skip_count %d", minN, maxN, maxSkip)
	}
	isStr := X.DType == String
	if !isStr && X.DType != I32 && X.DType != I64 {
		return n.Errorf("input dtype %s: want string, int32 or int64", X.DType)
	}
	rows, cols := 1, 0
	out := n.Out[0]
	switch len(X.Shape) {
	case 0, 1:
		if len(X.Shape) == 1 {
			cols = X.Shape[0]
		} else {
			cols = 1
		}
		out.Resize(F32, st.width)
	case 2:
		rows, cols = X.Shape[0], X.Shape[1]
		out.Resize(F32, rows, st.width)
	default:
		return n.Errorf("input shape %s: want [N] or [B, N]", X.ShapeString())
	}
	o := out.F32()
	if cap(st.counts) < st.width {
		st.counts = make([]float64, st.width)
	}
	counts := st.counts[:st.width]
	for b := 0; b < rows; b++ {
		clear(counts)
		base := b * cols
		for start := 0; start < cols; start++ {
			for skip := 0; skip <= maxSkip; skip++ {
				node := st.root
				for k := 1; k <= maxN; k++ {
					p := start + (k-1)*(skip+1)
					if p >= cols {
						break
					}
					if isStr {
						node = node.childS(X.Str()[base+p], false)
					} else {
						node = node.childI(ewI64At(X, base+p), false)
					}
					if node == nil {
						break
					}
					if k >= minN && node.idx >= 0 && (k > 1 || skip == 0) {
						counts[node.idx]++
					}
				}
				if maxN == 1 {
					break // unigrams do not depend on the skip
				}
			}
		}
		row := o[b*st.width : (b+1)*st.width]
		for j, c := range counts {
			w := 1.0
			if j < len(st.weights) { // by output column, as the reference implementations index them
				w = float64(st.weights[j])
			}
			switch mode {
			case "TF":
				row[j] = float32(c)
			case "IDF":
				row[j] = 0
				if c > 0 {
					row[j] = float32(w)
				}
			case "TFIDF":
				row[j] = float32(c * w)
			}
		}
	}
	return nil
}
