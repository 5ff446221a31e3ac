package nd_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/goluon/goluon/nd"
)

// The goldens for the activations and normalisations come from
// testdata/golden/make_goldens_act.py (PyTorch 1.13, float64): each case's
// output y, the loss sum(y·r) for a fixed random r, and the gradients of
// the loss with respect to every float input, replayed here with nd.

type actParams struct {
	Slope  float64 `json:"slope"`
	Axis   int     `json:"axis"`
	Alpha  float64 `json:"alpha"`
	Tanh   bool    `json:"tanh"`
	Eps    float64 `json:"eps"`
	Groups int     `json:"groups"`
}

type actCase struct {
	goldenCase
	Op     string    `json:"op"`
	Params actParams `json:"params"`
}

func TestGoldensActivations(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_act.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []actCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 17 {
		t.Fatalf("%d cases, want 17", len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p := c.Params
			runGolden(t, c.goldenCase, func(in, out map[string]*nd.NDArray) *nd.NDArray {
				x, gamma, beta := in["x"], in["gamma"], in["beta"]
				var y *nd.NDArray
				switch c.Op {
				case "leaky_relu":
					y = nd.LeakyReLU(x, p.Slope)
				case "prelu":
					y = nd.PReLU(x, in["alpha"], p.Axis)
				case "elu":
					y = nd.ELU(x, p.Alpha)
				case "gelu":
					y = nd.GELU(x, p.Tanh)
				case "silu":
					y = nd.SiLU(x)
				case "layer_norm":
					y = nd.LayerNorm(x, gamma, beta, p.Axis, p.Eps)
				case "group_norm":
					y = nd.GroupNorm(x, gamma, beta, p.Groups, p.Eps)
				case "instance_norm":
					y = nd.InstanceNorm(x, gamma, beta, p.Eps)
				default:
					t.Fatalf("unknown op %q", c.Op)
				}
				out["y"] = y
				return nd.Sum(nd.Mul(y, in["r"]))
			})
		})
	}
}
