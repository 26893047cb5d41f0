package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

// testDirs returns every folder under root that holds a model.onnx, keyed
// by name: the folder's path relative to root.
func testDirs(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "model.onnx")); err == nil {
			rel, err := filepath.Rel(root, path)
			if err != nil || rel == "." {
				rel = filepath.Base(path)
			}
			out[filepath.ToSlash(rel)] = path
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// conformanceTest is one ONNX test folder and its outcome.
type conformanceTest struct {
	item
	test           string // the folder's name, e.g. test_abs
	suite          string // the suite's label, e.g. onnx-tests-1.22/node
	dir            string
	maxAbs, maxRel float64
	reason         string
	passed         bool
	// same is the earlier test (of another suite) whose folder holds
	// byte-identical files: this one is not built again and takes its
	// outcome.
	same *conformanceTest
}

// suiteLabel names a suite by its last two path elements
// (".../onnx-tests-1.22/node" is "onnx-tests-1.22/node"), so that two
// releases' node suites stay apart in lists and reports.
func suiteLabel(root string) string {
	root = filepath.Clean(root)
	return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(root)), filepath.Base(root)))
}

// listed looks a test up in a skip or xfail list: an entry
// "SUITE/test_x" (SUITE as suiteLabel prints it) names one suite's test,
// a bare "test_x" the test of that name in every suite.
func listed[V any](list map[string]V, t *conformanceTest) (V, bool) {
	if v, ok := list[t.suite+"/"+t.test]; ok {
		return v, true
	}
	v, ok := list[t.test]
	return v, ok
}

