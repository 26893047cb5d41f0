package ir

// Operators of the ai.onnx.preview domain (opset 1, ONNX 1.22):
// FlexAttention, whose kernel lives in templates/k_attention_onnx.go under
// "ai.onnx.preview::FlexAttention".

// PreviewDomain is the domain of ONNX's preview operators.
const PreviewDomain = "ai.onnx.preview"

var previewOpDefs = []opDef{
	{"FlexAttention", "1", "Q:T K:T V:T", "Y:T", "T=$fb",
		"mask_mod:graph prob_mod:graph scale:float score_mod:graph", "",
		"Scaled dot-product attention with optional score, mask and probability subgraphs (the subgraphs are not supported yet).", nil},
}

func init() {
	for _, d := range previewOpDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		s.Domain = PreviewDomain
		register(s)
	}
}
