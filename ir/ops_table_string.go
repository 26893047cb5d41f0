package ir

// The ai.onnx string operators of opset 20 (kept apart from ops_table.go's
// alphabetical list only to keep merges quiet; the rows are ai.onnx ones).
var stringOpDefs = []opDef{
	{"RegexFullMatch", "20", "X:T1", "Y:T2", "T1=string T2=bool", "pattern:string", "ew",
		"Whether each string fully matches an RE2 pattern.", nil},
	{"StringConcat", "20", "X:T Y:T", "Z:T", "T=string", "", "ew",
		"Concatenates strings with multidirectional broadcasting.", nil},
	{"StringSplit", "20", "X:T1", "Y:T2 Z:T3", "T1=string T2=string T3=i64", "delimiter:string maxsplit:int", "",
		"Splits each string at a delimiter (or whitespace runs), padding to the longest split.", nil},
}

func init() {
	for _, d := range stringOpDefs {
		s, err := parseOpDef(d)
		if err != nil {
			panic(err)
		}
		register(s)
	}
}
