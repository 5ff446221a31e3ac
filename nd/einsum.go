package nd

import (
	"slices"
	"strings"
)

// Einsum evaluates an Einstein summation over its operands, as NumPy's
// and PyTorch's einsum do: "ij,jk->ik" is a matrix product, "bij,bjk->bik"
// a batched one, "ij->ji" a transpose, "ii->i" a diagonal, "ij->" a sum,
// "i,j->ij" an outer product. Each operand's subscripts are letters, one
// per axis; "..." stands for the axes not named (broadcast against each
// other, aligned on the right, as NumPy broadcasts). Without "->" the
// output takes the letters that appear once, in alphabetical order, after
// the "..." axes. Letters repeated in one operand take its diagonal;
// letters named by several operands must have equal sizes (or size 1,
// which broadcasts). The operands are contracted pairwise, left to right,
// each pair as one batched MatMul after summing the axes no later operand
// or the output names; the result is differentiable in every operand.
func Einsum(equation string, operands ...*NDArray) *NDArray {
	if len(operands) == 0 {
		fail("Einsum", ErrArgument, "no operands")
	}
	return dispatchNative("Einsum", castLow, slices.Clone(operands), func(in []*NDArray) *NDArray { return einsumOp(equation, in) })
}

func einsumOp(equation string, operands []*NDArray) *NDArray {
	const op = "Einsum"
	defer checkInputs(op, operands...).done() // one context and one dtype
	if dt := operands[0].dtype; !dt.IsFloat() {
		// The products run on MatMul, which is floating-point: integers
		// go through float64, exact below 2^53.
		wide := make([]*NDArray, len(operands))
		for i, a := range operands {
			wide[i] = a.AsType(Float64)
		}
		return einsumOp(equation, wide).AsType(dt)
	}
	ins, out := parseEinsum(op, equation, operands)
	// term is an intermediate result and the letters of its axes.
	type term struct {
		a   *NDArray
		sub []rune
	}
	terms := make([]term, len(operands))
	for i, a := range operands {
		a, sub := einsumDiagonal(a, ins[i])
		terms[i] = term{a, sub}
	}
	sizes := map[rune]int{}
	for _, t := range terms {
		for k, l := range t.sub {
			n := t.a.shape[k]
			cur, seen := sizes[l]
			switch {
			case !seen || cur == 1:
				sizes[l] = n
			case n != 1 && n != cur:
				fail(op, ErrShape, "%q: subscript %q has sizes %d and %d", equation, string(l), cur, n)
			}
		}
	}
	// needed reports whether letter l is named by the output or by a
	// term after index i.
	needed := func(l rune, i int) bool {
		if slices.Contains(out, l) {
			return true
		}
		for _, t := range terms[i+1:] {
			if slices.Contains(t.sub, l) {
				return true
			}
		}
		return false
	}
	acc := terms[0]
	acc.a, acc.sub = sumUnneeded(acc.a, acc.sub, func(l rune) bool { return needed(l, 0) })
	for i := 1; i < len(terms); i++ {
		b := terms[i]
		keep := func(l rune) bool { return needed(l, i) }
		b.a, b.sub = sumUnneeded(b.a, b.sub, func(l rune) bool { return keep(l) || slices.Contains(acc.sub, l) })
		acc.a, acc.sub = contractPair(acc.a, acc.sub, b.a, b.sub, keep, sizes)
		acc.a, acc.sub = sumUnneeded(acc.a, acc.sub, keep)
	}
	// The output's order, broadcasting size-1 axes a lone operand kept.
	perm := make([]int, len(out))
	for k, l := range out {
		perm[k] = slices.Index(acc.sub, l)
	}
	y := acc.a
	if !slices.Equal(perm, identity(len(perm))) {
		y = Transpose(y, perm...)
	}
	shape := make([]int, len(out))
	for k, l := range out {
		shape[k] = sizes[l]
	}
	if !slices.Equal(y.shape, shape) {
		y = BroadcastTo(y, shape...)
	}
	return y
}