// folderDigest hashes every file under dir (relative paths and contents),
// so tests shipped unchanged by two releases are recognised.
func folderDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func cmdConformance(args []string, stdout io.Writer) error {
	fs := newFlags("conformance")
	report := fs.String("report", "", "write a markdown report to this file")
	runRE := fs.String("run", "", "only tests whose name matches this regexp")
	rtol := fs.Float64("rtol", 1e-3, "relative tolerance")
	atol := fs.Float64("atol", 1e-7, "absolute tolerance")
	xfailFile := fs.String("xfail", "", "file listing tests expected to fail (one name per line, # comments): they do not fail the run")
	skipFile := fs.String("skip", "", "file listing tests that cannot pass by their nature (one name per line, then # and the reason): reported as skipped, not run")
	var winograd winogradFlag
	fs.Var(&winograd, "winograd", winogradUsage)
	var pf pipelineFlags
	pf.precisionFlags(fs)
	targetFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	mode, err := passes.ParsePrecision(pf.precision)
	if err != nil {
		return usagef("%v", err)
	}
	// One -keep-f32 list over every test model: an entry that names
	// nothing in one is no error there.
	var prec *passes.PrecisionConfig
	if keep := splitList(pf.keepF32); mode != "" || len(keep) > 0 {
		prec = &passes.PrecisionConfig{Mode: mode, KeepF32: keep, KeepAnywhere: true}
	}
	xfail := map[string]string{}
	if *xfailFile != "" {
		var err error
		if xfail, err = readTestList(*xfailFile, false); err != nil {
			return err
		}
	}
	skipList := map[string]string{}
	if *skipFile != "" {
		var err error
		if skipList, err = readTestList(*skipFile, true); err != nil {
			return err
		}
	}
	if fs.NArg() == 0 {
		return usagef("give at least one folder of tests")
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		var err error
		if filter, err = regexp.Compile(*runRE); err != nil {
			return usagef("-run: %v", err)
		}
	}
	var tests []*conformanceTest
	byDigest := map[string]*conformanceTest{}
	for _, root := range fs.Args() {
		dirs, err := testDirs(root)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(dirs))
		for name := range dirs {
			names = append(names, name)
		}
		sort.Strings(names)
		suite := suiteLabel(root)
		for _, name := range names {
			if filter != nil && !filter.MatchString(name) {
				continue
			}
			t := &conformanceTest{item: item{name: suite + "/" + name}, test: name, suite: suite, dir: dirs[name]}
			digest, err := folderDigest(t.dir)
			if err != nil {
				return err
			}
			if prev := byDigest[digest]; prev != nil {
				t.same = prev
			} else {
				byDigest[digest] = t
			}
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return fmt.Errorf("no tests (folders with model.onnx) found")
	}

	var items []*item
	for _, t := range tests {
		switch why, skipped := listed(skipList, t); {
		case skipped:
			t.skip = "skip list: " + why
		case t.same != nil:
			continue // judged from t.same
		default:
			prepareTest(t, winograd.mode, prec)
		}
		items = append(items, &t.item)
	}
	if err := runItems(context.Background(), items, 0); err != nil {
		return err
	}
	passedN, failedN, skippedN, unexpected := 0, 0, 0, 0
	var nowPass []string
	for _, t := range tests {
		if t.same != nil && t.skip == "" {
			t.passed, t.maxAbs, t.maxRel, t.reason = t.same.passed, t.same.maxAbs, t.same.maxRel, t.same.reason
			t.skip = t.same.skip
			if t.reason == "" {
				t.reason = "same files as " + t.same.name + ": not built again"
			} else {
				t.reason += " (same files as " + t.same.name + ")"
			}
		} else {
			judge(t, *rtol, *atol)
		}
		_, expectFail := listed(xfail, t)
		switch {
		case t.skip != "":
			skippedN++
			fmt.Fprintf(stdout, "SKIP %s: %s\n", t.name, t.skip)
		case t.passed:
			passedN++
			if expectFail {
				nowPass = append(nowPass, t.name)
			}
		default:
			failedN++
			if !expectFail {
				unexpected++
			}
			fmt.Fprintf(stdout, "FAIL %s: %s\n", t.name, t.reason)
		}
	}
	if *xfailFile != "" {
		fmt.Fprintf(stdout, "%d failures not listed in %s\n", unexpected, *xfailFile)
		if len(nowPass) > 0 {
			fmt.Fprintf(stdout, "listed in %s but now passing (remove them): %s\n", *xfailFile, strings.Join(nowPass, " "))
		}
	}
	if *report != "" {
		if err := writeReport(*report, tests, *rtol, *atol); err != nil {
			return err
		}
	}
	if suites := suiteCounts(tests); len(suites) > 1 {
		for _, c := range suites {
			fmt.Fprintf(stdout, "%s: %d passed, %d failed, %d skipped\n", c.suite, c.pass, c.fail, c.skip)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", passedN, failedN, skippedN)
	if failedN > 0 && (*xfailFile == "" || unexpected > 0) {
		return errSilent
	}
	return nil
}

// readTestList reads a list of test names, one a line, each optionally
// followed by # and a comment (blank lines and lines starting with # are
// ignored). It maps each name to its comment; needReason makes an empty
// comment an error (a skip must say why).
func readTestList(path string, needReason bool) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		name, why, _ := strings.Cut(line, "#")
		name, why = strings.TrimSpace(name), strings.TrimSpace(why)
		if name == "" {
			continue
		}
		if needReason && why == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason (name # reason)", path, i+1, name)
		}
		out[name] = why
	}
	return out, nil
}

// errSilent ends the command with status 1 when the output already said
// why.
var errSilent = errors.New("")

