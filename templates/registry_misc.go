package templates

func init() {
	register("LSTM", LSTM)
	register("GRU", GRU)
	register("RNN", RNN)
}
