package pytorch

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// want is a tensor of testdata/expected.json (make_fixtures.py).
type want struct {
	DType  string   `json:"dtype"`
	Shape  []int    `json:"shape"`
	Values []string `json:"values"`
}

func TestLoadTensorsMatchesTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var files map[string]map[string]want
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	for file, tensors := range files {
		t.Run(file, func(t *testing.T) {
			got, err := LoadTensors(filepath.Join("testdata", file), ctx.CPU(0))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, a := range got {
					a.Release()
				}
			}()
			names := func(m map[string]*nd.NDArray) []string {
				var out []string
				for k := range m {
					out = append(out, k)
				}
				slices.Sort(out)
				return out
			}
			var wantNames []string
			for k := range tensors {
				wantNames = append(wantNames, k)
			}
			slices.Sort(wantNames)
			if !slices.Equal(names(got), wantNames) {
				t.Fatalf("names %v, want %v", names(got), wantNames)
			}
			for name, w := range tensors {
				a := got[name]
				if a.DType().String() != w.DType || !slices.Equal(a.Shape(), w.Shape) {
					t.Errorf("%s: %v %v, want %s %v", name, a.DType(), a.Shape(), w.DType, w.Shape)
					continue
				}
				same(t, name, a, w.Values)
			}
		})
	}
}

// same compares a's elements with torch's, exactly.
func same(t *testing.T, name string, a *nd.NDArray, want []string) {
	t.Helper()
	if !a.DType().IsFloat() {
		got := a.Int64s()
		for i, s := range want {
			if n, _ := strconv.ParseInt(s, 10, 64); got[i] != n {
				t.Errorf("%s[%d] = %d, want %s", name, i, got[i], s)
			}
		}
		return
	}
	got := a.Float64s()
	for i, s := range want {
		v, _ := strconv.ParseFloat(s, 64)
		if a.DType() == nd.Float32 {
			v = float64(float32(v))
		}
		if got[i] != v && !(math.IsNaN(v) && math.IsNaN(got[i])) {
			t.Errorf("%s[%d] = %v, want %v", name, i, got[i], v)
		}
	}
}

func TestLoadKeepsTheCheckpointsOtherValues(t *testing.T) {
	v, err := Load("testdata/checkpoint.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*Dict)
	if !ok {
		t.Fatalf("loaded a %T, want a *Dict", v)
	}
	wantKeys := []any{"model", "optimizer", "epoch", "best", "name", "betas", "dtype", "huge", "none"}
	if !slices.Equal(d.Keys, wantKeys) {
		t.Fatalf("keys %v, want %v", d.Keys, wantKeys)
	}
	get := func(k string) any { x, _ := d.Get(k); return x }
	huge, _ := new(big.Int).SetString("1180591620717411303424", 10)
	if get("epoch") != int64(3) || get("best") != 0.75 || get("name") != "run" || get("none") != nil ||
		!slices.Equal(get("betas").(Tuple), Tuple{0.9, 0.999}) || get("dtype") != (Global{"torch", "float16"}) ||
		get("huge").(*big.Int).Cmp(huge) != 0 {
		t.Errorf("values %v", d.Values[2:])
	}
	opt := get("optimizer").(*Dict)
	groups, _ := opt.Get("param_groups")
	g := groups.(*List).Items[0].(*Dict)
	if lr, _ := g.Get("lr"); lr != 1e-3 {
		t.Errorf("lr %v", lr)
	}
	if amsgrad, _ := g.Get("amsgrad"); amsgrad != false {
		t.Errorf("amsgrad %v", amsgrad)
	}
	model := get("model").(*Dict)
	w, _ := model.Get("0.weight")
	if a, ok := w.(*nd.NDArray); !ok || !slices.Equal(a.Shape(), []int{4, 3, 3, 3}) {
		t.Errorf("model's 0.weight is %v", w)
	}
}

func TestSharedTensorsLoadAsSeparateArrays(t *testing.T) {
	got, err := LoadTensors("testdata/views.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	if got["base"] == got["same"] {
		t.Fatal("one tensor saved under two names gave one array twice: releasing one would free the other")
	}
	for _, a := range got {
		a.Release()
	}
}

func TestLoadStateDictFindsIt(t *testing.T) {
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var files map[string]map[string]want
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	sd := files["state_dict.pt"]
	for _, file := range []string{"state_dict.pt", "module.pt", "wrapped.pt", "checkpoint.pt"} {
		t.Run(file, func(t *testing.T) {
			got, err := LoadStateDict(filepath.Join("testdata", file), ctx.CPU(0))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(sd) {
				t.Errorf("%d tensors, want %d", len(got), len(sd))
			}
			for name, w := range sd {
				a := got[name]
				if a == nil {
					t.Errorf("no %s", name)
					continue
				}
				if file != "checkpoint.pt" { // its model trained a step further
					same(t, name, a, w.Values)
				}
				a.Release()
			}
		})
	}
	if _, err := LoadStateDict("testdata/views.pt", ctx.CPU(0)); err != nil {
		t.Errorf("a dict of tensors is a state dict: %v", err)
	}
}

// TestSubclassesOfDictAndList: a defaultdict, a dict subclass and a list
// subclass in a checkpoint are read as Objects holding their entries and
// items, and the state dict is found beside them or inside one.
func TestSubclassesOfDictAndList(t *testing.T) {
	for _, file := range []string{"subclasses.pt", "state_dict_in_subclass.pt"} {
		sd, err := LoadStateDict(filepath.Join("testdata", file), ctx.CPU(0))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(sd) != 9 || sd["0.weight"] == nil {
			t.Errorf("%s: %d tensors", file, len(sd))
		}
		for _, a := range sd {
			a.Release()
		}
	}
	v, err := Load("testdata/subclasses.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	d := v.(*Dict)
	hist, _ := d.Get("hist")
	if loss, _ := hist.(*Dict).Get("loss"); !slices.Equal(loss.(*List).Items, []any{1.0, 0.5}) {
		t.Errorf("hist = %v", hist)
	}
	cfg, _ := d.Get("cfg")
	if o, ok := cfg.(*Object); !ok || o.Name != "Config" || o.Entries == nil {
		t.Fatalf("cfg = %#v", cfg)
	} else if lr, _ := o.Entries.Get("lr"); lr != 0.1 {
		t.Errorf("cfg's lr = %v", lr)
	}
	runs, _ := d.Get("runs")
	if o, ok := runs.(*Object); !ok || !slices.Equal(o.Items, []any{int64(1), int64(2)}) {
		t.Errorf("runs = %#v", runs)
	}
	releaseAll(v)
}
