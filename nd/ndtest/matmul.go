package ndtest

// The cases for the ops of nd/matmul.go: MatMul, Dot and FullyConnected.

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refGemm multiplies batches of matrices: for every batch index it computes
// op(A)·op(B) with A stored [m,k] ([k,m] when ta) and B stored [k,n] ([n,k]
// when tb). batchA or batchB of 0 means the operand is one matrix shared by
// every batch entry.
func refGemm(a, b []float64, batch, batchA, batchB, m, k, n int, ta, tb bool) []float64 {
	out := make([]float64, max(batch, 1)*m*n)
	for bi := range max(batch, 1) {
		ao, bo := 0, 0
		if batchA > 0 {
			ao = bi * m * k
		}
		if batchB > 0 {
			bo = bi * k * n
		}
		for i := range m {
			for j := range n {
				s := 0.0
				for p := range k {
					ai := ao + i*k + p
					if ta {
						ai = ao + p*m + i
					}
					bj := bo + p*n + j
					if tb {
						bj = bo + j*k + p
					}
					s += a[ai] * b[bj]
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	return out
}

// confMatMul checks MatMul (2-D, batched 3-D, 3-D×2-D, 2-D×3-D), Dot with
// every combination of transpose flags, and FullyConnected with and
// without bias. Inputs lie in [-1, 1]; with K up to 90 the float32
// results need confTolLongSum.
func confMatMul(e confEnv) {
	type mm struct{ batchA, batchB, m, k, n int }
	cases := []mm{
		{0, 0, 1, 1, 1},
		{0, 0, 1, 5, 1},
		{0, 0, 4, 1, 6},
		{0, 0, 7, 13, 5},
		{0, 0, 130, 70, 90},
		{3, 3, 7, 13, 5}, // batched
		{2, 2, 1, 4, 1},
		{3, 0, 7, 13, 5}, // 3-D × 2-D: one right matrix for every batch entry
		{0, 3, 7, 13, 5}, // 2-D × 3-D: one left matrix for every batch entry
	}
	shapeOf := func(batch, r, c int) []int {
		if batch == 0 {
			return []int{r, c}
		}
		return []int{batch, r, c}
	}
	for i, c := range cases {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			ta, tb := tr[0], tr[1]
			name := "MatMul"
			if ta || tb {
				name = fmt.Sprintf("Dot_ta%v_tb%v", ta, tb)
			}
			as, bs := shapeOf(c.batchA, c.m, c.k), shapeOf(c.batchB, c.k, c.n)
			if ta {
				as = shapeOf(c.batchA, c.k, c.m)
			}
			if tb {
				bs = shapeOf(c.batchB, c.n, c.k)
			}
			e.run(fmt.Sprintf("%s/%s", name, confShapeName(as, bs)), func(e confEnv) {
				a, av := e.rand(uint64(700+10*i), -1, 1, as...)
				b, bv := e.rand(uint64(701+10*i), -1, 1, bs...)
				batch := max(c.batchA, c.batchB)
				want := refGemm(av, bv, batch, c.batchA, c.batchB, c.m, c.k, c.n, ta, tb)
				var got *nd.NDArray
				if !ta && !tb {
					got = nd.MatMul(a, b)
				} else {
					got = nd.Dot(a, b, ta, tb)
				}
				e.check(got, shapeOf(batch, c.m, c.n), want, confTolLongSum)
			})
			if !ta && !tb {
				// Dot without flags is MatMul.
				e.run(fmt.Sprintf("Dot_plain/%s", confShapeName(as, bs)), func(e confEnv) {
					a, av := e.rand(uint64(702+10*i), -1, 1, as...)
					b, bv := e.rand(uint64(703+10*i), -1, 1, bs...)
					batch := max(c.batchA, c.batchB)
					want := refGemm(av, bv, batch, c.batchA, c.batchB, c.m, c.k, c.n, false, false)
					e.check(nd.Dot(a, b, false, false), shapeOf(batch, c.m, c.n), want, confTolLongSum)
				})
			}
		}
	}
	// Empty operands: a batch of no matrices beside a shared matrix (the
	// backend's Batch would be 0), broadcast stacks of none, no rows, no
	// inner terms (a zero result).
	for i, c := range []struct {
		a, b, want []int
		ta, tb     bool
	}{
		{[]int{0, 6, 9}, []int{9, 4}, []int{0, 6, 4}, false, false},
		{[]int{6, 9}, []int{0, 9, 4}, []int{0, 6, 4}, false, false},
		{[]int{0, 6, 9}, []int{0, 9, 4}, []int{0, 6, 4}, false, false},
		{[]int{0, 9, 6}, []int{4, 9}, []int{0, 6, 4}, true, true},
		{[]int{2, 0, 6, 9}, []int{9, 4}, []int{2, 0, 6, 4}, false, false},
		{[]int{0, 1, 6, 9}, []int{3, 9, 4}, []int{0, 3, 6, 4}, false, false},
		{[]int{2, 0, 9}, []int{9, 4}, []int{2, 0, 4}, false, false},
		{[]int{2, 3, 0}, []int{0, 4}, []int{2, 3, 4}, false, false},
	} {
		name := "MatMul"
		if c.ta || c.tb {
			name = fmt.Sprintf("Dot_ta%v_tb%v", c.ta, c.tb)
		}
		e.run(fmt.Sprintf("%s/empty/%s", name, confShapeName(c.a, c.b)), func(e confEnv) {
			a, _ := e.rand(uint64(760+i), -1, 1, c.a...)
			b, _ := e.rand(uint64(770+i), -1, 1, c.b...)
			var got *nd.NDArray
			if c.ta || c.tb {
				got = nd.Dot(a, b, c.ta, c.tb)
			} else {
				got = nd.MatMul(a, b)
			}
			e.check(got, c.want, make([]float64, refNumel(c.want)), confTolLongSum)
		})
	}
	for i, c := range []struct {
		n, in, out int
		bias       bool
	}{
		{4, 13, 5, true},
		{4, 13, 5, false},
		{1, 1, 1, true},
		{130, 70, 90, true},
		{3, 8, 1, false},
	} {
		e.run(fmt.Sprintf("FullyConnected/%dx%d_out%d_bias%v", c.n, c.in, c.out, c.bias), func(e confEnv) {
			x, xv := e.rand(uint64(800+i), -1, 1, c.n, c.in)
			w, wv := e.rand(uint64(810+i), -1, 1, c.out, c.in)
			want := refGemm(xv, wv, 0, 0, 0, c.n, c.in, c.out, false, true)
			var bias *nd.NDArray
			if c.bias {
				var bv []float64
				bias, bv = e.rand(uint64(820+i), -1, 1, c.out)
				for r := range c.n {
					for j := range c.out {
						want[r*c.out+j] += bv[j]
					}
				}
			}
			e.check(nd.FullyConnected(x, w, bias), []int{c.n, c.out}, want, confTolLongSum)
		})
	}
}

// gradMatMulCases checks MatMul on 2-D, batched 3-D and mixed 2-D/3-D
// operands, Dot with every transpose combination (2-D, batched and
// shared), and FullyConnected with and without bias.
func gradMatMulCases(dev ctx.Context) []gradCase {
	pair := func(a, b []int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 31, a...), gradSigned(dev, 32, b...)) }
	}
	matmul := func(in []*nd.NDArray) *nd.NDArray { return nd.MatMul(in[0], in[1]) }
	cases := []gradCase{
		{op: "MatMul", name: "2-D", f: matmul, in: pair([]int{3, 4}, []int{4, 5})},
		{op: "MatMul", name: "2-D/vector-like", f: matmul, in: pair([]int{1, 4}, []int{4, 1})},
		{op: "MatMul", name: "batched-3-D", f: matmul, in: pair([]int{2, 3, 4}, []int{2, 4, 5})},
		{op: "MatMul", name: "3-D-by-2-D-shared", f: matmul, in: pair([]int{2, 3, 4}, []int{4, 5})},
		{op: "MatMul", name: "2-D-by-3-D-shared", f: matmul, in: pair([]int{3, 4}, []int{2, 4, 5})},
		{op: "MatMul", name: "2-D/only-b", f: matmul, in: pair([]int{3, 4}, []int{4, 5}), noGrad: []int{0}},
		{op: "MatMul", name: "same-array", in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 33, 4, 4)) },
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.MatMul(in[0], in[0]) }},
		// An empty batch beside a shared matrix: the shared operand's
		// gradient is zero.
		{op: "MatMul", name: "empty-batch-by-2-D", f: matmul, in: pair([]int{0, 3, 4}, []int{4, 5})},
		{op: "MatMul", name: "2-D-by-empty-batch", f: matmul, in: pair([]int{3, 4}, []int{0, 4, 5})},
		{op: "MatMul", name: "empty-broadcast-batch", f: matmul, in: pair([]int{2, 0, 3, 4}, []int{4, 5})},
	}
	// op(a) is [m, k] = [3, 4] and op(b) is [k, n] = [4, 5] in every case.
	shapeOf := func(rows, cols int, trans bool) []int {
		if trans {
			return []int{cols, rows}
		}
		return []int{rows, cols}
	}
	for _, tr := range []struct {
		name   string
		ta, tb bool
	}{{"NN", false, false}, {"TN", true, false}, {"NT", false, true}, {"TT", true, true}} {
		f := func(in []*nd.NDArray) *nd.NDArray { return nd.Dot(in[0], in[1], tr.ta, tr.tb) }
		a, b := shapeOf(3, 4, tr.ta), shapeOf(4, 5, tr.tb)
		cases = append(cases,
			gradCase{op: "Dot", name: "2-D/" + tr.name, f: f, in: pair(a, b)},
			gradCase{op: "Dot", name: "batched-3-D/" + tr.name, f: f,
				in: pair(append([]int{2}, a...), append([]int{2}, b...))},
			gradCase{op: "Dot", name: "3-D-by-2-D-shared/" + tr.name, f: f,
				in: pair(append([]int{2}, a...), b)},
			gradCase{op: "Dot", name: "2-D-by-3-D-shared/" + tr.name, f: f,
				in: pair(a, append([]int{2}, b...))},
		)
	}
	cases = append(cases,
		gradCase{op: "FullyConnected", name: "bias",
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 34, 4, 5), gradSigned(dev, 35, 3, 5), gradSigned(dev, 36, 3))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], in[2]) }},
		gradCase{op: "FullyConnected", name: "no-bias",
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 34, 4, 5), gradSigned(dev, 35, 3, 5)) },
			f:  func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], nil) }},
		gradCase{op: "FullyConnected", name: "bias/single-sample",
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 37, 1, 6), gradSigned(dev, 38, 2, 6), gradSigned(dev, 39, 2))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], in[2]) }},
		gradCase{op: "FullyConnected", name: "bias/weights-only",
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 34, 4, 5), gradSigned(dev, 35, 3, 5), gradSigned(dev, 36, 3))
			},
			f:      func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], in[2]) },
			noGrad: []int{0}},
	)
	return cases
}
