package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestRewriteGolden runs each canonicalisation, folding and fusion pass
// (then DCE, which drops what the pass left dead) on its txtar files;
// irtest verifies every result.
func TestRewriteGolden(t *testing.T) {
	for _, p := range []*Pass{RemoveIdentity, CanonOps, FoldPad, CSE, FoldReshape, FoldTranspose, FuseChannelShuffle, FuseActivation, FoldBatchNorm, FoldAffine, TrimConvTaps, ConvTransposeAsConv, FuseGelu, FuseLayerNorm, FuseAttention, FuseConv, FuseGemm, FuseScaleShift, FuseQuant, Layout, FuseConvChain, ConcatInto, FuseSEGate, FuseElementwise, WidenHalf} {
		t.Run(p.Name, func(t *testing.T) {
			irtest.Golden(t, "testdata/"+p.Name+"/*.txtar", func(m *ir.Model) error {
				if err := p.Run(m); err != nil {
					return err
				}
				return DCE.Run(m)
			})
		})
	}
}
