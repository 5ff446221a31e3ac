package prune_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/nd"
)

// identityNet is gradNet in float32 with the generator's three pruned
// parameters pruned with Identity, ready to load a pruned state dict;
// with deferred, the layers infer their input sizes and the pruning comes
// before initialisation.
func identityNet(t *testing.T, deferred bool) *nn.Sequential {
	t.Helper()
	if !deferred {
		net, conv, dense := gradNet(t, nd.Float32)
		prune.Identity(conv, "weight")
		prune.Identity(dense, "weight")
		prune.Identity(dense, "bias")
		return net
	}
	conv := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}})
	dense := nn.NewDense(5, nn.DenseOpts{})
	net := nn.NewSequential(conv, nn.NewActivation("tanh"), nn.NewFlatten(), dense)
	prune.Identity(conv, "weight")
	prune.Identity(dense, "weight")
	prune.Identity(dense, "bias")
	if err := gluon.Initialize(net, initializer.Xavier{}, cpu0); err != nil {
		t.Fatal(err)
	}
	return net
}

// TestLoadTorchStateDict loads prune_state_dict.pt, the state dict
// torch.save wrote for the generator's pruned network (float32: weight_orig,
// weight_mask, bias_orig, bias_mask), into the same network pruned with
// Identity (its shapes known, or inferred from the file): the parameter
// names are torch's keys, the masks torch's, and the output torch's.
func TestLoadTorchStateDict(t *testing.T) {
	g := loadGoldens(t)
	for _, deferred := range []bool{false, true} {
		name := map[bool]string{false: "shapes-known", true: "shapes-deferred"}[deferred]
		t.Run(name, func(t *testing.T) {
			net := identityNet(t, deferred)
			if err := gluon.LoadParameters(net, "testdata/prune_state_dict.pt", cpu0); err != nil {
				t.Fatal(err)
			}
			got := gluon.CollectParams(net).Names()
			want := slices.Clone(g.StateDict.Keys)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("parameters %v, torch's keys %v", got, want)
			}
			params := gluon.CollectParams(net)
			for name, m := range g.Grad.Masks {
				equalSlice(t, name, params.Get(name).Data(cpu0).Float64s(), m.Data)
			}
			y := predict(net, g.StateDict.Input.nd().AsType(nd.Float32))
			d := closeSlice(t, "output vs torch", y.Float64s(), g.StateDict.Output.Data, 1e-5)
			t.Logf("largest relative difference from torch's output: %.3g", d)
		})
	}
}

// TestSaveStateDictForTorch writes a pruned network's state dict as
// torch.save does (gluon/pytorch), reads it back under torch's key names
// into a network pruned with Identity (the same output and masks), and,
// when python3-torch is installed, has the generator's check mode load it
// into the torch network pruned with prune.identity: torch's output and
// mask zeros must be Goluon's.
func TestSaveStateDictForTorch(t *testing.T) {
	t.Parallel() // torch takes a second to start
	g := loadGoldens(t)
	net, _, _ := prunedNet(t, nd.Float32)
	params := gluon.CollectParams(net)
	tensors := map[string]*nd.NDArray{}
	for _, name := range params.Names() {
		tensors[name] = params.Get(name).Data(cpu0)
	}
	path := filepath.Join(t.TempDir(), "from_goluon.pt")
	if err := pytorch.SaveStateDict(path, params.Names(), tensors); err != nil {
		t.Fatal(err)
	}
	x := g.StateDict.Input.nd().AsType(nd.Float32)
	want := predict(net, x).Float64s()
	back := identityNet(t, false)
	if err := gluon.LoadParameters(back, path, cpu0); err != nil {
		t.Fatal(err)
	}
	equalSlice(t, "output after the round trip", predict(back, x).Float64s(), want)
	zerosWant := map[string]int{}
	for name, m := range g.Grad.Masks {
		zerosWant[name] = zeros(m.Data)
		equalSlice(t, name, gluon.CollectParams(back).Get(name).Data(cpu0).Float64s(), m.Data)
	}

	if testing.Short() {
		t.Skip("-short: not running torch")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3: ", err)
	}
	out, err := exec.Command("/usr/bin/python3", "testdata/make_goldens_prune.py", "check", path).Output()
	if msg := exitStderr(err); strings.Contains(msg, "No module named 'torch'") {
		t.Skip("no python3-torch")
	}
	if err != nil {
		t.Fatalf("torch could not load Goluon's state dict: %v\n%s", err, exitStderr(err))
	}
	var res struct {
		Output    []float64      `json:"output"`
		MaskZeros map[string]int `json:"mask_zeros"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	d := closeSlice(t, "torch's output on Goluon's state dict", res.Output, want, 1e-5)
	t.Logf("torch loaded Goluon's state dict: largest relative difference of the outputs %.3g", d)
	for name, n := range zerosWant {
		if res.MaskZeros[name] != n {
			t.Errorf("torch's %s has %d zeros, want %d (%v)", name, res.MaskZeros[name], n, res.MaskZeros)
		}
	}
}

// exitStderr is what a failed command wrote to stderr.
func exitStderr(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}

// TestSaveLoadKeepsMasks: gluon's safetensors files hold weight_orig and
// weight_mask; loading one into a network pruned with Identity (or not
// at all: then the names do not match, an error) restores the masks and
// the output, and Sparsity reports the same.
func TestSaveLoadKeepsMasks(t *testing.T) {
	net, _, _ := prunedNet(t, nd.Float32)
	path := filepath.Join(t.TempDir(), "pruned.safetensors")
	if err := gluon.SaveParameters(net, path); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(cpu0, nd.Float32, 0, 1, 3, 2, 4, 4)
	back := identityNet(t, true)
	if err := gluon.LoadParameters(back, path, cpu0); err != nil {
		t.Fatal(err)
	}
	equalSlice(t, "output", predict(back, x).Float64s(), predict(net, x).Float64s())
	if a, b := prune.Sparsity(net), prune.Sparsity(back); a.String() != b.String() {
		t.Errorf("sparsity before\n%s\nafter\n%s", a, b)
	}
	plain, _, _ := gradNet(t, nd.Float32)
	if err := gluon.LoadParameters(plain, path, cpu0); err == nil {
		t.Error("an unpruned network loaded a pruned state dict")
	}
}
