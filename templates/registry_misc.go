package templates

func init() {
	register("LSTM", LSTM)
	register("GRU", GRU)
	register("RNN", RNN)
}

func init() {
	register("Resize", Resize)
	register("Upsample", Upsample)
}

func init() {
	register("QuantizeLinear", QuantizeLinear)
	register("DequantizeLinear", DequantizeLinear)
	register("DynamicQuantizeLinear", DynamicQuantizeLinear)
	register("MatMulInteger", MatMulInteger)
	register("QLinearMatMul", QLinearMatMul)
	register("ConvInteger", ConvInteger)
	register("QLinearConv", QLinearConv)
}

func init() {
	register("TopK", TopK)
	register("Compress", Compress)
	register("ReverseSequence", ReverseSequence)
	register("Unique", Unique)
	register("Shrink", Shrink)
	register("Det", Det)
	register("NonMaxSuppression", NonMaxSuppression)
	register("MaxUnpool", MaxUnpool)
	register("MaxRoiPool", MaxRoiPool)
	register("RoiAlign", RoiAlign)
	register("Einsum", Einsum)
	register("GridSample", GridSample)
}

func init() {
	register("AffineGrid", AffineGrid)
	register("DeformConv", DeformConv)
}

func init() { register("ImageDecoder", ImageDecoder) }