// identity is [0, 1, ..., n−1].
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// parseEinsum splits an equation into each operand's letters and the
// output's, with "..." expanded into letters of their own (taken from
// outside the ASCII range) for the broadcast axes.
func parseEinsum(op, equation string, operands []*NDArray) (ins [][]rune, out []rune) {
	eq := strings.ReplaceAll(equation, " ", "")
	for _, c := range eq {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune(",.->", c)) {
			fail(op, ErrArgument, "%q: %q is not a subscript letter, ',', '...' or '->'", equation, string(c))
		}
	}
	lhs, rhs, explicit := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(operands) {
		fail(op, ErrArgument, "%q names %d operands, %d given", equation, len(parts), len(operands))
	}
	// The "..." axes: as many as the most any operand leaves unnamed.
	ell := 0
	named := make([]int, len(parts))
	for i, p := range parts {
		if strings.Count(p, "...") > 1 {
			fail(op, ErrArgument, "%q: operand %d has \"...\" twice", equation, i)
		}
		named[i] = len([]rune(strings.Replace(p, "...", "", 1)))
		if strings.Contains(p, "...") {
			if operands[i].NDim() < named[i] {
				fail(op, ErrShape, "%q: operand %d has shape %v, fewer axes than the %d letters", equation, i, operands[i].shape, named[i])
			}
			ell = max(ell, operands[i].NDim()-named[i])
		} else if operands[i].NDim() != named[i] {
			fail(op, ErrShape, "%q: operand %d has shape %v: %d axes for %d letters", equation, i, operands[i].shape, operands[i].NDim(), named[i])
		}
	}
	ellLetters := make([]rune, ell)
	for k := range ellLetters {
		ellLetters[k] = rune(0x10000 + k) // never a letter of the equation
	}
	expand := func(p string, n int) []rune {
		var sub []rune
		before, after, has := strings.Cut(p, "...")
		for _, l := range before {
			sub = append(sub, checkLetter(op, equation, l))
		}
		if has {
			sub = append(sub, ellLetters[ell-n:]...)
			for _, l := range after {
				sub = append(sub, checkLetter(op, equation, l))
			}
		}
		return sub
	}
	count := map[rune]int{}
	for i, p := range parts {
		ins = append(ins, expand(p, operands[i].NDim()-named[i]))
		for _, l := range ins[i] {
			if l < 0x10000 {
				count[l]++
			}
		}
	}
	if explicit {
		if strings.Contains(rhs, "...") {
			out = expand(rhs, ell)
		} else {
			for _, l := range rhs {
				out = append(out, checkLetter(op, equation, l))
			}
		}
		for k, l := range out {
			if slices.Contains(out[:k], l) {
				fail(op, ErrArgument, "%q: the output names %q twice", equation, string(l))
			}
			if l < 0x10000 && count[l] == 0 {
				fail(op, ErrArgument, "%q: the output names %q, which no operand has", equation, string(l))
			}
		}
		return ins, out
	}
	out = append(out, ellLetters...)
	var once []rune
	for l, n := range count {
		if n == 1 {
			once = append(once, l)
		}
	}
	slices.Sort(once)
	return ins, append(out, once...)
}

func checkLetter(op, equation string, l rune) rune {
	if !(l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z') {
		fail(op, ErrArgument, "%q: %q is not a subscript letter", equation, string(l))
	}
	return l
}

// einsumDiagonal takes the diagonal of every letter a names twice or more
// ("ii->i"), so that each letter names one axis.
func einsumDiagonal(a *NDArray, sub []rune) (*NDArray, []rune) {
	for {
		i, j := -1, -1
		for k, l := range sub {
			if m := slices.Index(sub[:k], l); m >= 0 {
				i, j = m, k
				break
			}
		}
		if i < 0 {
			return a, sub
		}
		n := a.shape[i]
		if a.shape[j] != n {
			fail("Einsum", ErrShape, "subscript %q repeated in one operand on axes of sizes %d and %d", string(sub[i]), n, a.shape[j])
		}
		// Move the two axes last, flatten them, and take every (n+1)-th
		// element: the diagonal.
		rest := make([]int, 0, a.NDim())
		for k := range a.NDim() {
			if k != i && k != j {
				rest = append(rest, k)
			}
		}
		t := Transpose(a, append(slices.Clone(rest), i, j)...)
		shape := make([]int, 0, len(rest)+1)
		for _, k := range rest {
			shape = append(shape, a.shape[k])
		}
		flat := Reshape(t, append(slices.Clone(shape), n*n)...)
		idx := make([]int64, n)
		for k := range idx {
			idx[k] = int64(k * (n + 1))
		}
		a = Take(flat, a.Session().FromSlice(a.st.dev, idx, n), len(shape))
		newSub := make([]rune, 0, len(rest)+1)
		for _, k := range rest {
			newSub = append(newSub, sub[k])
		}
		sub = append(newSub, sub[i])
	}
}

