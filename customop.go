package cuvil

import (
	"fmt"
	"go/types"
	"path/filepath"
	"strings"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/ir"

	"golang.org/x/tools/go/packages"
)

// OpSignature describes what a custom op's Go function must accept.
type OpSignature struct {
	Key         string // "domain::Type", the -op flag's left side
	Text        string // stable text: com.acme::FastGelu(f32) -> (f32) {alpha: float}
	Hash        string // hash of Text
	GoSignature string // func(x0 []float32, x0Shape []int, ..., y0 *[]float32, y0Shape *[]int) error
}

// CustomOps loads a model and returns the signatures of the ops it uses
// that need custom kernels (what `cuvil inspect -ops` prints).
func CustomOps(modelPath string) ([]OpSignature, error) {
	m, _, err := Load(Options{Model: modelPath})
	if err != nil {
		return nil, err
	}
	sigs, err := gen.CustomSignatures(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	out := make([]OpSignature, len(sigs))
	for i, s := range sigs {
		out[i] = OpSignature{Key: s.Key(), Text: s.String(), Hash: s.Hash(), GoSignature: s.GoSignature()}
	}
	return out, nil
}

// resolveOps checks every registered function against the signatures of
// the model's nodes of its op, loading the function's package with
// go/packages from dir (the output folder, so the user's module resolves
// the import path).
func resolveOps(m *ir.Model, ops []Op, dir string) ([]gen.CustomOp, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	sigs, err := gen.CustomSignatures(m)
	if err != nil {
		return nil, err
	}
	byKey := map[string][]gen.OpSignature{}
	for _, s := range sigs {
		byKey[s.Key()] = append(byKey[s.Key()], s)
	}
	var out []gen.CustomOp
	paths := map[string]bool{}
	var pathList []string
	for _, o := range ops {
		path, _, err := o.split()
		if err != nil {
			return nil, err
		}
		if !paths[path] {
			paths[path] = true
			pathList = append(pathList, path)
		}
	}
	pkgs, err := loadPackages(dir, pathList)
	if err != nil {
		return nil, err
	}
	for _, o := range ops {
		path, name, _ := o.split()
		key := o.Domain + "::" + o.Type
		if o.Domain == "" || o.Domain == "ai.onnx" {
			key = "ai.onnx::" + o.Type
		}
		pkg := pkgs[path]
		obj := pkg.Types.Scope().Lookup(name)
		fn, ok := obj.(*types.Func)
		if !ok || !obj.Exported() {
			return nil, fmt.Errorf("custom op %s: %s has no exported function %s", key, path, name)
		}
		have := fn.Type().(*types.Signature)
		for _, s := range byKey[key] {
			if err := matchSignature(have, s); err != nil {
				return nil, fmt.Errorf("custom op %s: function %s.%s has type %s, but signature %s [%s] needs %s (%v)",
					key, path, name, types.TypeString(have, nil), s, s.Hash(), s.GoSignature(), err)
			}
		}
		out = append(out, gen.CustomOp{Domain: o.Domain, Op: o.Type, Path: path, Func: name})
	}
	return out, nil
}

// matchSignature compares a Go function's parameters with the op's.
func matchSignature(have *types.Signature, s gen.OpSignature) error {
	want := s.GoParams()
	if have.Recv() != nil || have.TypeParams().Len() > 0 || have.Variadic() {
		return fmt.Errorf("want a plain function")
	}
	if have.Params().Len() != len(want) {
		return fmt.Errorf("%d parameters, want %d", have.Params().Len(), len(want))
	}
	for i, w := range want {
		p := have.Params().At(i)
		if got := types.TypeString(p.Type(), nil); got != w.Type {
			return fmt.Errorf("parameter %d (%s) is %s, want %s (%s)", i+1, p.Name(), got, w.Type, w.Name)
		}
	}
	res := have.Results()
	if res.Len() != 1 || types.TypeString(res.At(0).Type(), nil) != "error" {
		return fmt.Errorf("want a single error result")
	}
	return nil
}

func loadPackages(dir string, paths []string) (map[string]*packages.Package, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The output folder may not exist yet: load from its nearest parent.
	for !isDir(abs) {
		parent := filepath.Dir(abs)
		if parent == abs {
			break
		}
		abs = parent
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: abs}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, fmt.Errorf("custom ops: loading %s: %v", strings.Join(paths, ", "), err)
	}
	out := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("custom ops: package %s: %v", p.PkgPath, p.Errors[0])
		}
		out[p.PkgPath] = p
	}
	for _, path := range paths {
		if out[path] == nil || out[path].Types == nil {
			return nil, fmt.Errorf("custom ops: package %s not found from %s", path, abs)
		}
	}
	return out, nil
}
