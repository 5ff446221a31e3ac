package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// floatInput reads a CHW or HW float32 image, the input of the transforms
// that work after ToTensor.
func floatInput(op string, x data.Tensor) (geom, error) {
	if x.U8 != nil {
		return geom{}, inputError(op, x, "want a CHW float32 image, got uint8 (apply ToTensor first)")
	}
	return geometry(op, x)
}

// eraseValues returns the erasing values of a c-channel image: value
// repeated when it has one element, 0 when it has none.
func eraseValues(op string, x data.Tensor, value []float32, c int) ([]float32, error) {
	switch len(value) {
	case 0:
		return make([]float32, c), nil
	case 1:
		v := make([]float32, c)
		for i := range v {
			v[i] = value[0]
		}
		return v, nil
	case c:
		return value, nil
	}
	return nil, inputError(op, x, "value %v has neither 1 nor %d elements", value, c)
}

// erase returns a copy of the CHW float32 image x with the h×w rectangle at
// (top, left) set to value[c] in channel c, or, when noise is set, to
// standard normal values drawn from rng in CHW order.
func erase(x data.Tensor, g geom, top, left, h, w int, value []float32, noise *rand.Rand) data.Tensor {
	out := append([]float32(nil), x.F32...)
	n := g.h * g.w
	for c := range g.c {
		for y := top; y < top+h; y++ {
			row := out[c*n+y*g.w+left : c*n+y*g.w+left+w]
			for i := range row {
				if noise != nil {
					row[i] = float32(noise.NormFloat64())
				} else {
					row[i] = value[c]
				}
			}
		}
	}
	return data.Tensor{Shape: x.Shape, F32: out}
}

// Erase returns torchvision's erase(img, top, left, h, w, v) with a
// constant v: the h rows by w columns from (top, left) of a CHW (or HW)
// float32 image are set to value, one value for every channel, one per
// channel, or 0 when value is empty. The rectangle must lie inside the
// image; uint8 images are an input error, as in RandomErasing.
func Erase(top, left, h, w int, value ...float32) data.Transform {
	const op = "Erase"
	if top < 0 || left < 0 || h < 0 || w < 0 {
		return argError(op, "want a rectangle of non-negative position and size, got top %d left %d size %dx%d", top, left, h, w)
	}
	value = append([]float32(nil), value...)
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := floatInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if top+h > g.h || left+w > g.w {
			return data.Tensor{}, inputError(op, x, "rectangle %dx%d at (%d, %d) is outside the image", h, w, top, left)
		}
		v, err := eraseValues(op, x, value, g.c)
		if err != nil {
			return data.Tensor{}, err
		}
		return erase(x, g, top, left, h, w, v, nil), nil
	}
}

// RandomErasing returns torchvision's RandomErasing(p, scale, ratio, value)
// (Zhong et al.'s random erasing) for CHW or HW float32 images, usually
// after ToTensor and Normalize: with probability p (one rng.Float64()) it
// makes up to ten attempts to draw a rectangle whose area is a fraction of
// the image's drawn uniformly from [scale[0], scale[1]] and whose
// height/width ratio is drawn log-uniformly from [ratio[0], ratio[1]]
// (sides sqrt(area·ratio) rows by sqrt(area/ratio) columns, rounded half
// to even); the first that is smaller than the image in both sides is
// placed uniformly (top, then left) and set to value: one value for every
// channel, one per channel, or 0 when empty (torchvision's default).
// When no attempt fits, or the p draw fails, the input is returned as is.
// torchvision's defaults are p 0.5, scale {0.02, 0.33}, ratio {0.3, 3.3}.
// The draws come from rng, so they follow torchvision's distribution, not
// its sequence. Arguments outside torchvision's bounds (p or scale outside
// [0, 1], ratio not positive, min > max) are argument errors; uint8 images
// and a value of the wrong length are input errors.
func RandomErasing(p float64, scale, ratio [2]float64, value ...float32) data.Transform {
	return randomErasing("RandomErasing", p, scale, ratio, append([]float32(nil), value...), false)
}

// RandomErasingNoise returns RandomErasing with torchvision's
// value="random": the erased rectangle is filled with standard normal
// values, drawn from rng (rng.NormFloat64(), channel by channel, row by
// row) after the rectangle's position.
func RandomErasingNoise(p float64, scale, ratio [2]float64) data.Transform {
	return randomErasing("RandomErasingNoise", p, scale, ratio, nil, true)
}

func randomErasing(op string, p float64, scale, ratio [2]float64, value []float32, noise bool) data.Transform {
	switch {
	case !(p >= 0 && p <= 1):
		return argError(op, "probability %v is outside [0, 1]", p)
	case !(scale[0] >= 0 && scale[0] <= scale[1] && scale[1] <= 1):
		return argError(op, "want 0 <= scale[0] <= scale[1] <= 1, got %v", scale)
	case !(ratio[0] > 0 && ratio[0] <= ratio[1]) || math.IsInf(ratio[1], 1):
		return argError(op, "want 0 < ratio[0] <= ratio[1] < +Inf, got %v", ratio)
	}
	logLo, logHi := math.Log(ratio[0]), math.Log(ratio[1])
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := floatInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		v, err := eraseValues(op, x, value, g.c)
		if err != nil {
			return data.Tensor{}, err
		}
		if rng.Float64() >= p {
			return x, nil
		}
		area := float64(g.h * g.w)
		for range 10 {
			target := area * uniform(rng, scale)
			aspect := math.Exp(uniform(rng, [2]float64{logLo, logHi}))
			h := int(math.RoundToEven(math.Sqrt(target * aspect)))
			w := int(math.RoundToEven(math.Sqrt(target / aspect)))
			if !(h < g.h && w < g.w) {
				continue
			}
			top, left := rng.IntN(g.h-h+1), rng.IntN(g.w-w+1)
			var src *rand.Rand
			if noise {
				src = rng
			}
			return erase(x, g, top, left, h, w, v, src), nil
		}
		return x, nil
	}
}
