package nd_test

import (
	"testing"

	"github.com/goluon/goluon/nd"
)

// The goldens of testdata/golden/make_goldens_index.py (PyTorch, float64):
// gathers and scatters with repeated indices (their backward is a
// scatter-add), TopK, Cumsum, Norm and LogSumExp. Index tensors are stored
// as floats and converted to Int64 here.
func TestGoldenIndexOps(t *testing.T) {
	cases := loadGoldenFile(t, "testdata/golden/goldens_index.json")
	ix := func(in map[string]*nd.NDArray) *nd.NDArray { return in["idx"].AsType(nd.Int64) }
	ops := map[string]func(in map[string]*nd.NDArray, out map[string]*nd.NDArray) *nd.NDArray{
		"gather_axis1":      func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Gather(in["x"], 1, ix(in)) },
		"scatter_add_axis1": func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.ScatterAdd(in["x"], 1, ix(in), in["src"]) },
		"take_axis1":        func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Take(in["x"], ix(in), 1, nd.TakeClip) },
		"index_add_axis1":   func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.IndexAdd(in["x"], 1, ix(in), in["src"]) },
		"topk_largest": func(in, out map[string]*nd.NDArray) *nd.NDArray {
			v, i := nd.TopK(in["x"], 3, 1, true)
			out["indices"] = i
			return v
		},
		"topk_smallest_axis0": func(in, out map[string]*nd.NDArray) *nd.NDArray {
			v, i := nd.TopK(in["x"], 2, 0, false)
			out["indices"] = i
			return v
		},
		"cumsum_axis0":        func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Cumsum(in["x"], 0) },
		"cumsum_axis1":        func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Cumsum(in["x"], 1) },
		"cumsum_axis2":        func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Cumsum(in["x"], 2) },
		"norm_l2_axis1":       func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Norm(in["x"], 2, false, 1) },
		"norm_l1_axes02_keep": func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Norm(in["x"], 1, true, 0, 2) },
		"norm_l2_zero_row":    func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.Norm(in["x"], 2, false, 1) },
		"logsumexp_axis1":     func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in["x"], false, 1) },
		"logsumexp_all_keep":  func(in, _ map[string]*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in["x"], true, 0, 1) },
	}
	if len(cases) != len(ops) {
		t.Errorf("%d golden cases, %d ops to replay them", len(cases), len(ops))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			op, ok := ops[c.Name]
			if !ok {
				t.Fatalf("no op for golden case %q", c.Name)
			}
			runGolden(t, c, func(in, out map[string]*nd.NDArray) *nd.NDArray {
				y := op(in, out)
				out["out"] = y
				return nd.Sum(nd.Mul(y, in["w"]))
			})
		})
	}
}
