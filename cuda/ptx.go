//go:build cuda || cudaemu

package cuda

import (
	"embed"
	"path"
	"strconv"
	"strings"
)

//go:generate go run ./internal/gencodes -root ..
//go:generate sh gen.sh

// ptxFiles holds the kernels compiled from kernels/*.cu by gen.sh.
//
//go:embed ptx/*.ptx
var ptxFiles embed.FS

// ptxModule is one PTX image and the kernels it defines, each with the
// sizes in bytes of its parameters.
type ptxModule struct {
	name    string
	image   string
	kernels map[string][]int
}

// ptxModules returns every embedded PTX image with its entry points.
func ptxModules() ([]ptxModule, error) {
	entries, err := ptxFiles.ReadDir("ptx")
	if err != nil {
		return nil, err
	}
	var mods []ptxModule
	for _, e := range entries {
		b, err := ptxFiles.ReadFile(path.Join("ptx", e.Name()))
		if err != nil {
			return nil, err
		}
		img := string(b)
		mods = append(mods, ptxModule{name: e.Name(), image: img, kernels: ptxEntries(img)})
	}
	return mods, nil
}

// ptxEntries lists the kernels (".entry" directives) of a PTX image with
// the byte sizes of their parameters, which launches are checked against.
func ptxEntries(img string) map[string][]int {
	out := map[string][]int{}
	var cur string
	for _, line := range strings.Split(img, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "//") {
			continue
		}
		if _, rest, ok := strings.Cut(line, ".entry "); ok {
			name, _, _ := strings.Cut(rest, "(")
			cur = strings.TrimSpace(name)
			out[cur] = []int{}
			continue
		}
		if cur == "" {
			continue
		}
		if strings.HasPrefix(line, ")") {
			cur = ""
			continue
		}
		if strings.HasPrefix(line, ".param") {
			out[cur] = append(out[cur], ptxParamSize(line))
		}
	}
	return out
}

// ptxParamSize returns the size of a ".param" declaration such as
// ".param .u64 k_param_0," or ".param .align 8 .b8 k_param_3[264]".
func ptxParamSize(decl string) int {
	decl = strings.TrimSuffix(decl, ",")
	if i := strings.LastIndexByte(decl, '['); i >= 0 && strings.HasSuffix(decl, "]") {
		n, err := strconv.Atoi(decl[i+1 : len(decl)-1])
		if err != nil {
			return -1
		}
		return n
	}
	for _, f := range strings.Fields(decl) {
		switch f {
		case ".u64", ".s64", ".b64", ".f64":
			return 8
		case ".u32", ".s32", ".b32", ".f32":
			return 4
		}
	}
	return -1
}
