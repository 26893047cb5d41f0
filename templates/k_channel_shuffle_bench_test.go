package templates

import "testing"

// BenchmarkChannelShuffle times cuvil::ChannelShuffle on ShuffleNet v2's
// stage-3 map (116+116 channels at 14x14), NCHW and NHWC.
func BenchmarkChannelShuffle(b *testing.B) {
	for _, tc := range []struct {
		name  string
		shape []int
		axis  int64
	}{{"NCHW", []int{1, 232, 14, 14}, 1}, {"NHWC", []int{1, 14, 14, 232}, 3}} {
		b.Run(tc.name, func(b *testing.B) {
			x := &Tensor{}
			x.Resize(F32, tc.shape...)
			n := &Node{Name: "t", Op: "ChannelShuffle", Version: 1, Attrs: Attrs{"axis": tc.axis, "groups": int64(2)}, In: []*Tensor{x}, Out: []*Tensor{{}}}
			b.SetBytes(int64(4 * x.Len()))
			for i := 0; i < b.N; i++ {
				if err := CuvilChannelShuffle(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
