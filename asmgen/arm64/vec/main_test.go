package main

import (
	"testing"

	"github.com/cuvil/cuvil/asmgen/internal/genfresh"
)

// TestGeneratedUpToDate: templates/asm_vec_arm64.{s,go} are what this
// generator writes now.
func TestGeneratedUpToDate(t *testing.T) { genfresh.Check(t, "asm_vec_arm64") }
