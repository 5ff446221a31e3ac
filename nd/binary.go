package nd

import "github.com/goluon/goluon/nd/backend"

// binaryRaw validates a and b and computes op(a, b) with broadcasting,
// without recording.
func binaryRaw(op string, code backend.BinaryOp, a, b *NDArray) *NDArray {
	return binaryInto(op, code, a, b, a.dtype)
}

// binaryInto is binaryRaw with a result of dtype dt (the inputs' or Bool).
func binaryInto(op string, code backend.BinaryOp, a, b *NDArray, dt DType) *NDArray {
	if autocasting.Load() > 0 && a != nil && b != nil && a.dtype != b.dtype {
		in := []*NDArray{a, b}
		if made := autocast(op, castWidest, in, 0); len(made) > 0 {
			if dt == a.dtype {
				dt = in[0].dtype
			}
			out := binaryInto(op, code, in[0], in[1], dt)
			castsDone(out, made)
			return out
		}
	}
	defer checkInputs(op, a, b).done()
	checkBinaryDType(op, code, a.dtype)
	shape := broadcastShape(op, a.shape, b.shape)
	if a.dtype.IsHalf() && (dt == a.dtype || dt == Bool) && nativeHalfElem(a) { // the backend's own half kernels (the same bits)
		out := newArray(op, sessionOf(op, a, b), a.st.dev, dt, shape)
		a.be().Binary(code, shape, out.storageArg(), bcastStorage(a, shape), bcastStorage(b, shape))
		return out
	}
	if a.dtype.IsHalf() {
		wa, wb := widened(a), widened(b)
		defer releaseWidened([]*NDArray{a, b}, []*NDArray{wa, wb})
		if dt == a.dtype {
			dt = Float32
		}
		return narrowed(binaryInto(op, code, wa, wb, dt), a.dtype)
	}
	out := newArray(op, sessionOf(op, a, b), a.st.dev, dt, shape)
	a.be().Binary(code, shape, out.arg(), bcastArg(a, shape), bcastArg(b, shape))
	return out
}

// binaryOp computes and records a differentiable binary op. grad returns
// the full-shape gradients of a and b; they are summed back to the inputs'
// shapes here.
func binaryOp(op string, code backend.BinaryOp, a, b *NDArray, grad func(g, out *NDArray, need []bool) (ga, gb *NDArray)) *NDArray {
	out := binaryRaw(op, code, a, b)
	RecordDiff(op, out, []*NDArray{a, b}, func(g *NDArray, need []bool) []*NDArray {
		ga, gb := grad(g, out, need)
		return []*NDArray{reduceGrad(ga, a.shape), reduceGrad(gb, b.shape)}
	}, binaryDiffFor(op, a, b, out, grad))
	return out
}

// reduceGrad sums a full-shape gradient down to an input's shape and
// releases the full-shape one.
func reduceGrad(g *NDArray, shape []int) *NDArray {
	if g == nil {
		return nil
	}
	r := sumTo(g, shape)
	g.Release()
	return r
}

func mulRaw(a, b *NDArray) *NDArray { return binaryRaw("Mul", bMul, a, b) }

// Add returns a + b, broadcasting.
func Add(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Add", castWidest, a, b); again {
		out := Add(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Add", bAdd, a, b, func(g, _ *NDArray, need []bool) (*NDArray, *NDArray) {
		return pass(g, need[0]), pass(g, need[1])
	})
}

// Sub returns a - b, broadcasting.
func Sub(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Sub", castWidest, a, b); again {
		out := Sub(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Sub", bSub, a, b, func(g, _ *NDArray, need []bool) (*NDArray, *NDArray) {
		var gb *NDArray
		if need[1] {
			gb = unaryRaw("Sub", backend.Neg, g, 0, 0)
		}
		return pass(g, need[0]), gb
	})
}

// Mul returns a * b elementwise, broadcasting.
func Mul(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Mul", castWidest, a, b); again {
		out := Mul(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Mul", bMul, a, b, func(g, _ *NDArray, need []bool) (ga, gb *NDArray) {
		if need[0] {
			ga = mulRaw(g, b)
		}
		if need[1] {
			gb = mulRaw(g, a)
		}
		return
	})
}

// Div returns a / b elementwise, broadcasting. On integer dtypes it
// truncates toward zero (Div(-7, 2) = -3) and a zero divisor gives 0;
// FloorDiv floors.
func Div(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Div", castWidest, a, b); again {
		out := Div(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Div", bDiv, a, b, func(g, out *NDArray, need []bool) (ga, gb *NDArray) {
		if need[0] {
			ga = binaryRaw("Div", bDiv, g, b)
		}
		if need[1] { // d(a/b)/db = -out/b
			t := binaryRaw("Div", bDiv, out, b)
			gb = mulRaw(g, t)
			t.Release()
			unaryInPlace(gb, backend.Neg, 0, 0)
		}
		return
	})
}

