package layers

import (
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/goluon/goluon/"

// graph returns the module's packages and their direct imports within the
// module (prefix trimmed), built with the given tags.
func graph(t *testing.T, tags string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list failed (no go command?): %v", err)
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, "|")
		pkg = strings.TrimPrefix(pkg, module)
		var own []string
		for _, imp := range strings.Split(imps, ",") {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				own = append(own, rest)
			}
		}
		g[pkg] = own
	}
	return g
}

// deps returns every module package pkg imports, directly or not.
func deps(g map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		for _, d := range g[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// TestImportsPointDown checks the layering rules on the import graph of
// a plain build and of the cudaemu build (which compiles cuda/).
func TestImportsPointDown(t *testing.T) {
	// allowed lists, for the packages whose place is fixed, every module
	// package they may depend on, directly or not.
	allowed := map[string][]string{
		"ctx":          nil,
		"internal/gid": nil, // goroutine identity, for the sessions' checks and graph capture
		"nd/backend":   {"ctx"},
		"nd/cpu":       {"ctx", "nd/backend"},
		"cuda":         {"ctx", "internal/gid", "nd/backend"}, // the device error kind is the seam's; gid tells the capturing goroutine
		"nd":           {"ctx", "internal/gid", "nd/backend", "nd/cpu"},
		"nd/ndtest":    {"ctx", "internal/gid", "nd", "nd/backend", "nd/cpu"}, // not autograd
		"autograd":     {"ctx", "internal/gid", "nd", "nd/backend", "nd/cpu"},
		"kvstore":      {"ctx", "internal/gid", "nd", "nd/backend", "nd/cpu"}, // a sibling of autograd
	}
	for _, tags := range []string{"", "cudaemu"} {
		g := graph(t, tags)
		for _, must := range []string{"nd", "autograd", "gluon", "nd/ndtest", "kvstore"} {
			if _, ok := g[must]; !ok {
				t.Fatalf("tags %q: go list did not report %s", tags, must)
			}
		}
		if _, ok := g["cuda"]; !ok && tags == "cudaemu" {
			t.Fatalf("the cudaemu build does not list cuda")
		}
		for pkg, ok := range allowed {
			if _, present := g[pkg]; !present {
				continue // cuda has no files without a tag
			}
			for _, d := range deps(g, pkg) {
				if !slices.Contains(ok, d) {
					t.Errorf("tags %q: %s depends on %s", tags, pkg, d)
				}
			}
		}
		for pkg, imps := range g {
			for _, imp := range imps {
				// Only nd and the backends see the seam and the CPU kernels.
				if (imp == "nd/backend" || imp == "nd/cpu") && !strings.HasPrefix(pkg, "nd") && pkg != "cuda" && !strings.HasPrefix(pkg, "bench") {
					t.Errorf("tags %q: %s imports %s (use nd's re-exports)", tags, pkg, imp)
				}
				// Programs are leaves.
				for _, top := range []string{"tutorials/", "bench"} {
					if strings.HasPrefix(imp, top) && !strings.HasPrefix(pkg, strings.TrimSuffix(top, "/")) {
						t.Errorf("tags %q: %s imports the program package %s", tags, pkg, imp)
					}
				}
				// Libraries below gluon do not reach up into it.
				if strings.HasPrefix(imp, "gluon") && (strings.HasPrefix(pkg, "nd") || strings.HasPrefix(pkg, "kvstore") || pkg == "autograd" || pkg == "cuda") {
					t.Errorf("tags %q: %s imports %s", tags, pkg, imp)
				}
			}
		}
	}
}
