package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// checkKernel checks GaussianBlur's kernel sizes: odd and positive.
func checkKernel(k [2]int) string {
	for _, v := range k {
		if v <= 0 || v%2 == 0 {
			return "kernel sizes must be odd and positive"
		}
	}
	return ""
}

// Blur returns torchvision's gaussian_blur(img, kernel_size, sigma): a
// Gaussian filter of kernelSize[0] rows by kernelSize[1] columns with
// standard deviations sigma[0] down and sigma[1] across (the package's
// (rows, columns) order, as Resize's; torchvision's lists are (x, y), the
// other way round), on an image padded by mirror reflection (torch's "reflect"
// padding: no edge repeat). The kernel is torchvision's: float32 samples
// of exp(−x²/2σ²) at integer offsets, normalised to sum 1. It is applied
// separably in float64, so float32 results are within a few float32 units
// of torch's 2-D convolution, and uint8 results are rounded half to even,
// as torchvision rounds, so they can differ from its by one where a value
// falls on a half. It works on any number of channels (HW, HWC uint8, CHW
// float32). Even or non-positive sizes and non-positive sigmas are argument
// errors; a kernel whose half is not smaller than the image (which torch's
// reflect padding refuses) is an input error.
func Blur(kernelSize [2]int, sigma [2]float64) data.Transform {
	const op = "Blur"
	if msg := checkKernel(kernelSize); msg != "" {
		return argError(op, "%s, got %v", msg, kernelSize)
	}
	if !(sigma[0] > 0 && sigma[1] > 0) || math.IsInf(sigma[0], 1) || math.IsInf(sigma[1], 1) {
		return argError(op, "sigmas %v must be finite and positive", sigma)
	}
	kernelSize, sigma = [2]int{kernelSize[1], kernelSize[0]}, [2]float64{sigma[1], sigma[0]} // (x, y) inside
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		return blurImage(op, x, kernelSize, sigma)
	}
}

// GaussianBlur returns torchvision's GaussianBlur(kernel_size, sigma):
// each call draws one standard deviation uniformly from
// [sigma[0], sigma[1]] (one rng.Float64()) and applies Blur with it on
// both axes. kernelSize is (rows, columns), as Blur's; torchvision's
// default sigma is {0.1, 2}. Arguments are checked as
// Blur's, with 0 < sigma[0] <= sigma[1].
func GaussianBlur(kernelSize [2]int, sigma [2]float64) data.Transform {
	const op = "GaussianBlur"
	if msg := checkKernel(kernelSize); msg != "" {
		return argError(op, "%s, got %v", msg, kernelSize)
	}
	if !(sigma[0] > 0 && sigma[0] <= sigma[1]) || math.IsInf(sigma[1], 1) {
		return argError(op, "sigma range %v must satisfy 0 < min <= max < +Inf", sigma)
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		s := uniform(rng, sigma)
		return blurImage(op, x, [2]int{kernelSize[1], kernelSize[0]}, [2]float64{s, s})
	}
}

func blurImage(op string, x data.Tensor, k [2]int, sigma [2]float64) (data.Tensor, error) {
	g, err := geometry(op, x)
	if err != nil {
		return data.Tensor{}, err
	}
	if k[0]/2 >= g.w || k[1]/2 >= g.h {
		return data.Tensor{}, inputError(op, x, "kernel %v needs an image larger than half of it for reflect padding", k)
	}
	im := toPlanar(x, g)
	kx, ky := gaussKernel(k[0], sigma[0]), gaussKernel(k[1], sigma[1])
	hx, hy := k[0]/2, k[1]/2
	out := im.like(len(im.p), g.h*g.w)
	tmp := make([]float64, g.h*g.w) // the rows filtered across
	pad := make([]float64, g.w+2*hx)
	acc := make([]float64, g.w)
	for c, src := range im.p {
		for y := range g.h {
			// The row, reflected hx pixels out on each side.
			for i := range pad {
				pad[i] = float64(src[y*g.w+reflect(i-hx, g.w)])
			}
			t := tmp[y*g.w : (y+1)*g.w]
			for xx := range t {
				var a float64
				for j, wj := range kx {
					a += float64(wj) * pad[xx+j]
				}
				t[xx] = a
			}
		}
		dst := out.p[c]
		for y := range g.h {
			clear(acc)
			for i, wi := range ky {
				row := tmp[reflect(y+i-hy, g.h)*g.w:][:len(acc)]
				for xx, v := range row {
					acc[xx] += float64(wi) * v
				}
			}
			d := dst[y*g.w : (y+1)*g.w]
			for xx, v := range acc {
				d[xx] = float32(v)
			}
		}
	}
	return out.tensor(g.h, g.w, true), nil
}

// reflect maps an index outside [0, n) back into it by mirror reflection
// about the edge pixels (−1 → 1, n → n−2), for offsets less than n.
func reflect(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*(n-1) - i
	}
	return i
}

// gaussKernel is torchvision's _get_gaussian_kernel1d in float32: the
// samples exp(−0.5·(x/σ)²) at x = −(k−1)/2 … (k−1)/2, divided by their
// sum.
func gaussKernel(k int, sigma float64) []float32 {
	s := float32(sigma)
	w := make([]float32, k)
	var sum float32
	for i := range w {
		x := float32(float64(i) - float64(k-1)*0.5)
		t := x / s
		w[i] = float32(math.Exp(float64(-0.5 * float32(t*t))))
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}
