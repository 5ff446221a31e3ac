package nd

import "github.com/goluon/goluon/nd/backend"

// cumsumRaw computes the running sum along axis without recording.
func cumsumRaw(op string, x *NDArray, ax int) *NDArray {
	outer, n, inner := axisDims(x.shape, ax)
	out := newArray(op, x.Session(), x.st.dev, x.dtype, x.shape)
	if out.Size() == 0 {
		return out
	}
	runIndexed("Cumsum", out, []*NDArray{x}, func(k backend.IndexKernels, out *NDArray, in []*NDArray) {
		k.Cumsum(outer, n, inner, out.arg(), in[0].arg())
	})
	return out
}

// Cumsum returns the inclusive running sum of x along axis (NumPy's and
// PyTorch's cumsum), added in order in x's dtype (an integer or Bool array
// sums into Int64). The gradient is the reversed running sum of the output
// gradient.
func Cumsum(x *NDArray, axis int) *NDArray {
	return dispatch("Cumsum", castFloat32, []*NDArray{x}, func(in []*NDArray) *NDArray { return cumsumOp(in[0], axis) })
}

func cumsumOp(x *NDArray, axis int) *NDArray {
	const op = "Cumsum"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	if !x.dtype.IsFloat() && x.dtype != Int64 {
		t := x.AsType(Int64)
		defer t.Release()
		x = t
	}
	out := cumsumRaw(op, x, ax)
	back := func(g *NDArray) *NDArray {
		f := flipRaw(g, ax)
		c := cumsumRaw(op, f, ax)
		r := flipRaw(c, ax)
		release(f, c)
		return r
	}
	RecordDiff(op, out, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{back(g)}
	}, linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return Cumsum(h, ax) }))
	return out
}

// sortRaw sorts x along ax into values and Int64 positions.
func sortRaw(op string, x *NDArray, ax int, desc bool) (vals, idx *NDArray) {
	if x.dtype.IsHalf() {
		w := widened(x)
		defer w.Release()
		vals, idx = sortRaw(op, w, ax, desc)
		return narrowed(vals, x.dtype), idx
	}
	outer, n, inner := axisDims(x.shape, ax)
	vals = newArray(op, x.Session(), x.st.dev, x.dtype, x.shape)
	idx = newArray(op, x.Session(), x.st.dev, Int64, x.shape)
	if x.Size() == 0 {
		return vals, idx
	}
	if k, ok := kernelsOf[backend.IndexKernels](x.be()); ok {
		k.Sort(outer, n, inner, desc, vals.arg(), idx.arg(), x.arg())
		return vals, idx
	}
	warnHostFallback("Sort", x.be())
	host := []*NDArray{newArray(op, x.Session(), hostCPU, x.dtype, x.shape), newArray(op, x.Session(), hostCPU, Int64, x.shape), newArray(op, x.Session(), hostCPU, x.dtype, x.shape)}
	transfer(host[2], x)
	hostIndex().Sort(outer, n, inner, desc, host[0].arg(), host[1].arg(), host[2].arg())
	transfer(vals, host[0])
	transfer(idx, host[1])
	release(host...)
	return vals, idx
}

// Sort returns x sorted along axis, ascending or, with descending,
// descending, and the Int64 positions the values came from (PyTorch's
// torch.sort with stable=True). Equal values keep their order; NaN sorts
// above every number. The gradient of the values flows back to the
// positions they came from.
func Sort(x *NDArray, axis int, descending bool) (values, indices *NDArray) {
	const op = "Sort"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	vals, idx := sortRaw(op, x, ax, descending)
	outer, n, inner := axisDims(x.shape, ax)
	p := backend.GatherParams{Outer: outer, N: n, M: n, Inner: inner}
	back := func(g *NDArray) *NDArray { return scatterGrad(p, g, x, idx, nil) }
	RecordDiff(op, vals, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{back(g)}
	}, linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return Gather(h, idx, ax) }))
	return vals, idx
}

// ArgSort returns the Int64 positions that sort x along axis (stably;
// NaN last ascending), as NumPy's argsort and PyTorch's argsort.
func ArgSort(x *NDArray, axis int, descending bool) *NDArray {
	const op = "ArgSort"
	defer checkLive(op, x).done()
	vals, idx := sortRaw(op, x, normAxis(op, axis, x.NDim()), descending)
	vals.Release()
	return idx
}

// TopK returns the k largest elements of x along axis (the k smallest
// with largest false), sorted, and their Int64 positions, as PyTorch's
// topk with sorted=True; ties keep the lower position first. The values'
// gradient flows back to the positions they came from.
func TopK(x *NDArray, k, axis int, largest bool) (values, indices *NDArray) {
	const op = "TopK"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	if k < 0 || k > x.shape[ax] {
		fail(op, ErrArgument, "k = %d out of range for axis %d of shape %v", k, axis, x.shape)
	}
	vals, idx := Sort(x, ax, largest)
	ranges := make([]Range, x.NDim())
	ranges[ax] = Span(0, k)
	values, indices = Slice(vals, ranges...), Slice(idx, ranges...)
	if !x.Session().IsRecording() {
		release(vals, idx)
	}
	return values, indices
}

