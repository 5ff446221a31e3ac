package backend

// UnaryOp names an elementwise function of one array.
type UnaryOp uint8

// The unary ops. p1 and p2 are the scalar parameters where an op has them.
const (
	Neg        UnaryOp = iota
	Exp                // e^x
	Log                // ln x
	Sqrt               // √x
	Tanh               // tanh x
	Sigmoid            // 1/(1+e^-x)
	Relu               // max(x, 0)
	Abs                // |x|
	Sign               // -1, 0, 1
	Square             // x²
	Softrelu           // ln(1+e^x), computed stably
	AddScalar          // x + p1
	MulScalar          // x * p1
	RSubScalar         // p1 - x
	RDivScalar         // p1 / x
	PowScalar          // x ^ p1
	RPowScalar         // p1 ^ x
	Clip               // min(max(x, p1), p2)
	MaxScalar          // max(x, p1)
	MinScalar          // min(x, p1)
	Step               // 1 if x > 0 else 0
	RSqrt              // 1/√x
	Erf                // the error function
	Log1p              // ln(1+x), accurate near 0
	Expm1              // e^x - 1, accurate near 0
	Sin                // sin x
	Cos                // cos x
	Reciprocal         // 1/x
	LogicalNot         // 1 where x == 0 else 0 (Bool: not)
	Floor              // the largest integer ≤ x
	Ceil               // the smallest integer ≥ x
	Round              // the nearest integer, halves to even
	Trunc              // x rounded toward zero
	Tan                // tan x
	Asin               // arcsin x, in [−π/2, π/2]
	Acos               // arccos x, in [0, π]
	Atan               // arctan x, in (−π/2, π/2)
	Sinh               // sinh x
	Cosh               // cosh x
	Asinh              // arsinh x
	Acosh              // arcosh x (x ≥ 1)
	Atanh              // artanh x (|x| < 1)
	Log2               // log₂ x
	Log10              // log₁₀ x
	Exp2               // 2^x
	Erfinv             // the inverse of erf, on (−1, 1)
	Lgamma             // log |Γ(x)|
	Digamma            // ψ(x) = Γ'(x)/Γ(x)
	Trigamma           // ψ'(x)
	numUnary
)

// BinaryOp names an elementwise function of two arrays.
type BinaryOp uint8

// The binary ops.
const (
	Add BinaryOp = iota
	Sub
	Mul
	Div
	Pow
	Maximum
	Minimum
	Equal        // 1 where a == b else 0
	NotEqual     // 1 where a != b
	Greater      // 1 where a > b
	GreaterEqual // 1 where a >= b
	Less         // 1 where a < b
	LessEqual    // 1 where a <= b
	ReluGrad     // b where a > 0 else 0 (a: input, b: output gradient)
	SigmoidGrad  // b * a * (1-a) (a: sigmoid output)
	TanhGrad     // b * (1 - a²) (a: tanh output)
	SoftreluGrad // b * sigmoid(a) (a: input)
	LogicalAnd   // 1 where a != 0 and b != 0
	LogicalOr    // 1 where a != 0 or b != 0
	LogicalXor   // 1 where exactly one of a, b is non-zero
	FloorDiv     // ⌊a/b⌋ (Python's //)
	Mod          // a − b·⌊a/b⌋: the divisor's sign (Python's %, NumPy's mod)
	Fmod         // a − b·trunc(a/b): the dividend's sign (C's fmod)
	Atan2        // the angle of the point (b, a): arctan(a/b) in the right quadrant, in [−π, π]
	Hypot        // √(a² + b²) without overflow
	numBinary
)

// ReduceOp names a reduction.
type ReduceOp uint8

// The reductions.
const (
	Sum ReduceOp = iota
	Max
	Min
	ArgMax
	ArgMin
)

// IntUnaryOps are the unary ops defined on integer dtypes (computed in the
// integer type; scalars are truncated to it).
var IntUnaryOps = []UnaryOp{Neg, Relu, Abs, Sign, Square, AddScalar, MulScalar, RSubScalar,
	Clip, MaxScalar, MinScalar, Step, LogicalNot, Floor, Ceil, Round, Trunc}

// IntBinaryOps are the binary ops defined on integer dtypes.
var IntBinaryOps = []BinaryOp{Add, Sub, Mul, Div, Maximum, Minimum, Equal, NotEqual,
	Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalOr, LogicalXor, FloorDiv, Mod, Fmod}

// IsComparison reports whether op is one of the comparisons (Equal ...
// LessEqual), whose result may be Bool.
func (op BinaryOp) IsComparison() bool { return op >= Equal && op <= LessEqual }

// IsLogical reports whether op is LogicalAnd, LogicalOr or LogicalXor.
func (op BinaryOp) IsLogical() bool { return op >= LogicalAnd && op <= LogicalXor }
