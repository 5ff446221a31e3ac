package vision

import (
	"bytes"
	"fmt"
	"image"
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
// ImageFolderOpts.Gray. Pixels equal PIL's convert("RGB") and convert("L")
// of the same file, except that 16-bit channels keep their high byte
// (PIL clips 16-bit gray to 255), and that Go's JPEG decoder upsamples
// subsampled chroma without libjpeg's smoothing, so colour JPEGs with
// subsampled chroma (most photographs) can differ from PIL's by a few
// levels, at edges by more. Pair it with the transforms of gluon/data/transforms
// through data.TransformFirst to resize, crop and normalise.
type ImageFolder struct {
	root    string
	gray    bool
	classes []string
	files   []string
	labels  []float32
}

var _ data.Dataset = (*ImageFolder)(nil)

// MaxImagePixels is the most pixels ImageFolder decodes from one file,
// PIL's limit (twice its MAX_IMAGE_PIXELS warning threshold): a small file
// that declares a huge image would otherwise take all memory.
var MaxImagePixels int64 = 2 * 89478485

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
// files before its subfolders'). Links to directories are followed, as
// torchvision's os.walk(followlinks=True) follows them, except into a
// folder being walked already (a cycle); folders whose names start with a
// dot are skipped.
func classFiles(dir string, exts []string) ([]string, error) {
	type file struct{ dir, name string }
	var files []file
	walking := map[string]bool{} // the real paths of the folders being walked
	var walk func(d string) error
	walk = func(d string) error {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return err
		}
		if walking[real] {
			return nil
		}
		walking[real] = true
		defer delete(walking, real)
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			switch {
			case isDir(d, e):
				if !strings.HasPrefix(e.Name(), ".") {
					if err := walk(filepath.Join(d, e.Name())); err != nil {
						return err
					}
				}
			case hasExtension(e.Name(), exts):
				files = append(files, file{d, e.Name()})
			}
		}
		return nil
	}
	err := walk(dir)
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
// a *FileError naming it; one that does not decode wraps ErrCorrupt, and
// one whose header declares more than MaxImagePixels pixels is refused
// before it is decoded. The generator is not used.
func (d *ImageFolder) Get(i int, _ *rand.Rand) (data.Sample, error) {
	if i < 0 || i >= len(d.files) {
		return data.Sample{}, fmt.Errorf("vision: ImageFolder: index %d out of range [0, %d)", i, len(d.files))
	}
	path := d.files[i]
	b, err := os.ReadFile(path)
	if err != nil {
		return data.Sample{}, fileErr(path, err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return data.Sample{}, fileErr(path, corrupt("decoding the image: %v", err))
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxImagePixels {
		return data.Sample{}, fileErr(path, fmt.Errorf("%d×%d is %d pixels, more than MaxImagePixels (%d): a decompression bomb?", cfg.Width, cfg.Height, px, MaxImagePixels))
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
