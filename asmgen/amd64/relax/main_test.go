package main

import (
	"testing"

	"github.com/cuvil/cuvil/asmgen/internal/genfresh"
)

// TestGeneratedUpToDate: the committed templates/rt_relax_amd64.{s,go} are
// what this generator writes (a change to it must come with its go generate).
func TestGeneratedUpToDate(t *testing.T) { genfresh.Check(t, "rt_relax_amd64") }
