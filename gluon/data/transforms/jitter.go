package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// The four adjustments of ColorJitter, in torchvision's numbering (the
// indices its random permutation orders).
const (
	jitterBrightness = iota
	jitterContrast
	jitterSaturation
	jitterHue
)

var jitterNames = [4]string{"brightness", "contrast", "saturation", "hue"}

// jitterCentre is each adjustment's identity factor: a range of just it
// draws nothing and changes nothing (torchvision stores it as None).
var jitterCentre = [4]float64{1, 1, 1, 0}

// adjust applies adjustment k with factor f. The boolean is false when the
// image did not change (saturation and hue of one-channel images).
func adjust(k int, im planar, f float64) (planar, bool) {
	switch k {
	case jitterBrightness:
		return brightness(im, f), true
	case jitterContrast:
		return contrast(im, f), true
	case jitterSaturation:
		return saturation(im, f)
	}
	return hue(im, f)
}

// around returns torchvision's range for a single jitter amount v:
// [max(1−v, 0), 1+v] for brightness, contrast and saturation, [−v, v] for
// hue, or an error message when v is out of bounds.
func around(k int, v float64) ([2]float64, string) {
	if !(v >= 0) || math.IsInf(v, 1) {
		return [2]float64{}, jitterNames[k] + " must be finite and >= 0"
	}
	if k == jitterHue {
		if v > 0.5 {
			return [2]float64{}, "hue must be in [0, 0.5]"
		}
		return [2]float64{-v, v}, ""
	}
	return [2]float64{max(1-v, 0), 1 + v}, ""
}

// checkRange checks an explicit factor range as torchvision's
// ColorJitter._check_input checks a (min, max) pair: within [0, ∞) for
// brightness, contrast and saturation, within [−0.5, 0.5] for hue, and
// min <= max.
func checkRange(k int, r [2]float64) string {
	lo, hi := 0.0, math.Inf(1)
	if k == jitterHue {
		lo, hi = -0.5, 0.5
	}
	if !(lo <= r[0] && r[0] <= r[1] && r[1] <= hi) || math.IsInf(r[1], 1) {
		return jitterNames[k] + " range must satisfy " + bounds(k)
	}
	return ""
}

func bounds(k int) string {
	if k == jitterHue {
		return "-0.5 <= min <= max <= 0.5"
	}
	return "0 <= min <= max < +Inf"
}

// ColorJitter returns torchvision's ColorJitter(brightness, contrast,
// saturation, hue), Gluon's RandomColorJitter: for each call it draws a
// random order of the four adjustments (rng.Perm(4)), then, in the order
// brightness, contrast, saturation, hue, a factor uniformly from each
// enabled adjustment's range (one rng.Float64() each), and applies the
// enabled adjustments in the drawn order with AdjustBrightness,
// AdjustContrast, AdjustSaturation and AdjustHue. The ranges are
// torchvision's: [max(1−v, 0), 1+v] for brightness, contrast and
// saturation and [−hue, hue] for hue. An amount of 0 disables its
// adjustment (no draw). The draws come from rng, not torch's generator, so
// the factors follow torchvision's distribution, not its sequence. It
// takes 1- and 3-channel images; values and types are as the Adjust
// transforms'. Negative amounts, and a hue above 0.5, are argument
// errors; ColorJitterRange takes explicit ranges.
func ColorJitter(brightness, contrast, saturation, hue float64) data.Transform {
	const op = "ColorJitter"
	var r [4][2]float64
	for k, v := range [4]float64{brightness, contrast, saturation, hue} {
		var msg string
		if r[k], msg = around(k, v); msg != "" {
			return argError(op, "%s, got %v", msg, v)
		}
	}
	return colorJitter(op, r)
}

