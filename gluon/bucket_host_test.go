package gluon

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// renamed is a kvstore of another kind (one registered by a library),
// whose sums the Trainer must leave to it.
type renamed struct{ kvstore.KVStore }

func (renamed) Type() string { return "mine" }

// TestHostShares: Step sums in shares on the contexts' goroutines only
// for two or more CPU contexts of this process with the device or local
// kind, and only those skip the sums during backward, when they are at
// least as many as GOMAXPROCS.
func TestHostShares(t *testing.T) {
	device, err := kvstore.Create("device")
	if err != nil {
		t.Fatal(err)
	}
	local, err := kvstore.Create("local")
	if err != nil {
		t.Fatal(err)
	}
	cpu2 := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	for _, c := range []struct {
		name   string
		devs   []ctx.Context
		kv     kvstore.KVStore
		shares bool
	}{
		{"2 cpus, device", cpu2, device, true},
		{"2 cpus, local", cpu2, local, true},
		{"1 cpu", cpu2[:1], device, false},
		{"cpu and gpu", []ctx.Context{ctx.CPU(0), ctx.GPU(0)}, device, false},
		{"2 gpus", []ctx.Context{ctx.GPU(0), ctx.GPU(1)}, device, false},
		{"another kind", cpu2, renamed{device}, false},
	} {
		for _, cores := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/%d cores", c.name, cores), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores))
				tr := &Trainer{devs: c.devs, kv: c.kv}
				if got := tr.hostShares(); got != c.shares {
					t.Errorf("hostShares %v, want %v", got, c.shares)
				}
				if got, want := tr.hostStepOnly(), c.shares && len(c.devs) >= cores; got != want {
					t.Errorf("hostStepOnly %v, want %v", got, want)
				}
			})
		}
	}
}

// TestOnContextsDedicates: the Trainer's per-context work runs once per
// context, each on its own goroutine, with the CPU contexts declared as
// dedicated (nd.DedicatedCores) while it runs and not after; GPU contexts
// declare nothing.
func TestOnContextsDedicates(t *testing.T) {
	device, err := kvstore.Create("device")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		devs []ctx.Context
		want int
	}{
		{[]ctx.Context{ctx.CPU(0), ctx.CPU(1)}, 2},
		{[]ctx.Context{ctx.GPU(0), ctx.GPU(1)}, 0},
	} {
		before := nd.DedicatedCores()
		tr := &Trainer{devs: c.devs, kv: device}
		got := make([]int, len(c.devs))
		ran := make([]bool, len(c.devs))
		if err := tr.onContexts(func(d int) error {
			got[d], ran[d] = nd.DedicatedCores()-before, true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for d := range c.devs {
			if !ran[d] || got[d] != c.want {
				t.Errorf("%v: context %d ran %v with %d dedicated, want %d", c.devs, d, ran[d], got[d], c.want)
			}
		}
		if after := nd.DedicatedCores(); after != before {
			t.Errorf("%v: %d dedicated after the call, %d before", c.devs, after, before)
		}
	}
}
