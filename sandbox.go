package cuvil

import (
	_ "embed"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// The sandbox: what Compile does with Options.Sandbox and Options.AllowOps
// for models from untrusted sources (docs/hardening.md, "Sandbox").

// Sandbox defaults, used when Options.Sandbox is set and the matching
// limit is left at 0.
const (
	// SandboxMaxDepth bounds subgraph nesting (If, Loop, Scan bodies).
	SandboxMaxDepth = 4
	// SandboxMaxDim bounds every constant dim of every value, declared or
	// inferred (2^24: a 16M-row embedding table passes, a 2^30 dim does
	// not).
	SandboxMaxDim = 1 << 24
)

//go:embed docs/allow-ops.txt
var defaultAllowOps string

// DefaultAllowList is the allow-list -sandbox uses when none is given:
// docs/allow-ops.txt, the ai.onnx ops of plain CNNs and transformers.
func DefaultAllowList() *AllowList {
	a, err := ParseAllowList(defaultAllowOps, "docs/allow-ops.txt")
	if err != nil {
		panic("cuvil: the embedded docs/allow-ops.txt: " + err.Error())
	}
	return a
}

// AllowList says which ops a sandboxed model may use: entries of domain,
// op and an op-version range (ParseAllowList has the format).
type AllowList struct {
	src     string // where it came from, for messages
	entries []allowEntry
}

type allowEntry struct {
	domain, op string // domain "" is ai.onnx; op "*" is every op
	lo, hi     int    // op versions, inclusive; 0 and maxInt: unbounded
}

// String names the list's source.
func (a *AllowList) String() string { return a.src }

// Len is the number of entries.
func (a *AllowList) Len() int { return len(a.entries) }

// ParseAllowList reads an allow-list: one entry per line,
// domain:op[:versions], "#" to the end of a line a comment. Domain
// "ai.onnx" (or empty) is the default ONNX domain; a line without a
// domain (op, or op:versions) names an ai.onnx op; op "*" is every op of
// the domain. versions are op
// versions (the since-version of the op's schema: Relu-6, -13, -14),
// written N, N-M, N- or -M; none means every version. src names the list
// in messages. A list with no entries is an error (it would refuse every
// model).
func ParseAllowList(text, src string) (*AllowList, error) {
	a := &AllowList{src: src}
	for i, line := range strings.Split(text, "\n") {
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e, err := parseAllowEntry(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", src, i+1, err)
		}
		a.entries = append(a.entries, e)
	}
	if len(a.entries) == 0 {
		return nil, fmt.Errorf("%s: the allow-list has no entries", src)
	}
	return a, nil
}

func parseAllowEntry(s string) (allowEntry, error) {
	parts := strings.Split(s, ":")
	if len(parts) == 1 || len(parts) == 2 && strings.IndexAny(strings.TrimSpace(parts[1])+"x", "0123456789-") == 0 {
		parts = append([]string{""}, parts...) // op or op:versions, in ai.onnx
	}
	if len(parts) > 3 {
		return allowEntry{}, fmt.Errorf("%q: want domain:op[:versions]", s)
	}
	e := allowEntry{domain: strings.TrimSpace(parts[0]), op: strings.TrimSpace(parts[1]), hi: int(^uint(0) >> 1)}
	if e.domain == "ai.onnx" {
		e.domain = ""
	}
	if e.op == "" {
		return e, fmt.Errorf("%q: no op", s)
	}
	if e.op != "*" && !validName(e.op) {
		return e, fmt.Errorf("%q: op %q is not a name", s, e.op)
	}
	if e.domain != "" && !validDomain(e.domain) {
		return e, fmt.Errorf("%q: domain %q is not a domain", s, e.domain)
	}
	if len(parts) == 3 {
		v := strings.TrimSpace(parts[2])
		lo, hi, ok := strings.Cut(v, "-")
		num := func(t string) (int, error) {
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("%q: version %q is not a number >= 1", s, t)
			}
			return n, nil
		}
		var err error
		switch {
		case v == "" || (ok && lo == "" && hi == ""):
			return e, fmt.Errorf("%q: empty versions (leave out the second colon for every version)", s)
		case !ok:
			if e.lo, err = num(v); err != nil {
				return e, err
			}
			e.hi = e.lo
		default:
			if lo != "" {
				if e.lo, err = num(lo); err != nil {
					return e, err
				}
			}
			if hi != "" {
				if e.hi, err = num(hi); err != nil {
					return e, err
				}
			}
			if e.lo > e.hi {
				return e, fmt.Errorf("%q: versions %d-%d are an empty range", s, e.lo, e.hi)
			}
		}
	}
	return e, nil
}

func validName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func validDomain(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// LoadAllowList reads an allow-list file (ParseAllowList).
func LoadAllowList(path string) (*AllowList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("allow-list: %w", err)
	}
	return ParseAllowList(string(b), path)
}

// ParseAllowOps reads compile's -allow-ops value: "default" (the
// DefaultAllowList), the path of an allow-list file, or the entries
// themselves separated by commas ("ai.onnx:Conv,ai.onnx:Relu:14-"). A
// value naming an existing file is read as the file.
func ParseAllowOps(v string) (*AllowList, error) {
	if v == "default" {
		return DefaultAllowList(), nil
	}
	if st, err := os.Stat(v); err == nil && !st.IsDir() {
		return LoadAllowList(v)
	}
	if strings.ContainsAny(v, "/\\") || strings.HasSuffix(v, ".txt") {
		return nil, fmt.Errorf("allow-list file %q: not found", v)
	}
	return ParseAllowList(strings.ReplaceAll(v, ",", "\n"), "the -allow-ops list")
}

