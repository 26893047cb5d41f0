package templates

// Losses (k_loss.go), signal processing (k_signal.go), text (k_text.go)
// and the preview training optimizers (k_train.go).

func init() {
	register("ai.onnx.preview.training::Adagrad", Adagrad)
	register("ai.onnx.preview.training::Adam", Adam)
	register("ai.onnx.preview.training::Momentum", Momentum)
}

func init() {
	register("NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss)
	register("SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss)
}

func init() {
	register("DFT", DFT)
	register("STFT", STFT)
	register("HannWindow", HannWindow)
	register("HammingWindow", HammingWindow)
	register("BlackmanWindow", BlackmanWindow)
	register("MelWeightMatrix", MelWeightMatrix)
}

func init() {
	register("StringNormalizer", StringNormalizer)
	register("TfIdfVectorizer", TfIdfVectorizer)
}

func init() {
	register("StringConcat", StringConcat)
	register("StringSplit", StringSplit)
	register("RegexFullMatch", RegexFullMatch)
}
