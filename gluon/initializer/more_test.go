package initializer_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// TestKaiming: the standard deviation is gain/√fan for each mode and
// nonlinearity, uniform values stay within √3·std, and PyTorch's default
// for Linear and Conv (slope √5) is U(±1/√fan_in).
func TestKaiming(t *testing.T) {
	shape := []int{64, 32, 3, 3} // fan_in 288, fan_out 576
	cases := []struct {
		name string
		init initializer.Kaiming
		std  float64
	}{
		{"uniform relu fan_in", initializer.Kaiming{}, math.Sqrt2 / math.Sqrt(288)},
		{"normal relu fan_out", initializer.Kaiming{Normal: true, Mode: "fan_out", Nonlinearity: "relu"}, math.Sqrt2 / math.Sqrt(576)},
		{"uniform tanh", initializer.Kaiming{Nonlinearity: "tanh"}, 5.0 / 3 / math.Sqrt(288)},
		{"torch default", initializer.Kaiming{Slope: math.Sqrt(5)}, 1 / math.Sqrt(3*288)},
		{"normal linear", initializer.Kaiming{Normal: true, Nonlinearity: "linear"}, 1 / math.Sqrt(288)},
	}
	for _, c := range cases {
		m := stats(t, draw(c.init, 3, shape...))
		if math.Abs(m.std-c.std) > 0.03*c.std || math.Abs(m.mean) > 0.05*c.std {
			t.Errorf("%s: mean %.4g std %.4g, want 0 and %.4g", c.name, m.mean, m.std, c.std)
		}
		if !c.init.Normal && (m.max > math.Sqrt(3)*c.std || m.min < -math.Sqrt(3)*c.std) {
			t.Errorf("%s: values in [%g, %g], beyond ±%g", c.name, m.min, m.max, math.Sqrt(3)*c.std)
		}
	}
	if m := stats(t, draw(initializer.Kaiming{Slope: math.Sqrt(5)}, 4, 100, 400)); m.max > 1.0/20 || m.max < 0.99/20 {
		t.Errorf("torch's Linear default on fan_in 400: max %g, want just under 1/20", m.max)
	}
	for _, bad := range []initializer.Kaiming{{Mode: "fan_avg"}, {Nonlinearity: "swish"}} {
		if err := nd.Catch(func() { draw(bad, 1, 4, 4) }); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestGain is PyTorch's calculate_gain table.
func TestGain(t *testing.T) {
	for _, c := range []struct {
		nl    string
		slope float64
		want  float64
	}{{"linear", 0, 1}, {"conv2d", 0, 1}, {"sigmoid", 0, 1}, {"tanh", 0, 5.0 / 3}, {"relu", 0, math.Sqrt2},
		{"leaky_relu", 0.01, math.Sqrt(2 / (1 + 0.0001))}, {"selu", 0, 0.75}, {"conv_transpose2d", 0, 1}} {
		if got := initializer.Gain(c.nl, c.slope); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Gain(%q, %g) = %v, want %v", c.nl, c.slope, got, c.want)
		}
	}
}

// TestTruncatedNormal: values stay within the bounds and their mean and
// standard deviation are the truncated distribution's.
func TestTruncatedNormal(t *testing.T) {
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	Phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []initializer.TruncatedNormal{
		{}, // torch's defaults: N(0, 1) within [−2, 2]
		{Mean: 0.5, Std: 0.02, Low: 0.48, High: 0.6},
		{Std: 3, Low: -1, High: 2},
		{Std: 0.02}, // timm's ViT: the bounds ±2 are 100 deviations out
	} {
		v := draw(c, 7, 200, 500)
		std := c.Std
		if std == 0 {
			std = 1
		}
		lo, hi := c.Low, c.High
		if lo == 0 && hi == 0 {
			lo, hi = -2, 2
		}
		a, b := (lo-c.Mean)/std, (hi-c.Mean)/std
		z := Phi(b) - Phi(a)
		mean := c.Mean + std*(phi(a)-phi(b))/z
		sd := std * math.Sqrt(1+(a*phi(a)-b*phi(b))/z-math.Pow((phi(a)-phi(b))/z, 2))
		m := stats(t, v)
		if m.min < lo || m.max > hi {
			t.Errorf("%+v: values in [%g, %g], outside [%g, %g]", c, m.min, m.max, lo, hi)
		}
		if math.Abs(m.mean-mean) > 0.01*sd || math.Abs(m.std-sd) > 0.01*sd {
			t.Errorf("%+v: mean %.5g std %.5g, want %.5g and %.5g", c, m.mean, m.std, mean, sd)
		}
	}
	if err := nd.Catch(func() { draw(initializer.TruncatedNormal{Low: 1, High: -1}, 1, 3) }); err == nil {
		t.Error("an empty range: no error")
	}
}

// TestOrthogonal: the rows (or, for tall weights, the columns) of the
// weight seen as a matrix are orthogonal with norm Gain.
func TestOrthogonal(t *testing.T) {
	for _, c := range []struct {
		shape []int
		gain  float64
	}{{[]int{4, 6}, 0}, {[]int{6, 4}, 1.5}, {[]int{8, 2, 3, 3}, math.Sqrt2}, {[]int{5, 5}, 1}} {
		v := draw(initializer.Orthogonal{Gain: c.gain}, 9, c.shape...)
		rows := c.shape[0]
		cols := len(v) / rows
		g := c.gain
		if g == 0 {
			g = 1
		}
		dot := func(i, j int, byRow bool) float64 {
			s := 0.0
			if byRow {
				for k := range cols {
					s += v[i*cols+k] * v[j*cols+k]
				}
			} else {
				for k := range rows {
					s += v[k*cols+i] * v[k*cols+j]
				}
			}
			return s
		}
		byRow := rows <= cols
		n := min(rows, cols)
		for i := range n {
			for j := range n {
				want := 0.0
				if i == j {
					want = g * g
				}
				if got := dot(i, j, byRow); math.Abs(got-want) > 1e-12 {
					t.Fatalf("%v gain %g: (%d, %d) product %v, want %v", c.shape, c.gain, i, j, got, want)
				}
			}
		}
	}
	if !slices.Equal(draw(initializer.Orthogonal{}, 5, 3, 4), draw(initializer.Orthogonal{}, 5, 3, 4)) {
		t.Error("the same generator gave other values")
	}
}

// TestBilinear: the kernel of a ×2 upsampling (k = 4) is the outer
// product of [¼ ¾ ¾ ¼], in every channel.
func TestBilinear(t *testing.T) {
	v := draw(initializer.Bilinear{}, 1, 2, 1, 4, 4)
	w := []float64{0.25, 0.75, 0.75, 0.25}
	for i, got := range v {
		if want := w[(i/4)%4] * w[i%4]; math.Abs(got-want) > 1e-15 {
			t.Fatalf("element %d: %v, want %v", i, got, want)
		}
	}
	if err := nd.Catch(func() { draw(initializer.Bilinear{}, 1, 2, 3, 3) }); err == nil {
		t.Error("a 3-D weight: no error")
	}
}
