package templates

import (
	"math/rand"
	"testing"
)

// TestTransposeNHWC checks Transpose's tiled path for the layout
// conversions against the general one (perm [0,2,3,1] and back, rank 4
// float32, odd sizes over the tile).
func TestTransposeNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	X := nnRand(r, 2, 37, 5, 13)
	y := nnRun(t, "Transpose", 13, Attrs{"perm": []int64{0, 2, 3, 1}}, 1, X)[0]
	want := nhwcOf(X, F32)
	nnCheck(t, "to NHWC", y, want.Shape, nnF64(want), 0)
	back := nnRun(t, "Transpose", 13, Attrs{"perm": []int64{0, 3, 1, 2}}, 1, y)[0]
	nnCheck(t, "to NCHW", back, X.Shape, nnF64(X), 0)
}
