package ndtest

// The cases for the ops of nd/pad.go: Pad (constant, edge, reflect).

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradPadCases checks Pad in every mode.
func gradPadCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	for _, c := range []struct {
		name string
		mode nd.PadMode
	}{{"constant", nd.PadConstant}, {"edge", nd.PadEdge}, {"reflect", nd.PadReflect}} {
		g.add("Pad", c.name, g.one(3, 4), func(in []*nd.NDArray) *nd.NDArray {
			return nd.Pad(in[0], [][2]int{{1, 2}, {3, 1}}, c.mode, 0.5)
		})
	}
	return g.cases
}

// confPad is the Pad sub-test of the index family (index.go): every mode
// on the 2x3 array x = [[1 2 3] [4 5 6]].
func confPad(e confEnv, x *nd.NDArray) {
	w := [][2]int{{0, 1}, {2, 2}}
	e.check(nd.Pad(x, w, nd.PadConstant, -1), []int{3, 7}, []float64{
		-1, -1, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1}, confTolExact)
	e.check(nd.Pad(x, w, nd.PadEdge, 0), []int{3, 7}, []float64{
		1, 1, 1, 2, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6, 4, 4, 4, 5, 6, 6, 6}, confTolExact)
	e.check(nd.Pad(x, [][2]int{{1, 0}, {2, 1}}, nd.PadReflect, 0), []int{3, 6}, []float64{
		6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}, confTolExact)
}
