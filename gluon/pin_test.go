package gluon

import (
	"runtime"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/affinity"
	"github.com/goluon/goluon/nd"
)

func TestPinPlan(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	all := affinity.Allowed()
	two := []int(nil)
	if len(all) >= 2 {
		two = all[:2]
	}
	cases := []struct {
		name string
		devs []ctx.Context
		off  bool
		want []int
	}{
		{"one context", []ctx.Context{ctx.CPU(0)}, false, nil},
		{"two CPU contexts", []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, false, two},
		{"GOLUON_PIN=0", []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, true, nil},
		{"a GPU context", []ctx.Context{ctx.CPU(0), ctx.GPU(0)}, false, nil},
		{"more contexts than GOMAXPROCS", []ctx.Context{ctx.CPU(0), ctx.CPU(1), ctx.CPU(2)}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func(v bool) { pinOff = v }(pinOff)
			pinOff = c.off
			if got := pinPlan(c.devs); !slices.Equal(got, c.want) {
				t.Errorf("pinPlan = %v, want %v", got, c.want)
			}
		})
	}
}

// TestForEachDevicePins checks that each of two CPU contexts runs on a
// thread restricted to its own CPU, with the CPU backend told, and that
// both are undone afterwards, also when a context fails.
func TestForEachDevicePins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	all := affinity.Allowed()
	if len(all) < 2 || pinOff {
		t.Skipf("CPUs %v, GOLUON_PIN=0 %v: no pinning here", all, pinOff)
	}
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	for _, fail := range []bool{false, true} {
		seen := make([][]int, 2)
		dedicated := make([]int, 2)
		err := ForEachDevice(devs, func(i int, _ ctx.Context) error {
			seen[i] = affinity.Current()
			dedicated[i] = nd.DedicatedCores()
			if fail && i == 1 {
				panic(&nd.Error{Op: "test", Msg: "a failing context"})
			}
			return nil
		})
		if (err != nil) != fail {
			t.Fatalf("fail=%v: err %v", fail, err)
		}
		for i := range 2 {
			if !slices.Equal(seen[i], all[i:i+1]) || dedicated[i] != 2 {
				t.Errorf("fail=%v: context %d ran on CPUs %v with %d dedicated, want [%d] and 2", fail, i, seen[i], dedicated[i], all[i])
			}
		}
		if got := affinity.Current(); !slices.Equal(got, all) {
			t.Errorf("fail=%v: the caller's thread left on CPUs %v, want %v", fail, got, all)
		}
		if nd.DedicatedCores() != 0 {
			t.Errorf("fail=%v: %d goroutines still dedicated", fail, nd.DedicatedCores())
		}
	}
}
