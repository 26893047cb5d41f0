package ir

// Operators of the ai.onnx.preview.training domain (opset 1, ONNX 1.12):
// the optimizers, whose kernels live in templates/k_train.go under
// "ai.onnx.preview.training::<Op>", and Gradient, which has no kernel: the
// gradient pass (passes/gradient.go) rewrites it into ordinary nodes.

// TrainingDomain is the domain of ONNX's preview training operators.
const TrainingDomain = "ai.onnx.preview.training"

// The variadic inputs are groups of equal length (X..., G..., then the
// optimizer's state), and the outputs the updated X... and state; the
// kernels check the counts.
var trainingOpDefs = []opDef{
	// Inputs are the values named by xs then zs (the forward graph reads
	// them, Gradient only pins them); outputs are dy/dx for each of xs.
	{"Gradient", "1", "Inputs:T1[]", "Outputs:T2[]", "T1=$all T2=$f",
		"xs:strings! y:string! zs:strings", "",
		"Partial derivatives of y with respect to xs (rewritten away at compile time).", nil},
	{"Adagrad", "1", "R:T1 T:T2 inputs:T3...", "outputs:T3...", "T1=f32,f64 T2=i64 T3=f32,f64",
		"decay_factor:float=0 epsilon:float=1e-06 norm_coefficient:float=0", "",
		"ADAGRAD step: inputs X..., G..., H...; outputs X_new..., H_new....", nil},
	{"Adam", "1", "R:T1 T:T2 inputs:T3...", "outputs:T3...", "T1=f32,f64 T2=i64 T3=f32,f64",
		"alpha:float=0.9 beta:float=0.999 epsilon:float=1e-06 norm_coefficient:float=0 norm_coefficient_post:float=0", "",
		"Adam step: inputs X..., G..., V..., H...; outputs X_new..., V_new..., H_new....", nil},
	{"Momentum", "1", "R:T1 T:T2 inputs:T3...", "outputs:T3...", "T1=f32,f64 T2=i64 T3=f32,f64",
		"alpha:float! beta:float! mode:string! norm_coefficient:float!", "",
		"SG with momentum (mode standard or nesterov): inputs X..., G..., V...; outputs X_new..., V_new....", nil},
}

func init() {
	for _, d := range trainingOpDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		s.Domain = TrainingDomain
		register(s)
	}
}
