package templates

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestStringNormalizer(t *testing.T) {
	in := []string{"Monday", "tuesday", "MONDAY", "Straße", "x"}
	for _, c := range []struct {
		action    string
		sensitive int64
		stop      []string
		twoD      bool
		want      []string
	}{
		{"NONE", 0, nil, false, in},
		{"LOWER", 0, []string{"monday"}, false, []string{"tuesday", "straße", "x"}},
		{"UPPER", 1, []string{"monday"}, true, []string{"MONDAY", "TUESDAY", "MONDAY", "STRAßE", "X"}}, // simple case mapping, as towupper
		{"UPPER", 1, []string{"Monday", "MONDAY"}, false, []string{"TUESDAY", "STRAßE", "X"}},
		{"NONE", 0, []string{"MONDAY", "TUESDAY", "STRASSE", "X", "straße"}, true, []string{""}},
	} {
		x := &Tensor{}
		if c.twoD {
			x.Resize(String, 1, len(in))
		} else {
			x.Resize(String, len(in))
		}
		copy(x.Str(), in)
		n := &Node{Op: "StringNormalizer", Version: 10, Attrs: Attrs{"case_change_action": c.action, "is_case_sensitive": c.sensitive, "stopwords": c.stop}, In: []*Tensor{x}, Out: []*Tensor{{}}}
		miscRun(t, StringNormalizer, n)
		got := n.Out[0]
		wantShape := []int{len(c.want)}
		if c.twoD {
			wantShape = []int{1, len(c.want)}
		}
		if !slices.Equal(got.Shape, wantShape) || strings.Join(got.Str(), "|") != strings.Join(c.want, "|") {
			t.Errorf("%+v: got %v %q", c, got.Shape, got.Str())
		}
	}
}

func TestTfIdfVectorizer(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for trial := 0; trial < 40; trial++ {
		// A pool of unigrams, bigrams and trigrams over tokens 0..5.
		var pool []int64
		var counts []int64
		var grams [][]int64
		for size := 1; size <= 3; size++ {
			counts = append(counts, int64(len(pool)))
			seen := map[[3]int64]bool{}
			for k := 0; k < 4; k++ {
				var g [3]int64
				for j := 0; j < size; j++ {
					g[j] = int64(r.Intn(6))
				}
				if seen[g] {
					continue
				}
				seen[g] = true
				pool = append(pool, g[:size]...)
				grams = append(grams, append([]int64(nil), g[:size]...))
			}
		}
		idx := r.Perm(len(grams))
		indexes := make([]int64, len(grams))
		weights := make([]float32, len(grams))
		for i := range indexes {
			indexes[i] = int64(idx[i])
			weights[i] = float32(0.5 + r.Float64())
		}
		minN, maxN, maxSkip := 1+r.Intn(2), 2+r.Intn(2), r.Intn(3)
		mode := []string{"TF", "IDF", "TFIDF"}[trial%3]
		B, L := 3, 11
		xs := make([]int32, B*L)
		for i := range xs {
			xs[i] = int32(r.Intn(6))
		}
		n := &Node{Op: "TfIdfVectorizer", Version: 9, Attrs: Attrs{"min_gram_length": int64(minN), "max_gram_length": int64(maxN),
			"max_skip_count": int64(maxSkip), "mode": mode, "ngram_counts": counts, "ngram_indexes": indexes, "pool_int64s": pool, "weights": weights},
			In: []*Tensor{miscTensorI32(xs, B, L)}, Out: []*Tensor{{}}}
		miscRun(t, TfIdfVectorizer, n)
		// Reference: every (start, skip, size) n-gram compared with every pool entry.
		width := len(grams)
		want := make([]float64, B*width)
		for b := 0; b < B; b++ {
			cnt := make([]float64, width)
			for g, gram := range grams {
				size := len(gram)
				if size < minN || size > maxN {
					continue
				}
				for skip := 0; skip <= maxSkip; skip++ {
					if size == 1 && skip > 0 {
						break
					}
					for start := 0; start+(size-1)*(skip+1) < L; start++ {
						ok := true
						for j := 0; j < size; j++ {
							if int64(xs[b*L+start+j*(skip+1)]) != gram[j] {
								ok = false
							}
						}
						if ok {
							cnt[indexes[g]]++
						}
					}
				}
			}
			for j, c := range cnt {
				w := float64(weights[j])
				switch mode {
				case "TF":
					want[b*width+j] = c
				case "IDF":
					if c > 0 {
						want[b*width+j] = w
					}
				case "TFIDF":
					want[b*width+j] = c * w
				}
			}
		}
		miscCheckClose(t, "TfIdfVectorizer "+mode, n.Out[0], want, []int{B, width}, 1e-6)
		miscNoAllocs(t, n, TfIdfVectorizer)
	}
}
