package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBenchProfile runs bench -profile on real models and checks the
// tables' consistency (no timing assertions): one line per node, times not
// negative, the per-op table covering every node once, the shares of the
// wall time adding up to at most 100% (the nodes' times to at most the
// runs' wall time).
func TestBenchProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	models := []string{mnist + "/model.onnx"}
	shared := "../../../shared/models"
	for _, m := range []string{"lstm_small_op13", "squeezenet1_1_op13"} {
		models = append(models, filepath.Join(shared, m, "model.onnx"))
	}
	for _, m := range models {
		if _, err := os.Stat(m); err != nil {
			continue // the shared models are not on this machine
		}
		code, stdout, stderr := cuvil(t, "bench", "-model", m, "-threads", "2", "-runs", "3", "-warmup", "1", "-profile", "-top", "1000")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", m, code, stdout, stderr)
		}
		nodes, byOp, sumPct := parseProfile(t, stdout)
		// Each share is rounded to 0.05%.
		if nodes[0] == 0 || nodes[0] != byOp || sumPct > 100+0.05*float64(nodes[1]) {
			t.Errorf("%s: header says %d nodes, %d node lines, per-op tables count %d nodes, shares add up to %.1f%%\n%s",
				m, nodes[0], nodes[1], byOp, sumPct, stdout)
		}
	}
}

// parseProfile returns [nodes in the header, node lines], the node count of
// the per-op table and the sum of the node lines' shares.
func parseProfile(t *testing.T, out string) ([2]int, int, float64) {
	t.Helper()
	_, prof, ok := strings.Cut(out, "\nprofile: ")
	if !ok {
		t.Fatalf("no profile in\n%s", out)
	}
	header, rest, _ := strings.Cut(prof, "\n")
	var counts [2]int
	counts[0], _ = strconv.Atoi(strings.Fields(header)[0])
	nodeTable, opTable, _ := strings.Cut(rest, "\n\n")
	var sumPct float64
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || v < 0 {
			t.Fatalf("bad number %q in\n%s", s, out)
		}
		return v
	}
	for _, line := range strings.Split(strings.TrimSpace(nodeTable), "\n")[1:] {
		f := strings.Fields(line)
		num(f[0])
		sumPct += num(f[1])
		counts[1]++
	}
	byOp := 0
	for _, line := range strings.Split(strings.TrimSpace(opTable), "\n")[1:] {
		f := strings.Fields(line)
		num(f[0])
		num(f[1])
		byOp += int(num(f[2]))
	}
	if counts[0] != counts[1] {
		t.Errorf("header says %d nodes, table lists %d", counts[0], counts[1])
	}
	return counts, byOp, sumPct
}
