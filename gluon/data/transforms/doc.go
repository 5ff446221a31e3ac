// Package transforms holds composable image transforms for gluon/data, after
// Gluon's gluon.data.vision.transforms and the augmentations of Keras's
// ImageDataGenerator and torchvision.
//
// Every constructor returns a data.Transform; chain them with data.Compose:
//
//	aug := data.Compose(
//		transforms.RandomShift(0.1, 0.1, transforms.Nearest, 0),
//		transforms.RandomFlipLeftRight(0.5),
//		transforms.ToTensor(),
//		transforms.Normalize([]float32{0.4914, 0.4822, 0.4465}, []float32{0.2470, 0.2435, 0.2616}),
//	)
//
// # Layout
//
// A Tensor carries no layout tag, so the layout is read from its element
// type, as data.Tensor documents: a uint8 image is HWC (height, width,
// channels), as image files store it, and a float32 image is CHW, as ToTensor
// and ToFloat leave it. A 2-D image of either type is HW with one channel.
// Layout-aware transforms (the flip, shift, crop, resize, colour, rotation
// and blur ones) therefore work on raw uint8 images before ToTensor and on
// float32 images after it, and keep the layout they were given. Ranks
// other than 2 and 3 are an error. RandomErasing and LinearTransformation,
// which torchvision applies after ToTensor, take float32 images only.
//
// # Resizing, compared with torchvision
//
// Resize, ResizeShorter and RandomResizedCrop resample with the formulas of
// torch.nn.functional.interpolate for float32 tensors (bilinear with
// align_corners=False, optionally antialiased, or nearest), computed in
// float32: on float32 images they match PyTorch within float32 rounding
// (testdata/make_goldens_resize.py makes the goldens). torchvision resizes
// PIL images with PIL's antialiased filter, which ResizeOpts.Antialias
// follows; PIL rounds to uint8 between its horizontal and vertical passes,
// and Goluon once at the end (half to even, as torch.round), so uint8
// results can differ from PIL's by one. CenterCrop places its window as torchvision does, rounding halves
// to even.
//
// # Colour, rotation and blur, compared with torchvision
//
// AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustHue, Grayscale,
// Rotate, Affine and Blur follow torchvision 0.14's functional ops on
// tensors (torchvision.transforms.functional_tensor), computing in float32
// with torch's operation order, including the fused multiply-adds of its
// AVX2 kernels where they change the rounding; ColorJitter, RandomGrayscale,
// RandomRotation, RandomAffine, GaussianBlur and RandomErasing draw their
// parameters as torchvision's transform classes do, from the rng given.
// testdata/make_goldens_color.py makes the goldens: the colour
// adjustments, grayscale, rotations and affine warps match torchvision
// exactly on uint8 and float32 images; the blur, applied separably in
// float64 where torch convolves in float32, is within 3e-7 on float32
// images and can differ by one on uint8 ones. Like torchvision on tensors,
// uint8 colour results are truncated and geometric and blur results
// rounded half to even, and float32 colour results are clamped to [0, 1],
// so colour transforms belong before Normalize. torchvision's PIL path
// rounds differently (PIL's ImageEnhance and filters), and its grayscale
// weights red 0.299 where the tensor path, followed here, uses 0.2989.
//
// # Contract
//
// Transforms never modify their input: each writes a new output (one
// allocation for the values; the Shape slice is shared with the input when
// the shape is unchanged, so treat Shape as read-only), or returns the input
// itself when it would not change (a flip that was not drawn, a zero shift).
// They hold no mutable state, so one Transform may be called from many
// goroutines. Random transforms draw only from the rng they are given, so
// the same rng state gives the same output; a nil rng is an error.
//
// A wrongly shaped or typed input is reported as an *Error naming the
// transform, the shape and the element type; it never panics. A constructor
// given invalid arguments (a probability outside [0, 1], a zero standard
// deviation) returns a Transform that reports that *Error on every call.
//
// # Shifts, compared with Keras
//
// RandomShift follows ImageDataGenerator.get_random_transform in
// keras-preprocessing (keras_preprocessing/image/image_data_generator.py):
// for a range r, tx = np.random.uniform(-r, r), and when r < 1 it is then
// multiplied by the image size along that axis (height for
// height_shift_range, width for width_shift_range); a range >= 1 is a number
// of pixels. Keras then applies the real-valued tx through an affine warp
// (apply_affine_transform, interpolation_order=1, i.e. bilinear) whose
// output pixel o reads input o+tx. Goluon differs in two documented ways:
// the drawn shift is rounded to the nearest whole pixel (math.Round, halves
// away from zero), so pixel values are copied, never blended; and a positive
// shift moves the content right/down (output o reads input o-t). Since the
// draw is symmetric, the distribution of shifted images is the same up to
// the sub-pixel blending; for whole-pixel shifts the pixels equal Keras's
// under fill_mode "nearest" and "constant". Keras's integer and list ranges
// (np.random.choice) are not modelled.
package transforms
