//go:build !amd64 || purego

package templates

// gemvRowsDirect: no amd64 assembly here, so nothing besides gemvRows32.
func gemvRowsDirect(y0, x, a []float32, lda int) [][]float32 { return nil }