// sumUnneeded sums the axes of a whose letters keep rejects.
func sumUnneeded(a *NDArray, sub []rune, keep func(rune) bool) (*NDArray, []rune) {
	var axes []int
	var rest []rune
	for k, l := range sub {
		if keep(l) {
			rest = append(rest, l)
		} else {
			axes = append(axes, k)
		}
	}
	if len(axes) == 0 {
		return a, sub
	}
	return Sum(a, axes...), rest
}

// contractPair multiplies a and b, summing the letters they share that
// keep rejects, as one batched MatMul: a to [batch..., m, k], b to
// [batch..., k, n] (batch axes of size 1 broadcast without copies), or as
// a broadcast Mul when nothing is summed. Letters in both that keep
// accepts are batch axes; the result's letters are the batch ones, a's
// own, then b's own.
func contractPair(a *NDArray, as []rune, b *NDArray, bs []rune, keep func(rune) bool, sizes map[rune]int) (*NDArray, []rune) {
	var batch, con, ao, bo []rune
	for _, l := range as {
		switch {
		case !slices.Contains(bs, l):
			ao = append(ao, l)
		case keep(l):
			batch = append(batch, l)
		default:
			con = append(con, l)
		}
	}
	for _, l := range bs {
		if !slices.Contains(as, l) {
			bo = append(bo, l)
		}
	}
	// arrange permutes x (letters xs) into the batch letters, then the
	// groups, and reshapes it to [batch axes..., one axis per group]: the
	// batch axes keep their own sizes (1 broadcasts in MatMul and Mul,
	// which copy nothing for it), contracted letters of size 1 are
	// broadcast to the other operand's size.
	arrange := func(x *NDArray, xs []rune, groups ...[]rune) *NDArray {
		order := slices.Clone(batch)
		for _, g := range groups {
			order = append(order, g...)
		}
		perm := make([]int, len(order))
		for k, l := range order {
			perm[k] = slices.Index(xs, l)
		}
		if !slices.Equal(perm, identity(len(perm))) {
			x = Transpose(x, perm...)
		}
		full := slices.Clone(x.shape)
		for k, l := range order {
			if slices.Contains(con, l) {
				full[k] = sizes[l]
			}
		}
		if !slices.Equal(full, x.shape) {
			x = BroadcastTo(x, full...)
		}
		dims := slices.Clone(full[:len(batch)])
		if !slices.ContainsFunc(dims, func(d int) bool { return d != 1 }) {
			dims = nil // all 1: a plain matrix, which MatMul applies to every matrix of the other without a copy
		}
		k := len(batch)
		for _, grp := range groups {
			d := 1
			for range grp {
				d *= full[k]
				k++
			}
			dims = append(dims, d)
		}
		return Reshape(x, dims...)
	}
	var y *NDArray
	if len(con) == 0 {
		// Nothing to sum: a broadcast product, [batch..., m, 1]·[batch..., 1, n].
		am := arrange(a, as, ao, nil)
		bm := arrange(b, bs, nil, bo)
		y = Mul(am, bm)
	} else {
		y = MatMul(arrange(a, as, ao, con), arrange(b, bs, con, bo)) // [batch..., m, n]
	}
	shape := make([]int, 0, len(batch)+len(ao)+len(bo))
	for _, l := range batch {
		shape = append(shape, sizes[l])
	}
	for _, l := range ao {
		shape = append(shape, a.shape[slices.Index(as, l)])
	}
	for _, l := range bo {
		shape = append(shape, b.shape[slices.Index(bs, l)])
	}
	sub := append(append(slices.Clone(batch), ao...), bo...)
	return Reshape(y, shape...), sub
}
