package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	cases := []struct {
		cfg   config
		lines []string
	}{
		{config{model: "lenet", contexts: 2, batch: 8, steps: 3}, []string{"forward 0", "forward 1", "backward 1", "join", "step", "total"}},
		{config{model: "lenet", contexts: 1, batch: 4, steps: 2}, []string{"forward 0", "backward 0", "total"}},
	}
	for _, c := range cases {
		var b strings.Builder
		if err := run(&b, c.cfg); err != nil {
			t.Fatal(err)
		}
		for _, l := range c.lines {
			if !strings.Contains(b.String(), "\n"+l+" ") {
				t.Errorf("%+v: no %q line in\n%s", c.cfg, l, b.String())
			}
		}
	}
}

func TestRunBadInput(t *testing.T) {
	for _, cfg := range []config{
		{model: "vgg", contexts: 1, batch: 4, steps: 1},
		{model: "lenet", contexts: 0, batch: 4, steps: 1},
		{model: "lenet", contexts: 4, batch: 2, steps: 1},
	} {
		if err := run(&strings.Builder{}, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
