package vision

import (
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFolderImage encodes img as PNG, or JPEG when the name says so, at
// root/rel, making the directories.
func writeFolderImage(t *testing.T, root, rel string, img image.Image) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ext := strings.ToLower(filepath.Ext(rel)); ext == ".jpg" || ext == ".jpeg" {
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 100})
	} else {
		err = png.Encode(f, img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func writeFolderFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// folderTree writes a small tree: two classes, nested folders, files of
// other types, a hidden folder and a file at the top.
func folderTree(t *testing.T) string {
	root := t.TempDir()
	rgba := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for i := range 6 {
		rgba.SetNRGBA(i%3, i/3, color.NRGBA{R: uint8(10 * i), G: uint8(20 + i), B: 200, A: uint8(100 + 30*i)})
	}
	gray := image.NewGray(image.Rect(0, 0, 2, 2))
	copy(gray.Pix, []uint8{0, 77, 128, 255})
	solid := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := 0; i < len(solid.Pix); i += 4 {
		copy(solid.Pix[i:], []uint8{200, 100, 50, 255})
	}
	writeFolderImage(t, root, "b_dog/1.png", rgba)
	writeFolderImage(t, root, "a_cat/x.PNG", gray)
	writeFolderImage(t, root, "a_cat/sub/y.jpg", solid)
	writeFolderImage(t, root, "a_cat/sub-x/w.jpeg", solid)
	writeFolderImage(t, root, "a_cat/sub/deep/v.png", gray)
	writeFolderFile(t, root, "a_cat/notes.txt", "not an image")
	writeFolderImage(t, root, ".hidden/z.png", gray)
	writeFolderImage(t, root, "a_cat/.ipynb_checkpoints/x-checkpoint.png", gray)
	writeFolderImage(t, root, "top.png", gray)
	return root
}

func TestImageFolder(t *testing.T) {
	root := folderTree(t)
	d, err := NewImageFolder(root, ImageFolderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Classes(); !slices.Equal(got, []string{"a_cat", "b_dog"}) {
		t.Fatalf("classes %v, want [a_cat b_dog]", got)
	}
	// torchvision's order, sorted(os.walk(...)): by the directory's path,
	// then by name, so a folder's own files come first and "sub-x" sorts
	// between "sub" and "sub/deep".
	var rel []string
	for _, f := range d.Files() {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	want := []string{"a_cat/x.PNG", "a_cat/sub/y.jpg", "a_cat/sub-x/w.jpeg", "a_cat/sub/deep/v.png", "b_dog/1.png"}
	if !slices.Equal(rel, want) {
		t.Fatalf("files %v, want %v", rel, want)
	}
	if got := d.Labels(); !slices.Equal(got, []float32{0, 0, 0, 0, 1}) {
		t.Fatalf("labels %v, want [0 0 0 0 1]", got)
	}

	// PNG with alpha: the non-premultiplied RGB, alpha dropped.
	s, err := d.Get(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Data.Shape, []int{2, 3, 3}) || s.Label != 1 {
		t.Fatalf("sample 4: shape %v label %v, want [2 3 3] and 1", s.Data.Shape, s.Label)
	}
	for i := range 6 {
		if got := s.Data.U8[3*i : 3*i+3]; !slices.Equal(got, []uint8{uint8(10 * i), uint8(20 + i), 200}) {
			t.Fatalf("pixel %d: %v, want [%d %d 200]", i, got, 10*i, 20+i)
		}
	}
	// A gray PNG becomes three equal channels.
	s, _ = d.Get(0, nil)
	if !slices.Equal(s.Data.U8, []uint8{0, 0, 0, 77, 77, 77, 128, 128, 128, 255, 255, 255}) {
		t.Fatalf("gray PNG as RGB: %v", s.Data.U8)
	}
	// A JPEG of one colour decodes to about that colour.
	s, _ = d.Get(1, nil)
	if !slices.Equal(s.Data.Shape, []int{8, 8, 3}) {
		t.Fatalf("JPEG shape %v, want [8 8 3]", s.Data.Shape)
	}
	for i, v := range s.Data.U8 {
		if w := []int{200, 100, 50}[i%3]; int(v) < w-3 || int(v) > w+3 {
			t.Fatalf("JPEG value %d is %d, want about %d", i, v, w)
		}
	}
}

func TestImageFolderGray(t *testing.T) {
	root := folderTree(t)
	d, err := NewImageFolder(root, ImageFolderOpts{Gray: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := d.Get(0, nil)
	if !slices.Equal(s.Data.Shape, []int{2, 2, 1}) || !slices.Equal(s.Data.U8, []uint8{0, 77, 128, 255}) {
		t.Fatalf("gray PNG: %v %v", s.Data.Shape, s.Data.U8)
	}
	s, _ = d.Get(4, nil)
	for i := range 6 {
		// PIL's convert("L"): (19595 R + 38470 G + 7471 B + 2^15) >> 16.
		want := uint8((19595*(10*i) + 38470*(20+i) + 7471*200 + 1<<15) >> 16)
		if s.Data.U8[i] != want {
			t.Fatalf("pixel %d: luma %d, want %d", i, s.Data.U8[i], want)
		}
	}
	s, _ = d.Get(1, nil)
	if want := lumaRGB(200, 100, 50); int(s.Data.U8[0]) < int(want)-3 || int(s.Data.U8[0]) > int(want)+3 {
		t.Fatalf("JPEG luma %d, want about %d", s.Data.U8[0], want)
	}
}

func TestImageFolderExtensions(t *testing.T) {
	root := folderTree(t)
	d, err := NewImageFolder(root, ImageFolderOpts{Extensions: []string{".JPG", ".png"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 4 || slices.ContainsFunc(d.Files(), func(f string) bool { return filepath.Base(f) == "w.jpeg" }) {
		t.Fatalf("files %v, want every image but w.jpeg", d.Files())
	}
	if _, err := NewImageFolder(root, ImageFolderOpts{Extensions: []string{".jpeg", ".jpg"}}); err == nil || !strings.Contains(err.Error(), "classes b_dog") {
		t.Fatalf("a class without JPEG files: %v, want an error naming b_dog", err)
	}
}

func TestImageFolderErrors(t *testing.T) {
	empty := t.TempDir()
	writeFolderImage(t, empty, "cats/a.png", image.NewGray(image.Rect(0, 0, 1, 1)))
	writeFolderFile(t, empty, "dogs/readme.txt", "x")
	writeFolderFile(t, empty, "owls/sub/readme.txt", "x")
	noClasses := t.TempDir()
	writeFolderImage(t, noClasses, "a.png", image.NewGray(image.Rect(0, 0, 1, 1)))
	for _, c := range []struct {
		root string
		want []string
	}{
		{filepath.Join(empty, "missing"), []string{"missing", "no such file"}},
		{filepath.Join(empty, "cats", "a.png"), []string{"a.png"}},
		{noClasses, []string{"no class folders"}},
		{empty, []string{"dogs, owls"}},
	} {
		_, err := NewImageFolder(c.root, ImageFolderOpts{})
		if err == nil {
			t.Errorf("%s: no error", c.root)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.root, err, w)
			}
		}
	}

	root := t.TempDir()
	writeFolderImage(t, root, "a/ok.png", image.NewGray(image.Rect(0, 0, 2, 2)))
	writeFolderFile(t, root, "a/broken.png", "\x89PNG\r\n\x1a\n truncated")
	d, err := NewImageFolder(root, ImageFolderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Get(0, nil) // broken.png sorts first
	var fe *FileError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || filepath.Base(fe.Path) != "broken.png" {
		t.Fatalf("corrupt file: %v, want a *FileError for broken.png wrapping ErrCorrupt", err)
	}
	if err := os.Remove(filepath.Join(root, "a", "ok.png")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(1, nil); !errors.As(err, &fe) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("removed file: %v, want a *FileError wrapping os.ErrNotExist", err)
	}
	for _, i := range []int{-1, 2} {
		if _, err := d.Get(i, nil); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Get(%d): %v, want an out-of-range error", i, err)
		}
	}
}

// TestImageFolderSymlinkedClass checks that a class folder may be a
// symbolic link to a directory.
func TestImageFolderSymlinkedClass(t *testing.T) {
	elsewhere, root := t.TempDir(), t.TempDir()
	writeFolderImage(t, elsewhere, "a.png", image.NewGray(image.Rect(0, 0, 1, 1)))
	if err := os.Symlink(elsewhere, filepath.Join(root, "linked")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	d, err := NewImageFolder(root, ImageFolderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1 || !slices.Equal(d.Classes(), []string{"linked"}) {
		t.Fatalf("classes %v, %d files; want [linked] and 1", d.Classes(), d.Len())
	}
}

// TestImageFolderPixelTypes: every image type Go's decoders return gives
// PIL's convert("RGB") values: 16-bit channels their high byte and alpha
// dropped without premultiplying (transparent pixels keep their colour),
// palettes looked up, opaque truecolour read directly.
func TestImageFolderPixelTypes(t *testing.T) {
	nrgba64 := image.NewNRGBA64(image.Rect(0, 0, 3, 1))
	nrgba64.SetNRGBA64(0, 0, color.NRGBA64{0x5a5a, 0x8080, 0xffff, 0})
	nrgba64.SetNRGBA64(1, 0, color.NRGBA64{0x5a5a, 0x8080, 0xffff, 0x0101})
	nrgba64.SetNRGBA64(2, 0, color.NRGBA64{0x5a5a, 0x8080, 0xffff, 0xffff})
	pal := image.NewPaletted(image.Rect(0, 0, 3, 1), color.Palette{
		color.NRGBA{10, 20, 30, 0}, color.NRGBA{40, 50, 60, 128}, color.RGBA{70, 80, 90, 255}})
	copy(pal.Pix, []uint8{2, 0, 1})
	rgba := image.NewRGBA(image.Rect(0, 0, 2, 1))
	copy(rgba.Pix, []uint8{1, 2, 3, 255, 200, 100, 50, 255})
	gray16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	gray16.SetGray16(0, 0, color.Gray16{0x1234})
	gray16.SetGray16(1, 0, color.Gray16{0xfffe})
	for _, c := range []struct {
		name string
		img  image.Image
		want []uint8
	}{
		{"16-bit with alpha", nrgba64, []uint8{0x5a, 0x80, 0xff, 0x5a, 0x80, 0xff, 0x5a, 0x80, 0xff}},
		{"palette with transparency", pal, []uint8{70, 80, 90, 10, 20, 30, 40, 50, 60}},
		{"opaque truecolour", rgba, []uint8{1, 2, 3, 200, 100, 50}},
		{"16-bit gray", gray16, []uint8{0x12, 0x12, 0x12, 0xff, 0xff, 0xff}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeFolderImage(t, root, "c/x.png", c.img)
			d, err := NewImageFolder(root, ImageFolderOpts{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := d.Get(0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Data.U8, c.want) {
				t.Errorf("got %v, want %v", s.Data.U8, c.want)
			}
		})
	}
}

// TestImageFolderLinkedFolders: links to folders below a class folder are
// followed, as torchvision's os.walk(followlinks=True) follows them, even
// when the link's name looks like an image; a link back up is not
// followed round.
func TestImageFolderLinkedFolders(t *testing.T) {
	root, shared := t.TempDir(), t.TempDir()
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	writeFolderImage(t, shared, "x.png", img)
	writeFolderImage(t, root, "cat/own.png", img)
	for _, link := range [][2]string{{shared, "cat/extra"}, {shared, "cat/more.png"}, {filepath.Join(root, "cat"), "cat/loop"}} {
		if err := os.Symlink(link[0], filepath.Join(root, link[1])); err != nil {
			t.Skip("no symbolic links:", err)
		}
	}
	d, err := NewImageFolder(root, ImageFolderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range d.Files() {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	if want := []string{"cat/own.png", "cat/extra/x.png", "cat/more.png/x.png"}; !slices.Equal(rel, want) {
		t.Fatalf("files %v, want %v", rel, want)
	}
	for i := range d.Len() {
		if _, err := d.Get(i, nil); err != nil {
			t.Error(err)
		}
	}
}

// TestImageFolderMaxPixels: an image declaring more than MaxImagePixels
// pixels is refused from its header, before any decoding.
func TestImageFolderMaxPixels(t *testing.T) {
	root := t.TempDir()
	writeFolderImage(t, root, "c/big.png", image.NewGray(image.Rect(0, 0, 5, 4)))
	d, err := NewImageFolder(root, ImageFolderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int64) { MaxImagePixels = v }(MaxImagePixels)
	MaxImagePixels = 19
	var fe *FileError
	if _, err := d.Get(0, nil); !errors.As(err, &fe) || !strings.Contains(err.Error(), "20 pixels") {
		t.Fatalf("got %v, want a *FileError about 20 pixels", err)
	}
	MaxImagePixels = 20
	if _, err := d.Get(0, nil); err != nil {
		t.Fatal(err)
	}
}
