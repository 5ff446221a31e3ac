package ndtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// notConformanceOps are nd's exported functions that return arrays but
// are not ops the conformance suite can compare with a reference: random
// draws (checked for their distributions and seeding in random.go and
// nd's own tests), and helpers for writing ops.
var notConformanceOps = map[string]string{
	"Bernoulli":   "random: distribution tests in nd",
	"Categorical": "random: distribution tests in nd",
	"Multinomial": "random: distribution and distinctness tests in nd",
	"Permutation": "random: permutation property tested in nd",
	"RandomInt":   "random: range tests in nd",
	"Pack":        "memory layout (views of one buffer), tested in nd's gradhook tests",
	"PackGrads":   "memory layout (views of one buffer), tested in nd's gradhook tests",
	"WithScope":   "scope helper, not an op",
	"GradWith":    "tape API, not an op: GradGradChecks runs it on every backend",
}

// TestEveryOpHasAConformanceCase lists nd's exported functions that
// return arrays and fails for each one that no conformance case (a conf*
// function or table of this package) calls, so that every op is checked
// on every backend.
func TestEveryOpHasAConformanceCase(t *testing.T) {
	fset := token.NewFileSet()
	ops := map[string]bool{}
	ndFiles, _ := filepath.Glob("../*.go")
	for _, f := range ndFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !fd.Name.IsExported() || fd.Type.Results == nil {
				continue
			}
			for _, r := range fd.Type.Results.List {
				if returnsArrays(r.Type) {
					ops[fd.Name.Name] = true
					break
				}
			}
		}
	}
	used := map[string]bool{}
	here, _ := filepath.Glob("*.go")
	for _, f := range here {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			var name string
			switch d := d.(type) {
			case *ast.FuncDecl:
				name = d.Name.Name
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok && len(vs.Names) > 0 {
						name = vs.Names[0].Name
					}
				}
			}
			if !strings.HasPrefix(name, "conf") {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "nd" {
						used[sel.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	var missing []string
	for op := range ops {
		if !used[op] && notConformanceOps[op] == "" {
			missing = append(missing, op)
		}
	}
	slices.Sort(missing)
	for _, op := range missing {
		t.Errorf("nd.%s has no forward case in the conformance suite (a conf* function or table of nd/ndtest)", op)
	}
	t.Logf("%d ops returning arrays, %d with conformance cases", len(ops), len(ops)-len(missing)-len(notConformanceOps))
}

// returnsArrays reports whether a result type is *NDArray, []*NDArray or
// similar.
func returnsArrays(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.StarExpr:
		id, ok := e.X.(*ast.Ident)
		return ok && id.Name == "NDArray"
	case *ast.ArrayType:
		return returnsArrays(e.Elt)
	}
	return false
}
