package passes

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cuvil/cuvil/ir"
)

// Options control Run.
type Options struct {
	// Verify runs ir.Verify before the first pass and after each one.
	Verify bool
	// Debug maps a pass name to an action: "off", "dump" or "time"
	// (see ParseDebug).
	Debug map[string]string
	// Dump receives the IR printed after passes marked "dump" (os.Stdout
	// when nil).
	Dump io.Writer
	// Log receives timings of passes marked "time" (os.Stderr when nil).
	Log io.Writer
	// Winograd chooses the 3x3 stride-1 convolutions the prepack pass
	// stores Winograd-transformed (prepack_winograd.go): by default
	// (WinogradAuto) the layers its rules pick.
	Winograd WinogradMode
	// Quant, when set, runs the quantize pass with it (quantize.go).
	Quant *QuantConfig
	// Precision, when set, runs the precision pass with it (precision.go);
	// its Breaks collect what it did.
	Precision *PrecisionConfig
	// AfterPass, when set, is called after each pass that ran (cuvil
	// inspect -types reads the types after the precision pass).
	AfterPass func(p *Pass, m *ir.Model)
}

// Debug actions.
const (
	ActionOff  = "off"
	ActionDump = "dump"
	ActionTime = "time"
)

var actions = []string{ActionDump, ActionOff, ActionTime}

// PassNames returns the names of the pipeline's passes, in order.
func PassNames() []string {
	names := make([]string, len(Pipeline))
	for i, p := range Pipeline {
		names[i] = p.Name
	}
	return names
}

// Help describes the passes and the -d syntax, for the command's usage text.
func Help() string {
	var b strings.Builder
	b.WriteString("Passes, in pipeline order (-d=<pass>/<action>[,<pass>/<action>...]; actions: off, dump, time):\n")
	w := 0
	for _, p := range Pipeline {
		w = max(w, len(p.Name))
	}
	for _, p := range Pipeline {
		req := ""
		if p.Required {
			req = " (required)"
		}
		fmt.Fprintf(&b, "  %-*s  %s%s\n", w, p.Name, p.Doc, req)
	}
	return b.String()
}

// ParseDebug parses a -d flag value such as "shapes/dump,dce/off,constfold/time"
// into a map from pass name to action. An empty string gives an empty map.
func ParseDebug(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		name, action, ok := strings.Cut(item, "/")
		if !ok {
			return nil, fmt.Errorf("-d: %q: want <pass>/<action>", item)
		}
		p := findPass(name)
		if p == nil {
			return nil, fmt.Errorf("-d: unknown pass %q (passes: %s)", name, strings.Join(PassNames(), ", "))
		}
		if !validAction(action) {
			return nil, fmt.Errorf("-d: unknown action %q for pass %q (actions: %s)", action, name, strings.Join(actions, ", "))
		}
		if action == ActionOff && p.Required {
			return nil, fmt.Errorf("-d: pass %q is required and cannot be turned off", name)
		}
		if prev, dup := out[name]; dup && prev != action {
			return nil, fmt.Errorf("-d: pass %q given two actions, %q and %q", name, prev, action)
		}
		out[name] = action
	}
	return out, nil
}

func findPass(name string) *Pass {
	for _, p := range Pipeline {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func validAction(a string) bool {
	for _, b := range actions {
		if a == b {
			return true
		}
	}
	return false
}

// Run runs the pipeline on m.
func Run(m *ir.Model, opts Options) error {
	return runPasses(m, Pipeline, opts)
}

func runPasses(m *ir.Model, list []*Pass, opts Options) error {
	// Reject debug settings naming passes that are not in the list, so a
	// caller that builds Options by hand gets the same checks as ParseDebug.
	names := make([]string, 0, len(opts.Debug))
	for name := range opts.Debug {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		action := opts.Debug[name]
		var p *Pass
		for _, q := range list {
			if q.Name == name {
				p = q
			}
		}
		switch {
		case p == nil:
			return fmt.Errorf("debug: unknown pass %q", name)
		case !validAction(action):
			return fmt.Errorf("debug: unknown action %q for pass %q (actions: %s)", action, name, strings.Join(actions, ", "))
		case action == ActionOff && p.Required:
			return fmt.Errorf("debug: pass %q is required and cannot be turned off", name)
		}
	}
	dump, log := opts.Dump, opts.Log
	if dump == nil {
		dump = os.Stdout
	}
	if log == nil {
		log = os.Stderr
	}
	// The imported model is always verified (arity, attribute kinds,
	// required and unknown attributes, dtypes against the op table), so a
	// malformed node is refused naming it instead of being compiled with
	// defaults; -verify adds a check after every pass.
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("invalid model: %w", err)
	}
	if err := checkUnpacked(m); err != nil { // prepack.go
		return fmt.Errorf("invalid model: %w", err)
	}
	for _, p := range list {
		action := opts.Debug[p.Name]
		if action == ActionOff {
			continue
		}
		start := time.Now()
		err := runOne(m, p, opts)
		if action == ActionTime {
			fmt.Fprintf(log, "pass %-12s %v\n", p.Name, time.Since(start).Round(time.Microsecond))
		}
		if err != nil {
			return err
		}
		if opts.Verify {
			if err := ir.Verify(m); err != nil {
				return fmt.Errorf("after pass %q: %w", p.Name, err)
			}
		}
		if action == ActionDump {
			fmt.Fprintf(dump, "# after pass %s\n", p.Name)
			if err := ir.Print(dump, m); err != nil {
				return fmt.Errorf("dumping after pass %q: %w", p.Name, err)
			}
		}
		if opts.AfterPass != nil {
			opts.AfterPass(p, m)
		}
	}
	return nil
}

// runOne runs a pass, turning a panic into an error that names the pass and
// the node the pass was working on.
func runOne(m *ir.Model, p *Pass, opts Options) (err error) {
	c := &cursor{}
	cursors.Store(m, c)
	defer cursors.Delete(m)
	defer func() {
		if r := recover(); r != nil {
			if n := c.node; n != nil {
				err = fmt.Errorf("pass %q: %v: %v", p.Name, n, r)
			} else {
				err = fmt.Errorf("pass %q: %v", p.Name, r)
			}
		}
	}()
	run := p.Run
	if p.WithOptions != nil {
		run = func(m *ir.Model) error { return p.WithOptions(m, opts) }
	}
	if err := run(m); err != nil {
		return fmt.Errorf("pass %q: %w", p.Name, err)
	}
	return nil
}

// A cursor records the node a running pass is working on, so that a panic
// can be reported against it. Passes call at(m, n) as they visit nodes.
type cursor struct {
	node  *ir.Node
	names map[string]bool // modelNames' set, shared by the pass's rewriters
}

var cursors sync.Map // *ir.Model -> *cursor, only while Run runs a pass

// at records that the pass running on m is working on n. It is cheap and
// does nothing when the pass was not started by Run.
func at(m *ir.Model, n *ir.Node) {
	if c, ok := cursors.Load(m); ok {
		c.(*cursor).node = n
	}
}
