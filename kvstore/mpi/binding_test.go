package mpi

import (
	"strings"
	"testing"
)

func TestCountCPUs(t *testing.T) {
	for _, c := range []struct {
		list string
		want int
	}{
		{"0-1\n", 2},
		{"0", 1},
		{"0-3,8,10-11", 7},
		{"", 0},
		{"3-1", 0},
		{"x", 0},
	} {
		if got := countCPUs(c.list); got != c.want {
			t.Errorf("countCPUs(%q) = %d, want %d", c.list, got, c.want)
		}
	}
}

// TestBindingAdvice: a warning only when the machine's processes together
// can use fewer CPUs than it has, naming the share each could have.
func TestBindingAdvice(t *testing.T) {
	for _, c := range []struct {
		local, usable, online int
		want                  string // a part of the warning, or "" for none
	}{
		{1, 1, 2, "PE=2"}, // a default `mpirun -np 1` on 2 cores
		{2, 1, 2, ""},     // 2 processes bound one core each
		{1, 2, 2, ""},     // unbound
		{2, 1, 8, "PE=4"}, // 2 processes bound to one core each of 8
		{4, 2, 8, ""},     // PE=2 each
		{3, 1, 8, "PE=2"}, // shares round down
		{0, 1, 2, ""},     // unknown counts
		{1, 1, 0, ""},
	} {
		got := bindingAdvice(c.local, c.usable, c.online)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("bindingAdvice(%d, %d, %d) = %q, want one containing %q", c.local, c.usable, c.online, got, c.want)
		}
	}
}
