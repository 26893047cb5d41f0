package templates

func init() {
	register("Gemm", Gemm)
	register("MatMul", MatMul)
}

func init() {
	register("Conv", Conv)
	register("ConvTranspose", ConvTranspose)
}
