package nd_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The goldens for the indexing, sorting, scan, norm, selection, reshaping
// and elementwise-math ops come from testdata/golden/make_goldens_index.py
// (PyTorch 1.13, float64). Every case computes one float output y from its
// inputs, the loss sum(y * r) with a fixed random r, and the gradient of
// the loss with respect to every float input but r; topk and sort also
// return Int64 positions, compared exactly. This test replays each case
// with nd, without Python.

type goldenIntTensor struct {
	Shape []int   `json:"shape"`
	Data  []int64 `json:"data"`
}

type goldenBoolTensor struct {
	Shape []int  `json:"shape"`
	Data  []bool `json:"data"`
}

// goldenRange is one axis of a slicing case: kind is all, span, spanstep,
// from or every, with the arguments of the nd.Range constructor of that name.
type goldenRange struct {
	Kind  string `json:"kind"`
	Begin int    `json:"begin"`
	End   int    `json:"end"`
	Step  int    `json:"step"`
}

func (r goldenRange) nd(t *testing.T) nd.Range {
	switch r.Kind {
	case "all":
		return nd.All()
	case "span":
		return nd.Span(r.Begin, r.End)
	case "spanstep":
		return nd.SpanStep(r.Begin, r.End, r.Step)
	case "from":
		return nd.From(r.Begin)
	case "every":
		return nd.Every(r.Step)
	}
	t.Fatalf("unknown range kind %q", r.Kind)
	return nd.Range{}
}

// indexParams are the op arguments; each op reads the ones it takes. Axes
// is null in the JSON (nil here) for a reduction over every axis.
type indexParams struct {
	Axis       int           `json:"axis"`
	Axis2      int           `json:"axis2"`
	K          int           `json:"k"`
	Largest    bool          `json:"largest"`
	Descending bool          `json:"descending"`
	Ord        int           `json:"ord"`
	Axes       []int         `json:"axes"`
	Keep       bool          `json:"keep"`
	Ddof       int           `json:"ddof"`
	Value      float64       `json:"value"`
	Reps       []int         `json:"reps"`
	N          int           `json:"n"`
	Ranges     []goldenRange `json:"ranges"`
	Fn         string        `json:"fn"`
}

type indexCase struct {
	goldenCase
	Op          string                      `json:"op"`
	Description string                      `json:"description"`
	Params      indexParams                 `json:"params"`
	Ints        map[string]goldenIntTensor  `json:"ints"`
	Bools       map[string]goldenBoolTensor `json:"bools"`
	IntOutputs  map[string]goldenIntTensor  `json:"int_outputs"`
}

// indexOp computes a case's output y, and its positions for topk and sort,
// from the float inputs in, the index arrays ix and the masks bx.
type indexOp func(t *testing.T, p indexParams, in, ix, bx map[string]*nd.NDArray) (y, indices *nd.NDArray)

func one(y *nd.NDArray) (*nd.NDArray, *nd.NDArray) { return y, nil }

var unaryGoldenOps = map[string]func(*nd.NDArray) *nd.NDArray{
	"erf":        nd.Erf,
	"log1p":      nd.Log1p,
	"expm1":      nd.Expm1,
	"sin":        nd.Sin,
	"cos":        nd.Cos,
	"rsqrt":      nd.Rsqrt,
	"reciprocal": nd.Reciprocal,
}

var indexGoldenOps = map[string]indexOp{
	"gather": func(_ *testing.T, p indexParams, in, ix, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Gather(in["x"], ix["idx"], p.Axis))
	},
	"scatter_add": func(_ *testing.T, p indexParams, in, ix, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.ScatterAdd(in["x"], ix["idx"], in["src"], p.Axis))
	},
	"index_select": func(_ *testing.T, p indexParams, in, ix, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Take(in["x"], ix["idx"], p.Axis, nd.TakeClip))
	},
	"index_add": func(_ *testing.T, p indexParams, in, ix, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.IndexAdd(in["x"], ix["idx"], in["src"], p.Axis))
	},
	"topk": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return nd.TopK(in["x"], p.K, p.Axis, p.Largest)
	},
	"sort": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return nd.Sort(in["x"], p.Axis, p.Descending)
	},
	"cumsum": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Cumsum(in["x"], p.Axis))
	},
	"norm": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		if p.Keep {
			return one(nd.NormKeepDims(in["x"], p.Ord, p.Axes...))
		}
		return one(nd.Norm(in["x"], p.Ord, p.Axes...))
	},
	"logsumexp": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		if p.Keep {
			return one(nd.LogSumExpKeepDims(in["x"], p.Axes...))
		}
		return one(nd.LogSumExp(in["x"], p.Axes...))
	},
	"var": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		if p.Keep {
			return one(nd.VarKeepDims(in["x"], p.Ddof, p.Axes...))
		}
		return one(nd.Var(in["x"], p.Ddof, p.Axes...))
	},
	"std": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		if p.Keep {
			return one(nd.StdKeepDims(in["x"], p.Ddof, p.Axes...))
		}
		return one(nd.Std(in["x"], p.Ddof, p.Axes...))
	},
	"where": func(_ *testing.T, _ indexParams, in, _, bx map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Where(bx["cond"], in["a"], in["b"]))
	},
	"masked_fill": func(_ *testing.T, p indexParams, in, _, bx map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.MaskedFill(in["x"], bx["mask"], p.Value))
	},
	"slice": func(t *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		rs := make([]nd.Range, len(p.Ranges))
		for i, r := range p.Ranges {
			rs[i] = r.nd(t)
		}
		return one(nd.Slice(in["x"], rs...))
	},
	"flip": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Flip(in["x"], p.Axes...))
	},
	"tile": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Tile(in["x"], p.Reps...))
	},
	"repeat": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.Repeat(in["x"], p.N, p.Axis))
	},
	"swapaxes": func(_ *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		return one(nd.SwapAxes(in["x"], p.Axis, p.Axis2))
	},
	"unary": func(t *testing.T, p indexParams, in, _, _ map[string]*nd.NDArray) (*nd.NDArray, *nd.NDArray) {
		f, ok := unaryGoldenOps[p.Fn]
		if !ok {
			t.Fatalf("unknown unary op %q", p.Fn)
		}
		return one(f(in["x"]))
	},
}