// Allows reports whether an op of domain ("" or "ai.onnx": the default
// domain) at op version version is on the list.
func (a *AllowList) Allows(domain, op string, version int) bool {
	if domain == "ai.onnx" {
		domain = ""
	}
	for _, e := range a.entries {
		if e.domain == domain && (e.op == "*" || e.op == op) && version >= e.lo && version <= e.hi {
			return true
		}
	}
	return false
}

// opName is an op as allow-lists write it.
func opName(domain, op string, version int) string {
	if domain == "" {
		domain = "ai.onnx"
	}
	return fmt.Sprintf("%s:%s:%d", domain, op, version)
}

// Check walks m's graphs, subgraphs included (model-local functions are
// already inlined by the importer, so their bodies' nodes are checked
// and the calls themselves no longer exist), and refuses the first node
// whose op is not allowed, naming it, where it is and the op with its
// version; the other refused ops are listed after it.
func (a *AllowList) Check(m *ir.Model) error {
	type refusal struct {
		node  *ir.Node
		where string
	}
	var first []refusal
	byOp := map[string]int{}
	var walk func(g *ir.Graph, where string)
	walk = func(g *ir.Graph, where string) {
		for _, n := range g.Nodes {
			if !a.Allows(n.Domain, n.Op, n.Version) {
				k := opName(n.Domain, n.Op, n.Version)
				if byOp[k] == 0 {
					first = append(first, refusal{n, where})
				}
				byOp[k]++
			}
			for _, at := range n.Attrs {
				sub := func(s *ir.Graph, i int) {
					w := fmt.Sprintf("%s attribute %s", n, at.Name)
					if i >= 0 {
						w += fmt.Sprintf("[%d]", i)
					}
					if where != "" {
						w = where + ", " + w
					}
					walk(s, w)
				}
				if at.G != nil {
					sub(at.G, -1)
				}
				for i, s := range at.Graphs {
					sub(s, i)
				}
			}
		}
	}
	walk(m.Graph, "")
	if len(first) == 0 {
		return nil
	}
	r := first[0]
	where := "the main graph"
	if r.where != "" {
		where = "the subgraph of " + r.where
	}
	msg := fmt.Sprintf("%s in %s: op %s is not allowed by %s", r.node, where, opName(r.node.Domain, r.node.Op, r.node.Version), a.src)
	if len(first) > 1 {
		var others []string
		for _, o := range first[1:] {
			others = append(others, opName(o.node.Domain, o.node.Op, o.node.Version))
		}
		sort.Strings(others)
		if len(others) > 10 {
			others = append(others[:10], fmt.Sprintf("and %d more", len(others)-10))
		}
		msg += fmt.Sprintf(" (also refused: %s)", strings.Join(others, ", "))
	}
	return fmt.Errorf("%s", msg)
}

// checkDims refuses any constant dim above max in the declared or
// inferred type of any value of any graph of m, naming the value and the
// node that makes it.
func checkDims(m *ir.Model, max int64) error {
	var err error
	check := func(v *ir.Value, what string) {
		if err != nil || v == nil {
			return
		}
		for t := &v.Type; t != nil; t = t.Elem {
			for i, d := range t.Shape {
				if d.IsConst() && d.Size > max {
					by := ""
					if v.Def != nil {
						by = " made by " + v.Def.String()
					}
					err = fmt.Errorf("%s %q%s: dim %d is %d, above the sandbox's limit of %d (-max-dim)", what, v.Name, by, i, d.Size, max)
					return
				}
			}
		}
		if v.Const != nil {
			for i, d := range v.Const.Shape {
				if d > max {
					err = fmt.Errorf("constant %q: dim %d is %d, above the sandbox's limit of %d (-max-dim)", v.Name, i, d, max)
					return
				}
			}
		}
	}
	m.Graph.Walk(func(g *ir.Graph) {
		for _, v := range g.Inputs {
			check(v, "input")
		}
		for _, v := range g.Consts {
			check(v, "constant")
		}
		for _, n := range g.Nodes {
			for _, v := range n.Outputs {
				check(v, "value")
			}
		}
		for _, v := range g.Outputs {
			check(v, "output")
		}
	})
	return err
}

// OpsAllowList returns an allow-list, in ParseAllowList's format, of
// exactly the ops m uses (subgraphs and inlined function bodies
// included), one domain:op:version per line, sorted: a starting point
// for the list of a model family (cuvil inspect -allow-list).
func OpsAllowList(m *ir.Model) string {
	seen := map[string]bool{}
	m.Graph.Walk(func(g *ir.Graph) {
		for _, n := range g.Nodes {
			seen[opName(n.Domain, n.Op, n.Version)] = true
		}
	})
	lines := make([]string, 0, len(seen))
	for k := range seen {
		lines = append(lines, k)
	}
	sort.Strings(lines)
	var b strings.Builder
	fmt.Fprintf(&b, "# ops of %s (cuvil inspect -allow-list)\n", m.Path)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}