// ColorJitterRange returns ColorJitter with explicit [min, max] factor
// ranges, torchvision's ColorJitter given (min, max) pairs: brightness,
// contrast and saturation ranges within [0, +Inf), hue's within
// [−0.5, 0.5]. A range of just the identity factor ({1, 1}; {0, 0} for
// hue) disables its adjustment; {0, 0} for brightness always gives black.
func ColorJitterRange(brightness, contrast, saturation, hue [2]float64) data.Transform {
	const op = "ColorJitterRange"
	r := [4][2]float64{brightness, contrast, saturation, hue}
	for k := range r {
		if msg := checkRange(k, r[k]); msg != "" {
			return argError(op, "%s, got %v", msg, r[k])
		}
	}
	return colorJitter(op, r)
}

func colorJitter(op string, r [4][2]float64) data.Transform {
	var on [4]bool
	enabled := false
	for k := range r {
		on[k] = r[k] != [2]float64{jitterCentre[k], jitterCentre[k]}
		enabled = enabled || on[k]
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		im, err := colorInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		order := rng.Perm(4)
		var f [4]float64
		for k := range f {
			if on[k] {
				f[k] = uniform(rng, r[k])
			}
		}
		changed := false
		for _, k := range order {
			if on[k] {
				var c bool
				im, c = adjust(k, im, f[k])
				changed = changed || c
			}
		}
		if !enabled || !changed {
			return x, nil
		}
		return im.tensor(im.g.h, im.g.w, false), nil
	}
}

// uniform draws uniformly from [r[0], r[1]) (r[0] when they are equal).
func uniform(rng *rand.Rand, r [2]float64) float64 {
	return r[0] + (r[1]-r[0])*rng.Float64()
}

// randomAdjust is one ColorJitter adjustment alone: one draw per call.
func randomAdjust(op string, k int, v float64) data.Transform {
	r, msg := around(k, v)
	if msg != "" {
		return argError(op, "%s, got %v", msg, v)
	}
	on := r != [2]float64{jitterCentre[k], jitterCentre[k]}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		im, err := colorInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if !on {
			return x, nil
		}
		out, changed := adjust(k, im, uniform(rng, r))
		if !changed {
			return x, nil
		}
		return out.tensor(im.g.h, im.g.w, false), nil
	}
}

// RandomBrightness returns Gluon's RandomBrightness(brightness): one
// rng.Float64() per call draws a factor uniformly from
// [max(0, 1−brightness), 1+brightness], applied as AdjustBrightness
// (torchvision's formula, which Gluon shares: scale and clamp). It is
// ColorJitter(brightness, 0, 0, 0) without the order draw. A negative
// amount is an argument error.
func RandomBrightness(brightness float64) data.Transform {
	return randomAdjust("RandomBrightness", jitterBrightness, brightness)
}

// RandomContrast returns Gluon's RandomContrast(contrast): a factor drawn
// uniformly from [max(0, 1−contrast), 1+contrast] (one rng.Float64() per
// call), applied as AdjustContrast. Gluon blends with the gray mean
// weighted 0.299/0.587/0.114 and rounds uint8 results; this uses
// torchvision's 0.2989 and truncation, so uint8 results can differ from
// Gluon's by one. A negative amount is an argument error.
func RandomContrast(contrast float64) data.Transform {
	return randomAdjust("RandomContrast", jitterContrast, contrast)
}

// RandomSaturation returns Gluon's RandomSaturation(saturation): a factor
// drawn uniformly from [max(0, 1−saturation), 1+saturation] (one
// rng.Float64() per call), applied as AdjustSaturation. One-channel images
// are returned as is. A negative amount is an argument error.
func RandomSaturation(saturation float64) data.Transform {
	return randomAdjust("RandomSaturation", jitterSaturation, saturation)
}

// RandomHue returns a hue jitter named after Gluon's RandomHue(hue): a
// factor drawn uniformly from [−hue, hue] (one rng.Float64() per call,
// hue in [0, 0.5]) shifts the hue as AdjustHue does, as torchvision's
// ColorJitter(hue=hue) does. Gluon's RandomHue rotates colours by a
// different formula, so its images differ. One-channel images are returned
// as is. A hue outside [0, 0.5] is an argument error.
func RandomHue(hue float64) data.Transform {
	return randomAdjust("RandomHue", jitterHue, hue)
}
