package templates

func init() {
	register("cuvil::FusedConv", FusedConv)
	register("cuvil::FusedConvChain", FusedConvChain)
	register("cuvil::FusedGemm", FusedGemm)
	register("cuvil::FusedMatMul", FusedMatMul)
	register("cuvil::Gelu", Gelu)
	register("cuvil::LayerNorm", CuvilLayerNorm)
	register("cuvil::SkipLayerNorm", SkipLayerNorm)
	register("cuvil::ScaleShift", ScaleShift)
	register("cuvil::PoolNHWC", PoolNHWC)
	register("cuvil::Attention", CuvilAttention)
	register("cuvil::Elementwise", CuvilElementwise)
}
