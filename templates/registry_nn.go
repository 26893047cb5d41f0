package templates

func init() {
	register("Gemm", Gemm)
	register("MatMul", MatMul)
}

func init() {
	register("Conv", Conv)
	register("ConvTranspose", ConvTranspose)
}

func init() {
	register("MaxPool", MaxPool)
	register("AveragePool", AveragePool)
	register("LpPool", LpPool)
	register("GlobalAveragePool", GlobalAveragePool)
	register("GlobalMaxPool", GlobalMaxPool)
	register("GlobalLpPool", GlobalLpPool)
}
