package templates

func init() {
	register("Attention", Attention)
	register("LinearAttention", LinearAttention)
	register("RotaryEmbedding", RotaryEmbedding)
	register("RMSNormalization", RMSNormalization)
	register("TensorScatter", TensorScatter)
	register("CausalConvWithState", CausalConvWithState)
	register("ai.onnx.preview::FlexAttention", FlexAttention)
}
