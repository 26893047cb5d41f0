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
