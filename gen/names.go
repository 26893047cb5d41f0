package gen

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"

	"github.com/cuvil/cuvil/ir"
)

// goName turns an ONNX name ("input_ids", "log-probs", "0") into an exported
// Go identifier ("InputIDs", "LogProbs", "X0"). Runs of characters that are
// not letters or digits separate words; each word is capitalised.
func goName(s string) string {
	var b strings.Builder
	upperNext := true
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r)) || r > unicode.MaxASCII {
			upperNext = true
			continue
		}
		if upperNext {
			r = unicode.ToUpper(r)
			upperNext = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	for _, ini := range []string{"Id", "Ids"} {
		if strings.HasSuffix(out, ini) && len(out) > len(ini) {
			out = out[:len(out)-len(ini)] + strings.ToUpper(ini[:2]) + ini[2:]
		}
	}
	if out == "" || unicode.IsDigit(rune(out[0])) {
		out = "X" + out
	}
	return out
}

// FieldNames returns the Go field names a generated package gives values
// of these names in its Input and Output structs (what uniqueNames makes).
func FieldNames(names []string) []string { return uniqueNames(names) }

// uniqueNames Go-ifies a list of names, appending a number to later
// duplicates so every field is distinct.
func uniqueNames(names []string) []string {
	used := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		g := goName(n)
		base := g
		for k := 2; used[g]; k++ {
			g = base + strconv.Itoa(k)
		}
		used[g] = true
		out[i] = g
	}
	return out
}

// validPackageName reports whether name can be a Go package name.
func validPackageName(name string) bool {
	if name == "" || name == "main" || token.IsKeyword(name) || !token.IsIdentifier(name) {
		return false
	}
	return name != "_"
}

// commentText makes a string safe to put in a // or # comment on one
// line: control characters (a carriage return ends a line for Python) and
// the Unicode line breaks become spaces, so a model's file name or
// producer cannot start a line of code in a generated file.
func commentText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
}

// ElemDType is the dtype of the innermost tensors of a value of type t
// (tensor, sequence or optional, nested), Undefined when not known.
func ElemDType(t ir.Type) ir.DType {
	for i := 0; i <= maxElemNesting; i++ {
		if t.Kind == ir.TensorKind {
			return t.DType
		}
		if t.Elem == nil {
			break
		}
		t = *t.Elem
	}
	return ir.Undefined
}

// maxElemNesting bounds how deep ElemDType follows sequences and optionals.
const maxElemNesting = 16