// Pow returns a ** b elementwise, broadcasting.
func Pow(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Pow", castFloat32, a, b); again {
		out := Pow(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Pow", backend.Pow, a, b, func(g, out *NDArray, need []bool) (ga, gb *NDArray) {
		if need[0] { // b * a^(b-1)
			bm1 := unaryRaw("Pow", backend.AddScalar, b, -1, 0)
			t := binaryRaw("Pow", backend.Pow, a, bm1)
			t2 := mulRaw(t, b)
			ga = mulRaw(g, t2)
			release(bm1, t, t2)
		}
		if need[1] { // out * ln a
			la := unaryRaw("Pow", backend.Log, a, 0, 0)
			t := mulRaw(out, la)
			gb = mulRaw(g, t)
			release(la, t)
		}
		return
	})
}

// Maximum returns the elementwise maximum of a and b. Where they are equal
// the gradient goes to a.
func Maximum(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Maximum", castWidest, a, b); again {
		out := Maximum(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Maximum", backend.Maximum, a, b, func(g, _ *NDArray, need []bool) (*NDArray, *NDArray) {
		return maskedGrads(g, a, b, backend.GreaterEqual, need)
	})
}

// Minimum returns the elementwise minimum of a and b. Where they are equal
// the gradient goes to a.
func Minimum(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Minimum", castWidest, a, b); again {
		out := Minimum(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Minimum", backend.Minimum, a, b, func(g, _ *NDArray, need []bool) (*NDArray, *NDArray) {
		return maskedGrads(g, a, b, backend.LessEqual, need)
	})
}

// maskedGrads sends g to a where cmp(a, b) holds and to b elsewhere.
func maskedGrads(g, a, b *NDArray, cmp backend.BinaryOp, need []bool) (ga, gb *NDArray) {
	m := binaryRaw("mask", cmp, a, b)
	if need[0] {
		ga = mulRaw(g, m)
	}
	if need[1] {
		inv := unaryRaw("mask", backend.RSubScalar, m, 1, 0)
		gb = mulRaw(g, inv)
		inv.Release()
	}
	m.Release()
	return
}

// pass returns a view of g when the input needs a gradient.
func pass(g *NDArray, need bool) *NDArray {
	if !need {
		return nil
	}
	return g.view(0, g.shape)
}

func release(arrs ...*NDArray) {
	for _, a := range arrs {
		a.Release()
	}
}

// The comparisons return a Bool array, true where the relation holds,
// with broadcasting; their inputs may have any dtype (the same for both).
// They are not differentiable.

// Equal returns a == b elementwise.
func Equal(a, b *NDArray) *NDArray { return binaryInto("Equal", backend.Equal, a, b, Bool) }

// NotEqual returns a != b elementwise.
func NotEqual(a, b *NDArray) *NDArray {
	return binaryInto("NotEqual", backend.NotEqual, a, b, Bool)
}

// Greater returns a > b elementwise.
func Greater(a, b *NDArray) *NDArray { return binaryInto("Greater", backend.Greater, a, b, Bool) }

// GreaterEqual returns a >= b elementwise.
func GreaterEqual(a, b *NDArray) *NDArray {
	return binaryInto("GreaterEqual", backend.GreaterEqual, a, b, Bool)
}

// Less returns a < b elementwise.
func Less(a, b *NDArray) *NDArray { return binaryInto("Less", backend.Less, a, b, Bool) }

// LessEqual returns a <= b elementwise.
func LessEqual(a, b *NDArray) *NDArray {
	return binaryInto("LessEqual", backend.LessEqual, a, b, Bool)
}

// LogicalAnd returns a Bool array, true where a and b are both non-zero.
func LogicalAnd(a, b *NDArray) *NDArray {
	return binaryInto("LogicalAnd", backend.LogicalAnd, a, b, Bool)
}

// LogicalOr returns a Bool array, true where a or b is non-zero.
func LogicalOr(a, b *NDArray) *NDArray {
	return binaryInto("LogicalOr", backend.LogicalOr, a, b, Bool)
}

// LogicalXor returns a Bool array, true where exactly one of a and b is
// non-zero.
func LogicalXor(a, b *NDArray) *NDArray {
	return binaryInto("LogicalXor", backend.LogicalXor, a, b, Bool)
}

// LogicalNot returns a Bool array, true where x is zero (false).
func LogicalNot(x *NDArray) *NDArray {
	const op = "LogicalNot"
	defer checkLive(op, x).done()
	if x.dtype == Bool {
		return unaryRaw(op, backend.LogicalNot, x, 0, 0)
	}
	t := x.AsType(Bool)
	defer t.Release()
	return unaryRaw(op, backend.LogicalNot, t, 0, 0)
}
