//go:build amd64

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// filterCases are shapes for the direct filter gradients' guard-page and
// core-count tests: short last filter groups and tap groups, planes with
// and without a masked last vector, padding, LeNet's layers.
var filterCases = []filterCase{
	{3, 1, 28, 28, 6, 5, 5, 0, 0},
	{5, 6, 12, 12, 16, 3, 3, 0, 0},
	{2, 2, 7, 9, 7, 3, 2, 0, 0},
	{4, 1, 11, 8, 13, 4, 4, 0, 0},
	{3, 3, 8, 8, 5, 3, 3, 1, 1},
	{17, 2, 6, 6, 3, 3, 3, 0, 0},
}

// filterForms are the direct filter gradient's forms (directFilterForm).
var filterForms = []struct {
	name string
	fn   func(convShape, []float32, []float32, []float32)
}{{"direct", directFilter}, {"flat", flatFilter}, {"bcast", bcastFilter}}

// TestDirectFilterGuardPage runs each form with the output gradient and
// the input ending where an inaccessible page begins: the short last
// filter and tap groups (which repeat a filter or a tap) and the masked
// last vector must read nothing past them.
func TestDirectFilterGuardPage(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range filterCases {
		p := tc.params()
		s := newConvShape(p)
		for _, f := range filterForms {
			if f.name == "bcast" && bcastRows(p.KW) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", f.name, tc), func(t *testing.T) {
				nx, ndy := p.N*p.InC*p.InH*p.InW, p.N*p.OutC*s.ohw
				vals := randSlice(64, r)
				gx, gdy := newGuarded(t, 4*nx), newGuarded(t, 4*ndy)
				x, _ := gx.tail(nx, vals)
				dy, _ := gdy.tail(ndy, randSlice(61, r))
				want := naiveFilterGrad(p, x, dy)
				dw := make([]float32, p.OutC*s.kk)
				f.fn(s, dw, x, dy)
				for i, v := range want {
					if d := math.Abs(float64(dw[i]) - v); d > 1e-4*max(math.Abs(v), 1) {
						t.Fatalf("dw[%d] = %v, want %v", i, dw[i], v)
					}
				}
			})
		}
	}
}

// TestDirectFilterCores checks that each form gives the same bits with
// one, two, three and eight cores (GOMAXPROCS).
func TestDirectFilterCores(t *testing.T) {
	needZMM(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(13, 14))
	for _, tc := range filterCases {
		p := tc.params()
		s := newConvShape(p)
		x := randSlice(p.N*p.InC*p.InH*p.InW, r)
		dy := randSlice(p.N*p.OutC*s.ohw, r)
		for _, f := range filterForms {
			if f.name == "bcast" && bcastRows(p.KW) == 0 {
				continue
			}
			var first []float32
			for _, procs := range []int{1, 2, 3, 8} {
				runtime.GOMAXPROCS(procs)
				dw := make([]float32, p.OutC*s.kk)
				f.fn(s, dw, x, dy)
				if first == nil {
					first = dw
				} else if !slices.Equal(dw, first) {
					t.Fatalf("%s %v: %d cores differ from 1", f.name, tc, procs)
				}
			}
		}
	}
}
