package ctx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goluon/goluon/ctx"
)

func TestString(t *testing.T) {
	for _, c := range []struct {
		c    ctx.Context
		want string
	}{{ctx.CPU(0), "cpu(0)"}, {ctx.GPU(1), "gpu(1)"}, {ctx.Context{}, "cpu(0)"}, {ctx.CPU(12), "cpu(12)"}} {
		if got := c.c.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.c, got, c.want)
		}
	}
	if ctx.CPU(0) == ctx.CPU(1) || ctx.CPU(1) == ctx.GPU(1) || ctx.CPU(2) != (ctx.Context{Kind: ctx.KindCPU, ID: 2}) {
		t.Error("contexts must compare by kind and number")
	}
}

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want []ctx.Context
	}{
		{"cpu:0,cpu:1", []ctx.Context{ctx.CPU(0), ctx.CPU(1)}},
		{"gpu:0, gpu:3", []ctx.Context{ctx.GPU(0), ctx.GPU(3)}},
		{"cpu(0),gpu(1)", []ctx.Context{ctx.CPU(0), ctx.GPU(1)}},
		{"cpu", []ctx.Context{ctx.CPU(0)}},
		{"GPU:2", []ctx.Context{ctx.GPU(2)}},
	}
	for _, c := range good {
		got, err := ctx.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", c.in, d)
		}
	}
	bad := []struct{ in, mention string }{
		{"", "empty"},
		{"tpu:0", "tpu"},
		{"cpu:-1", "non-negative"},
		{"cpu:x", "non-negative"},
		{"cpu:0,,cpu:1", "empty entry"},
		{"cpu:0,cpu:0", "twice"},
		{"cpu(1", "')'"},
	}
	for _, c := range bad {
		_, err := ctx.Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Parse(%q) error = %v, want one mentioning %q", c.in, err, c.mention)
		}
	}
}

func TestRegistry(t *testing.T) {
	if ctx.NumGPUs() != 0 {
		t.Skip("a GPU backend is registered in this build")
	}
	if err := ctx.Check(ctx.GPU(0)); err == nil || !strings.Contains(err.Error(), "-tags cuda") {
		t.Errorf("Check(gpu(0)) without a backend = %v, want a hint about -tags cuda", err)
	}
	if err := ctx.Check(ctx.CPU(3)); err != nil {
		t.Errorf("Check(cpu(3)) = %v", err)
	}
	ctx.Register(ctx.KindGPU, func() int { return 2 })
	defer ctx.Register(ctx.KindGPU, func() int { return 0 })
	if ctx.NumGPUs() != 2 || ctx.Check(ctx.GPU(1)) != nil || ctx.Check(ctx.GPU(2)) == nil {
		t.Error("registered GPU count not honoured")
	}
}

func ExampleParse() {
	devs, err := ctx.Parse("cpu:0,cpu:1")
	fmt.Println(devs, err)
	_, err = ctx.Parse("tpu:0")
	fmt.Println(err)
	// Output:
	// [cpu(0) cpu(1)] <nil>
	// ctx: cannot parse context "tpu:0": unknown device kind "tpu" (want cpu:N or gpu:N)
}
