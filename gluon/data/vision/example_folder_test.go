package vision_test

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/data/vision"
)

// Read a folder of images, one subfolder per class, and prepare each
// image for an ImageNet model of the model zoo.
func ExampleNewImageFolder() {
	root, err := os.MkdirTemp("", "imagefolder")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	for _, f := range []string{"cat/a.png", "cat/b.png", "dog/c.png"} {
		path := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			panic(err)
		}
		out, err := os.Create(path)
		if err != nil {
			panic(err)
		}
		if err := png.Encode(out, image.NewRGBA(image.Rect(0, 0, 320, 240))); err != nil {
			panic(err)
		}
		out.Close()
	}

	folder, err := vision.NewImageFolder(root, vision.ImageFolderOpts{})
	if err != nil {
		panic(err)
	}
	ds := data.TransformFirst(folder, data.Compose(
		transforms.ResizeShorter(256, transforms.ResizeOpts{Antialias: true}),
		transforms.CenterCrop([2]int{224, 224}),
		transforms.ToTensor(),
		transforms.Normalize([]float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}),
	))
	s, err := ds.Get(2, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(folder.Classes(), ds.Len())
	fmt.Println(s.Data.Shape, "label", s.Label)
	// Output:
	// [cat dog] 3
	// [3 224 224] label 1
}
