// Package vision reads the classic image classification data sets,
// after Gluon's gluon.data.vision: MNIST, Fashion-MNIST, CIFAR-10 and
// CIFAR-100, as data.Dataset values of HWC uint8 images and float32 labels;
// and ImageFolder, torchvision's data set of JPEG and PNG files sorted into
// one folder per class, read as they are requested.
//
// The files are read in their published formats, strictly: IDX
// (gzip-compressed or raw) for the MNIST family and the CIFAR binary
// version. A truncated, oversized or otherwise malformed file is an error
// that names the file (errors.Is(err, ErrCorrupt)), never a panic or a
// silently short data set.
//
// Constructors find the files with Locate, which looks in the directory
// the caller passes, then the per-user cache (CacheDir; GOLUON_DATA
// overrides its root), then system directories such as Debian's
// /usr/share/datasets/fashion-mnist (package dataset-fashion-mnist). They
// never touch the network unless given WithDownload; Download fetches the
// published files, verifies their published checksums, and writes them
// atomically. When the data is nowhere, the error lists every directory
// searched and says how to get the files.
package vision