// indexGoldenSkips names the cases nd does not match yet, with why.
var indexGoldenSkips = map[string]string{}

func loadIndexGoldens(t *testing.T) []indexCase {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/goldens_index.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Torch string      `json:"torch"`
		Cases []indexCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Torch == "" || len(f.Cases) == 0 {
		t.Fatalf("goldens_index.json: torch version %q, %d cases", f.Torch, len(f.Cases))
	}
	return f.Cases
}

func TestGoldenIndexOps(t *testing.T) {
	cases := loadIndexGoldens(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Fatalf("case %q appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Op == "unary" {
			seen["unary "+c.Params.Fn] = true
		}
	}
	// Every op and every math function has at least one case, and every
	// skip names a case.
	for op := range indexGoldenOps {
		if !slices.ContainsFunc(cases, func(c indexCase) bool { return c.Op == op }) {
			t.Errorf("no golden case for op %q", op)
		}
	}
	for fn := range unaryGoldenOps {
		if !seen["unary "+fn] {
			t.Errorf("no golden case for unary op %q", fn)
		}
	}
	for name := range indexGoldenSkips {
		if !seen[name] {
			t.Errorf("skip for unknown case %q", name)
		}
	}

	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if why, ok := indexGoldenSkips[c.Name]; ok {
				t.Skip(why)
			}
			build, ok := indexGoldenOps[c.Op]
			if !ok {
				t.Fatalf("unknown op %q", c.Op)
			}
			runIndexGolden(t, c, build)
		})
	}
}

// runIndexGolden replays one case with runGolden (float64 on ctx.CPU(0),
// loss sum(y * r)), then checks the shapes of y and of the gradients and
// the positions exactly.
func runIndexGolden(t *testing.T, c indexCase, build indexOp) {
	dev := ctx.CPU(0)
	ix := map[string]*nd.NDArray{}
	for name, tt := range c.Ints {
		ix[name] = nd.FromSlice(dev, tt.Data, tt.Shape...)
	}
	bx := map[string]*nd.NDArray{}
	for name, tt := range c.Bools {
		bx[name] = nd.FromSlice(dev, tt.Data, tt.Shape...)
	}
	if len(c.Outputs) != 1 || c.Tensors["r"].Shape == nil {
		t.Fatalf("case %q: want one output y and weights r", c.Name)
	}
	var y, indices *nd.NDArray
	var inputs map[string]*nd.NDArray
	runGolden(t, c.goldenCase, func(in, out map[string]*nd.NDArray) *nd.NDArray {
		inputs = in
		y, indices = build(t, c.Params, in, ix, bx)
		out["y"] = y
		return nd.Sum(nd.Mul(y, in["r"]))
	})
	if want := c.Outputs["y"].Shape; !slices.Equal(y.Shape(), want) {
		t.Errorf("y has shape %v, PyTorch %v", y.Shape(), want)
	}
	for name, want := range c.Grads {
		if got := inputs[name].Grad().Shape(); !slices.Equal(got, want.Shape) {
			t.Errorf("grad %s has shape %v, PyTorch %v", name, got, want.Shape)
		}
	}
	want, ok := c.IntOutputs["indices"]
	if ok != (indices != nil) {
		t.Fatalf("indices: got %v, PyTorch has them: %v", indices != nil, ok)
	}
	if !ok {
		return
	}
	if indices.DType() != nd.Int64 {
		t.Errorf("indices have dtype %v, want int64", indices.DType())
	}
	if !slices.Equal(indices.Shape(), want.Shape) {
		t.Errorf("indices have shape %v, PyTorch %v", indices.Shape(), want.Shape)
	}
	if got := indices.Int64s(); !slices.Equal(got, want.Data) {
		t.Errorf("indices = %v, PyTorch %v", got, want.Data)
	}
}
