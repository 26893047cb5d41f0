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

func init() {
	register("Softmax", Softmax)
	register("LogSoftmax", LogSoftmax)
	register("Hardmax", Hardmax)
	register("ReduceSum", ReduceSum)
	register("ReduceMean", ReduceMean)
	register("ReduceMax", ReduceMax)
	register("ReduceMin", ReduceMin)
	register("ReduceProd", ReduceProd)
	register("ReduceL1", ReduceL1)
	register("ReduceL2", ReduceL2)
	register("ReduceLogSum", ReduceLogSum)
	register("ReduceLogSumExp", ReduceLogSumExp)
	register("ReduceSumSquare", ReduceSumSquare)
	register("ArgMax", ArgMax)
	register("ArgMin", ArgMin)
}

func init() {
	register("BatchNormalization", BatchNormalization)
	register("InstanceNormalization", InstanceNormalization)
	register("GroupNormalization", GroupNormalization)
	register("LayerNormalization", LayerNormalization)
	register("LRN", LRN)
	register("LpNormalization", LpNormalization)
	register("MeanVarianceNormalization", MeanVarianceNormalization)
}