// Norm returns the L1 (ord 1) or L2 (ord 2) norm of x over the given axes
// (all when none are given), removing them from the shape. The L2 norm's
// gradient is x/‖x‖, and 0 where the norm is 0 (PyTorch's choice of
// subgradient).
func Norm(x *NDArray, ord int, axes ...int) *NDArray { return norm(x, ord, false, axes) }

// NormKeepDims is Norm that keeps the reduced axes with size 1.
func NormKeepDims(x *NDArray, ord int, axes ...int) *NDArray { return norm(x, ord, true, axes) }

func norm(x *NDArray, ord int, keep bool, axes []int) *NDArray {
	const op = "Norm"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if x2, made := autocast1(op, castFloat32, x); len(made) > 0 {
		out := norm(x2, ord, keep, axes)
		castsDone(out, made)
		return out
	}
	if x.dtype.IsHalf() {
		return viaFloat32(x.dtype, func(w []*NDArray) *NDArray { return norm(w[0], ord, keep, axes) }, x)
	}
	switch ord {
	case 1:
		a := Abs(x)
		if keep {
			return SumKeepDims(a, axes...)
		}
		return Sum(a, axes...)
	case 2:
	default:
		fail(op, ErrArgument, "ord %d: only 1 and 2 are supported", ord)
	}
	mask := axesMask(op, x.NDim(), axes)
	sq := unaryRaw(op, backend.Square, x, 0, 0)
	s := reduceRaw(op, backend.Sum, sq, mask)
	yk := unaryRaw(op, backend.Sqrt, s, 0, 0)
	release(sq, s)
	kshape, shape := yk.shape, yk.shape
	if !keep {
		shape = droppedShape(x.shape, mask)
	}
	y := yk.view(0, shape)
	yk.Release()
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		gk := g.view(0, kshape)
		yk := y.view(0, kshape)
		zero := x.Session().Full(x.st.dev, x.dtype, 0, 1)
		pos := binaryInto(op, backend.Greater, yk, zero, Bool)
		one := x.Session().Full(x.st.dev, x.dtype, 1, 1)
		den := whereRaw(op, pos, yk, one) // 1 where the norm is 0 (then x is 0 too)
		q := binaryRaw(op, bDiv, gk, den)
		r := mulRaw(x, q)
		release(gk, yk, zero, pos, one, den, q)
		return []*NDArray{r}
	}, func(g *NDArray, _ []bool) []*NDArray { // x·g/‖x‖, 0 where the norm is 0
		yk := Reshape(y, kshape...)
		zero := x.Session().Full(x.st.dev, x.dtype, 0, 1)
		one := x.Session().Full(x.st.dev, x.dtype, 1, 1)
		pos := Greater(yk.Detach(), zero)
		return []*NDArray{Mul(x, Div(Reshape(g, kshape...), Where(pos, yk, one)))}
	})
	return y
}

// Var returns the variance of x over the given axes (all when none are
// given) with ddof delta degrees of freedom: Σ(x − mean)² / (n − ddof), so
// ddof 0 is NumPy's default and ddof 1 PyTorch's. The reduced axes are
// removed from the shape. It is an error when n − ddof <= 0 unless the
// result is empty.
func Var(x *NDArray, ddof int, axes ...int) *NDArray { return variance(x, ddof, false, axes) }

// VarKeepDims is Var that keeps the reduced axes with size 1.
func VarKeepDims(x *NDArray, ddof int, axes ...int) *NDArray { return variance(x, ddof, true, axes) }

func variance(x *NDArray, ddof int, keep bool, axes []int) *NDArray {
	const op = "Var"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if x2, made := autocast1(op, castFloat32, x); len(made) > 0 {
		out := variance(x2, ddof, keep, axes)
		castsDone(out, made)
		return out
	}
	if x.dtype.IsHalf() {
		return viaFloat32(x.dtype, func(w []*NDArray) *NDArray { return variance(w[0], ddof, keep, axes) }, x)
	}
	mask := axesMask(op, x.NDim(), axes)
	n := 1 // elements per result: the product of the reduced axes' sizes
	ax := []int{}
	for d, m := range mask {
		if m {
			n *= x.shape[d]
			ax = append(ax, d)
		}
	}
	empty := numel(droppedShape(x.shape, mask)) == 0 // no result to divide
	if n-ddof <= 0 && !empty {
		fail(op, ErrArgument, "%d elements per result with ddof %d", n, ddof)
	}
	d := Sub(x, MeanKeepDims(x, ax...))
	s := SumKeepDims(Square(d), ax...)
	out := MulScalar(s, 1/float64(max(n-ddof, 1)))
	if !keep {
		out = Reshape(out, droppedShape(x.shape, mask)...)
	}
	return out
}

// Std returns the standard deviation of x, √Var(x, ddof, axes...). A
// half-precision x is computed in float32 and rounded once, so a standard
// deviation that fits the dtype is found even where its square does not.
func Std(x *NDArray, ddof int, axes ...int) *NDArray {
	return dispatch("Std", castFloat32, []*NDArray{x}, func(w []*NDArray) *NDArray { return Sqrt(Var(w[0], ddof, axes...)) })
}

// StdKeepDims is Std that keeps the reduced axes with size 1.
func StdKeepDims(x *NDArray, ddof int, axes ...int) *NDArray {
	return dispatch("StdKeepDims", castFloat32, []*NDArray{x}, func(w []*NDArray) *NDArray { return Sqrt(VarKeepDims(w[0], ddof, axes...)) })
}
