//go:build !amd64 || purego

package templates

// The max-pooling kernels without assembly: their pure-Go twins (k_pool.go).

func maxRows(dst, r0, r1, r2 []float32) { maxRowsGo(dst, r0, r1, r2) }

func maxCols(y, x []float32, k, s int) int {
	maxColsGo(y, x, k, s)
	return len(y)
}
