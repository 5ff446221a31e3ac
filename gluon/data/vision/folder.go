package vision

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // ImageFolder decodes JPEG files
	_ "image/png"  // and PNG files
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goluon/goluon/gluon/data"
)

// ImageFolder is a data set of image files sorted into one folder per
// class, torchvision's ImageFolder and Gluon's ImageFolderDataset:
//
//	root/cat/001.jpg
//	root/cat/kittens/002.png
//	root/dog/003.jpeg
//
// The class folders are root's subdirectories in sorted order, and the
// label of an image is its class's index in that order; the images of a
// class are the files with an image extension anywhere below its folder
// (torchvision walks the class folders recursively too), in sorted order.
// Unlike torchvision, folders whose names start with a dot (such as
// .ipynb_checkpoints) are not classes and are not searched.
//
// ImageFolder implements data.Dataset. The files are read when a sample
// is requested, decoded with Go's image/jpeg and image/png, and returned
// as HWC uint8 tensors: [h w 3] in RGB, or [h w 1] with
// ImageFolderOpts.Gray. Pair it with the transforms of gluon/data/transforms
// through data.TransformFirst to resize, crop and normalise.
type ImageFolder struct {
	root    string
	gray    bool
	classes []string
	files   []string
	labels  []float32
}

var _ data.Dataset = (*ImageFolder)(nil)

// ImageFolderOpts are NewImageFolder's options. The zero value reads
// .jpg, .jpeg and .png files as RGB.
type ImageFolderOpts struct {
	// Gray decodes every image to one channel of luma,
	// (19595·R + 38470·G + 7471·B + 2¹⁵) >> 16, as PIL's convert("L") and
	// Go's color.GrayModel compute it (Gluon's flag=0).
	Gray bool
	// Extensions lists the file extensions, with their dots, to read
	// (compared without case). Empty means .jpg, .jpeg and .png, the
	// formats Go's standard library decodes. A file of another format
	// with a listed extension fails when its sample is read.
	Extensions []string
}

// NewImageFolder lists the classes and images under root. It fails when
// root is not a readable directory, has no class folders, or has a class
// folder without images (naming every such class, as torchvision does).
// The images themselves are read by Get.
func NewImageFolder(root string, opts ImageFolderOpts) (*ImageFolder, error) {
	exts := opts.Extensions
	if len(exts) == 0 {
		exts = []string{".jpg", ".jpeg", ".png"}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("vision: ImageFolder: %w", err)
	}
	d := &ImageFolder{root: root, gray: opts.Gray}
	var empty []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !isDir(root, e) {
			continue
		}
		label := float32(len(d.classes))
		d.classes = append(d.classes, e.Name())
		n := len(d.files)
		files, err := classFiles(filepath.Join(root, e.Name()), exts)
		if err != nil {
			return nil, fmt.Errorf("vision: ImageFolder: %w", err)
		}
		d.files = append(d.files, files...)
		for range files {
			d.labels = append(d.labels, label)
		}
		if len(d.files) == n {
			empty = append(empty, e.Name())
		}
	}
	switch {
	case len(d.classes) == 0:
		return nil, fmt.Errorf("vision: ImageFolder: %s has no class folders (want one subdirectory of images per class)", root)
	case len(empty) > 0:
		return nil, fmt.Errorf("vision: ImageFolder: %s: no %s files for the classes %s", root, strings.Join(exts, ", "), strings.Join(empty, ", "))
	}
	return d, nil
}

// classFiles returns the image files below dir in torchvision's order:
// sorted by the path of their directory, then by name (a folder's own
// files before its subfolders'). Folders whose names start with a dot are
// skipped, and links below dir are not followed.
func classFiles(dir string, exts []string) ([]string, error) {
	type file struct{ dir, name string }
	var files []file
	// The trailing separator makes WalkDir follow dir when it is a link.
	top := dir + string(filepath.Separator)
	err := filepath.WalkDir(top, func(path string, f fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case f.IsDir() && path != top && strings.HasPrefix(f.Name(), "."):
			return filepath.SkipDir
		case f.IsDir() || !hasExtension(f.Name(), exts):
			return nil
		}
		files = append(files, file{filepath.Dir(path), f.Name()})
		return nil
	})
	slices.SortFunc(files, func(a, b file) int {
		if c := strings.Compare(a.dir, b.dir); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(f.dir, f.name)
	}
	return paths, err
}

// isDir reports whether e, in dir, is a directory or a link to one.
func isDir(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && fi.IsDir()
}

func hasExtension(name string, exts []string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext != "" && slices.ContainsFunc(exts, func(e string) bool { return strings.ToLower(e) == ext })
}

// Len returns the number of images.
func (d *ImageFolder) Len() int { return len(d.files) }

// Get reads and decodes image i. A file that cannot be read or decoded is
// a *FileError naming it; one that does not decode wraps ErrCorrupt. The
// generator is not used.
func (d *ImageFolder) Get(i int, _ *rand.Rand) (data.Sample, error) {
	if i < 0 || i >= len(d.files) {
		return data.Sample{}, fmt.Errorf("vision: ImageFolder: index %d out of range [0, %d)", i, len(d.files))
	}
	path := d.files[i]
	b, err := os.ReadFile(path)
	if err != nil {
		return data.Sample{}, fileErr(path, err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return data.Sample{}, fileErr(path, corrupt("decoding the image: %v", err))
	}
	return data.Sample{Data: pixels(img, d.gray), Label: d.labels[i]}, nil
}

// Classes returns the class names, indexed by label.
func (d *ImageFolder) Classes() []string { return slices.Clone(d.classes) }

// Files returns the image files, in sample order.
func (d *ImageFolder) Files() []string { return slices.Clone(d.files) }

// Labels returns every sample's label, in sample order.
func (d *ImageFolder) Labels() []float32 { return slices.Clone(d.labels) }

// pixels returns img as an HWC uint8 tensor of 3 channels (RGB, alpha
// dropped from the non-premultiplied values, as PIL's convert("RGB") drops
// it) or of 1 (luma). The decoders' usual image types are read directly,
// others through their colour model.
func pixels(img image.Image, gray bool) data.Tensor {
	r := img.Bounds()
	h, w := r.Dy(), r.Dx()
	c := 3
	if gray {
		c = 1
	}
	out := make([]uint8, h*w*c)
	put := func(i int, cr, cg, cb uint8) { // pixel i, in row-major order
		if gray {
			out[i] = lumaRGB(cr, cg, cb)
			return
		}
		out[3*i], out[3*i+1], out[3*i+2] = cr, cg, cb
	}
	i := 0
	switch m := img.(type) {
	case *image.YCbCr:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				ci := m.COffset(x, y)
				cr, cg, cb := color.YCbCrToRGB(m.Y[m.YOffset(x, y)], m.Cb[ci], m.Cr[ci])
				put(i, cr, cg, cb)
				i++
			}
		}
	case *image.Gray:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := m.Pix[m.PixOffset(r.Min.X, y):]
			for x := range w {
				put(i, row[x], row[x], row[x])
				i++
			}
		}
	case *image.NRGBA:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := m.Pix[m.PixOffset(r.Min.X, y):]
			for x := range w {
				put(i, row[4*x], row[4*x+1], row[4*x+2])
				i++
			}
		}
	default:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				put(i, p.R, p.G, p.B)
				i++
			}
		}
	}
	return data.Tensor{Shape: []int{h, w, c}, U8: out}
}

// lumaRGB is PIL's convert("L") of one RGB pixel (ITU-R 601-2 luma in
// 16-bit fixed point, rounded).
func lumaRGB(r, g, b uint8) uint8 {
	return uint8((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}
