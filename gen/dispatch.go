package gen

import (
	"fmt"
	"strings"
)

// neonDispatchFile is the name of the arm64 dispatch test gen adds to a
// package whose copied kernels have NEON versions.
const neonDispatchFile = "dispatch_arm64_test.go"

// neonDispatchChecks pairs an arm64 dispatch file of templates/ with the
// condition under which its kernels take the NEON assembly, and what the
// failure message calls them. A generated package that holds the file
// gets the check in neonDispatchFile.
var neonDispatchChecks = []struct{ file, cond, what string }{
	{"k_gemm_sgemm_arm64.go", "sgemmUseAsm", "the SGEMM micro-kernels"},
	{"k_conv_nhwc_pw_arm64.go", "nhwcPWFast", "the NHWC pointwise tiles"},
	{"k_conv_winograd_nhwc_arm64.go", "wnNEON(2) && wnNEON(4)", "the NHWC Winograd transforms"},
	{"k_elem_act_arm64.go", "actNEON", "the activation rows (sigmoid, exp, tanh...)"},
}

// neonDispatchTest returns the test file (build tags arm64 && !purego)
// that fails when the package's kernels fell back to their Go twins on a
// CPU with ASIMD, or nil when no copied file has a NEON version. Under
// qemu-aarch64-static (make arm64) it shows that a generated package, not
// only templates/, runs the NEON kernels.
func neonDispatchTest(out map[string][]byte, pkg, header string) []byte {
	if _, ok := out["k_cpu_arm64.go"]; !ok {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n//go:build arm64 && !purego\n\npackage %s\n\nimport \"testing\"\n\n", header, pkg)
	b.WriteString("// TestNEONDispatch fails when this package's kernels fell back to their\n")
	b.WriteString("// Go twins although the CPU has ASIMD (every arm64 core has it).\n")
	b.WriteString("func TestNEONDispatch(t *testing.T) {\n")
	b.WriteString("\tif !cpuHasASIMD {\n\t\tt.Fatalf(\"no ASIMD detected (hwcap %#x, known %v)\", cpuHWCap, cpuHWCapKnown)\n\t}\n")
	n := 0
	for _, c := range neonDispatchChecks {
		if _, ok := out[c.file]; !ok {
			continue
		}
		n++
		fmt.Fprintf(&b, "\tif !(%s) {\n\t\tt.Errorf(%q)\n\t}\n", c.cond, c.what+" fell back to Go although ASIMD is present")
	}
	fmt.Fprintf(&b, "\tt.Logf(\"%d kernel families on NEON\")\n}\n", n)
	return []byte(b.String())
}
