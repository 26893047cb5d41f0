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