// prepareTest imports and compiles a test's model (Winograd as wino says)
// and reads its data.
func prepareTest(t *conformanceTest, wino passes.WinogradMode, prec *passes.PrecisionConfig) {
	defer func() {
		if r := recover(); r != nil {
			t.err = fmt.Errorf("panic: %v", r)
		}
	}()
	m, err := onnx.Load(filepath.Join(t.dir, "model.onnx"))
	if err != nil {
		t.err = fmt.Errorf("import: %v", err)
		return
	}
	var pc *passes.PrecisionConfig
	if prec != nil {
		c := *prec // Breaks are per model
		pc = &c
	}
	if err := passes.Run(m, passes.Options{Winograd: wino, Precision: pc}); err != nil { // a panic is caught above
		t.err = err
		return
	}
	t.model = m
	dirs, err := dataSets(t.dir)
	if err != nil {
		t.err = err
		return
	}
	for _, dir := range dirs {
		if countFiles(dir, "input") == 0 && countFiles(dir, "output") == 0 {
			continue // not a data set
		}
		ds, err := readDataSet(dir, m, true)
		var skip skipError
		if errors.As(err, &skip) {
			t.skip = skip.reason
			return
		}
		if err != nil {
			t.err = err
			return
		}
		t.sets = append(t.sets, ds)
	}
	if len(t.sets) == 0 {
		t.skip = "no test data"
	}
}

// judge compares a test's outputs with the references.
func judge(t *conformanceTest, rtol, atol float64) {
	if t.skip != "" {
		t.reason = t.skip
		return
	}
	if t.err != nil {
		t.reason = oneLine(t.err.Error())
		return
	}
	t.passed = true
	for s, ds := range t.sets {
		if t.runErr[s] != "" {
			t.passed = false
			t.reason = oneLine(t.runErr[s])
			return
		}
		for k, want := range ds.outputs {
			if k >= len(t.got[s]) {
				t.passed = false
				t.reason = fmt.Sprintf("output %d missing", k)
				return
			}
			d, err := compareData(t.got[s][k], want, rtol, atol)
			if err != nil {
				t.passed = false
				t.reason = fmt.Sprintf("output %d: %v", k, err)
				return
			}
			t.maxAbs = math.Max(t.maxAbs, d.maxAbs)
			t.maxRel = math.Max(t.maxRel, d.maxRel)
			if d.bad > 0 && t.passed {
				t.passed = false
				t.reason = fmt.Sprintf("output %d: %d of %d elements off (max abs %.3g, max rel %.3g), first: %s", k, d.bad, d.n, d.maxAbs, d.maxRel, d.first)
			}
		}
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func writeReport(path string, tests []*conformanceTest, rtol, atol float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# cuvil conformance\n\nGenerated by `cuvil conformance -report`. Tolerance: |got-want| <= %g + %g*|want|.\n\n", atol, rtol)
	// One summary line per suite, so the counts are readable without
	// scrolling the table.
	suites := suiteCounts(tests)
	suiteOf := func(t *conformanceTest) string { return t.suite }
	fmt.Fprintln(&b, "| suite | passed | failed | skipped |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	for _, c := range suites {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", c.suite, c.pass, c.fail, c.skip)
	}
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "| suite | test | result | max abs | max rel | reason |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, t := range tests {
		result, abs, rel := "FAIL", "", ""
		switch {
		case t.skip != "":
			result = "skip"
		case t.passed:
			result = "pass"
		}
		if t.err == nil && t.skip == "" && (t.got != nil || t.same != nil && t.same.got != nil) {
			abs, rel = fmt.Sprintf("%.3g", t.maxAbs), fmt.Sprintf("%.3g", t.maxRel)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", suiteOf(t), cell(t.test), result, abs, rel, cell(t.reason))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// suiteCount is one suite's tally.
type suiteCount struct {
	suite            string
	pass, fail, skip int
}

// suiteCounts tallies the judged tests per suite, in the order the suites
// were given.
func suiteCounts(tests []*conformanceTest) []*suiteCount {
	var out []*suiteCount
	by := map[string]*suiteCount{}
	for _, t := range tests {
		c := by[t.suite]
		if c == nil {
			c = &suiteCount{suite: t.suite}
			by[t.suite] = c
			out = append(out, c)
		}
		switch {
		case t.skip != "":
			c.skip++
		case t.passed:
			c.pass++
		default:
			c.fail++
		}
	}
	return out
}
