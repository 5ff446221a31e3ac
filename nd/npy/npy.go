// Package npy reads and writes NumPy's .npy and .npz files, the arrays
// that numpy.save, numpy.savez and numpy.savez_compressed write and
// numpy.load reads (and with them torch.from_numpy, JAX and most of the
// Python ecosystem).
//
// Write and Save store an array of any nd dtype but BFloat16 (NumPy has
// none: cast with AsType first) in the file format's version 1.0 (2.0 when
// the header needs it), little-endian and in C order, with the header
// NumPy 1.24 writes for the same array (spare room for the first axis to
// grow in place included), so the files are byte for byte NumPy's. Save
// replaces its file atomically.
//
// Read and Load accept versions 1.0, 2.0 and 3.0, either byte order, C or
// Fortran order, and these dtypes: float16, float32 and float64 as the nd
// dtype of that name; int32 as Int32, int64 as Int64, uint8 as Uint8, bool
// as Bool, and the other integer dtypes (int8, int16, uint16, uint32,
// uint64) as Int64 (a uint64 above the largest int64 is an error);
// complex64 and complex128 as Float32 and Float64 arrays with a trailing
// axis of 2 holding the real and imaginary parts (the layout of
// torch.view_as_real). Object arrays (pickles), strings, dates and
// structured dtypes are errors, as are truncated and malformed files: a
// read that fails returns no array.
//
// SaveZ and SaveZCompressed write several named arrays as an .npz archive
// (numpy.savez and numpy.savez_compressed), LoadZ reads one back.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/nd"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// maxHeader bounds the header a reader accepts (NumPy's own limit for
// untrusted files is 10,000 bytes; shapes of high rank fit well within).
const maxHeader = 1 << 20

// align is the multiple NumPy pads the magic, length and header to.
const align = 64

// writeDescr gives the descr a file of each writable dtype has.
var writeDescr = map[nd.DType]string{
	nd.Float16: "<f2", nd.Float32: "<f4", nd.Float64: "<f8",
	nd.Int32: "<i4", nd.Int64: "<i8", nd.Uint8: "|u1", nd.Bool: "|b1",
}

// Write writes a as one .npy file to w. A nil or released array, or one
// of dtype BFloat16, is an error and nothing is written.
func Write(w io.Writer, a *nd.NDArray) error {
	data, h, err := encode(a)
	if err != nil {
		return err
	}
	if _, err := w.Write(frame(h)); err != nil {
		return fmt.Errorf("npy: write: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("npy: write: %w", err)
	}
	return nil
}

// Save writes a to path as a .npy file, replacing any file there
// atomically: a failed save leaves the old file as it was.
func Save(path string, a *nd.NDArray) error {
	data, h, err := encode(a)
	if err != nil {
		return fmt.Errorf("%w (saving %s)", err, path)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := w.Write(frame(h)); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	})
}

// encode returns a's elements as little-endian bytes and its header.
func encode(a *nd.NDArray) ([]byte, header, error) {
	if a == nil || a.Released() {
		return nil, header{}, errors.New("npy: the array is nil or released")
	}
	descr, ok := writeDescr[a.DType()]
	if !ok {
		return nil, header{}, fmt.Errorf("npy: NumPy has no %v dtype: cast the array with AsType(nd.Float32) first", a.DType())
	}
	var data []byte
	err := nd.Catch(func() { data = hostBytes(a) })
	if err != nil {
		return nil, header{}, fmt.Errorf("npy: %w", err)
	}
	return data, header{descr: descr, shape: a.Shape()}, nil
}

// hostBytes reads a's elements to the host as little-endian bytes of its
// dtype.
func hostBytes(a *nd.NDArray) []byte {
	n := a.Size()
	switch a.DType() {
	case nd.Float32:
		return le(n, 4, a.Float32s(), func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) })
	case nd.Float64:
		return le(n, 8, a.Float64s(), func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) })
	case nd.Int32:
		return le(n, 4, a.Int32s(), func(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) })
	case nd.Int64:
		return le(n, 8, a.Int64s(), func(b []byte, v int64) { binary.LittleEndian.PutUint64(b, uint64(v)) })
	case nd.Uint8:
		return a.Uint8s()
	case nd.Bool:
		return le(n, 1, a.Bools(), func(b []byte, v bool) {
			if v {
				b[0] = 1
			}
		})
	}
	v := make([]nd.F16, n) // Float16: its bits
	a.ReadInto(v)
	return le(n, 2, v, func(b []byte, v nd.F16) { binary.LittleEndian.PutUint16(b, uint16(v)) })
}

// le packs n values of size bytes each with put.
func le[T any](n, size int, vals []T, put func([]byte, T)) []byte {
	out := make([]byte, n*size)
	for i, v := range vals {
		put(out[i*size:], v)
	}
	return out
}

// frame returns the magic, version, header length and padded header of
// h as NumPy writes them: the header dict, spare spaces for the first
// axis to grow to 21 digits in place (the last axis in Fortran order),
// then spaces and a newline up to a multiple of 64 bytes, at least one
// space; version 1.0 when the header's length fits in 16 bits, else 2.0.
func frame(h header) []byte {
	text := h.format()
	if len(h.shape) > 0 {
		grow := h.shape[0]
		if h.fortran {
			grow = h.shape[len(h.shape)-1]
		}
		text += strings.Repeat(" ", max(0, growthDigits-len(strconv.Itoa(grow))))
	}
	major, lenSize := byte(1), 2
	hlen := len(text) + 1
	pad := align - (len(magic)+2+lenSize+hlen)%align
	if hlen+pad > math.MaxUint16 {
		major, lenSize = 2, 4
		pad = align - (len(magic)+2+lenSize+hlen)%align
	}
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write([]byte{major, 0})
	if lenSize == 2 {
		b.Write(binary.LittleEndian.AppendUint16(nil, uint16(hlen+pad)))
	} else {
		b.Write(binary.LittleEndian.AppendUint32(nil, uint32(hlen+pad)))
	}
	b.WriteString(text)
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteByte('\n')
	return b.Bytes()
}

// growthDigits is NumPy's GROWTH_AXIS_MAX_DIGITS: the digits of the
// largest first axis a header leaves room for.
const growthDigits = 21

// Load reads the .npy file at path onto dev.
func Load(path string, dev ctx.Context) (*nd.NDArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	a, err := Read(f, dev)
	if err != nil {
		return nil, fmt.Errorf("%w (reading %s)", err, path)
	}
	return a, nil
}

// Read reads one .npy file from r onto dev. It reads exactly the file's
// bytes, so several files written one after another read back in turn.
func Read(r io.Reader, dev ctx.Context) (*nd.NDArray, error) {
	if err := ctx.Check(dev); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	t, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	count := 1
	for _, d := range h.shape {
		if d != 0 && count > math.MaxInt/8/d {
			return nil, fmt.Errorf("npy: shape %v is too large", h.shape)
		}
		count *= d
	}
	want := int64(count) * int64(t.size)
	data, err := io.ReadAll(io.LimitReader(r, want))
	if err != nil {
		return nil, fmt.Errorf("npy: reading the data: %w", err)
	}
	if int64(len(data)) != want {
		return nil, fmt.Errorf("npy: the data ends after %d of its %d bytes (shape %v, dtype %s)", len(data), want, h.shape, h.descr)
	}
	if t.big {
		swap(data, t.part)
	}
	if h.fortran && len(h.shape) > 1 {
		data = toCOrder(data, h.shape, t.size)
	}
	host, err := t.decode(data, count)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	shape := h.shape
	if t.complex {
		shape = append(shape, 2)
	}
	var out *nd.NDArray
	if err := nd.Catch(func() { out = fromHost(dev, host, shape) }); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return out, nil
}

// fromHost makes an array of the given shape (0-d included) on dev.
func fromHost(dev ctx.Context, host any, shape []int) *nd.NDArray {
	if len(shape) > 0 {
		return nd.FromSlice(dev, host, shape...)
	}
	one := nd.FromSlice(dev, host, 1)
	defer one.Release()
	return nd.Reshape(one)
}

// readHeader reads the magic, version and header dictionary.
func readHeader(r io.Reader) (header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return header{}, fmt.Errorf("npy: not a .npy file: %w", noEOF(err))
	}
	if string(pre[:6]) != magic {
		return header{}, fmt.Errorf("npy: not a .npy file (it starts %q)", pre[:6])
	}
	major := pre[6]
	var hlen int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return header{}, fmt.Errorf("npy: the header length: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return header{}, fmt.Errorf("npy: the header length: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return header{}, fmt.Errorf("npy: format version %d.%d is not supported (1.0, 2.0 and 3.0 are)", major, pre[7])
	}
	if hlen > maxHeader {
		return header{}, fmt.Errorf("npy: header of %d bytes is longer than the %d accepted", hlen, maxHeader)
	}
	text := make([]byte, hlen)
	if _, err := io.ReadFull(r, text); err != nil {
		return header{}, fmt.Errorf("npy: the header ends early: %w", noEOF(err))
	}
	h, err := parseHeader(string(text))
	if err != nil {
		return header{}, fmt.Errorf("npy: %w", err)
	}
	return h, nil
}

// noEOF turns a bare io.EOF into io.ErrUnexpectedEOF: a file that ends
// inside its header is truncated, not empty of arrays.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// swap reverses the bytes of each part-byte word of data in place.
func swap(data []byte, part int) {
	if part < 2 {
		return
	}
	for i := 0; i+part <= len(data); i += part {
		w := data[i : i+part]
		for l, r := 0, part-1; l < r; l, r = l+1, r-1 {
			w[l], w[r] = w[r], w[l]
		}
	}
}

// toCOrder reorders column-major elements of size bytes into row-major.
func toCOrder(data []byte, shape []int, size int) []byte {
	out := make([]byte, len(data))
	n := len(shape)
	fstride := make([]int, n) // in elements
	s := 1
	for i := 0; i < n; i++ {
		fstride[i] = s
		s *= shape[i]
	}
	idx := make([]int, n)
	for c := 0; c < len(data)/size; c++ {
		f := 0
		for i, v := range idx {
			f += v * fstride[i]
		}
		copy(out[c*size:(c+1)*size], data[f*size:(f+1)*size])
		for i := n - 1; i >= 0; i-- { // the next row-major index
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// fileType is a .npy dtype this package reads.
type fileType struct {
	kind    byte // 'f', 'i', 'u', 'b', 'c'
	size    int  // bytes an element
	part    int  // bytes a byte-swapped word (a complex number's half)
	big     bool
	complex bool
}

// parseDescr reads a descr such as '<f4'.
func parseDescr(d string) (fileType, error) {
	bad := func(why string) (fileType, error) {
		return fileType{}, fmt.Errorf("npy: dtype %q %s", d, why)
	}
	if d == "" {
		return bad("is empty")
	}
	t := fileType{}
	s := d
	switch s[0] {
	case '<', '|', '=':
		s = s[1:]
	case '>':
		t.big = true
		s = s[1:]
	}
	if s == "?" {
		s = "b1"
	}
	switch {
	case s == "O" || s == "O8" || s == "O4":
		return bad("holds Python objects (a pickle), which this package does not read")
	case s != "" && strings.IndexByte("USVMma", s[0]) >= 0:
		return bad("has no array form (strings, bytes, dates and raw records have none)")
	}
	if len(s) < 2 {
		return bad("is not a dtype NumPy writes")
	}
	t.kind = s[0]
	n, err := strconv.Atoi(s[1:])
	if err != nil {
		return bad("has no element size")
	}
	t.size, t.part = n, n
	ok := false
	switch t.kind {
	case 'f':
		ok = n == 2 || n == 4 || n == 8
	case 'i', 'u':
		ok = n == 1 || n == 2 || n == 4 || n == 8
	case 'b':
		ok = n == 1
	case 'c':
		ok = n == 8 || n == 16
		t.complex, t.part = true, n/2
	}
	if !ok {
		return bad("has no array form (nd reads floats, integers, bools and complex numbers)")
	}
	return t, nil
}

// decode turns count little-endian elements into the Go slice FromSlice
// takes for the array's dtype.
func (t fileType) decode(b []byte, count int) (any, error) {
	u16 := func(i int) uint16 { return binary.LittleEndian.Uint16(b[i*2:]) }
	u32 := func(i int) uint32 { return binary.LittleEndian.Uint32(b[i*4:]) }
	u64 := func(i int) uint64 { return binary.LittleEndian.Uint64(b[i*8:]) }
	switch {
	case t.kind == 'f' && t.size == 2:
		return fill(count, func(i int) nd.F16 { return nd.F16(u16(i)) }), nil
	case t.kind == 'f' && t.size == 4, t.kind == 'c' && t.size == 8:
		return fill(count*t.size/4, func(i int) float32 { return math.Float32frombits(u32(i)) }), nil
	case t.kind == 'f', t.kind == 'c':
		return fill(count*t.size/8, func(i int) float64 { return math.Float64frombits(u64(i)) }), nil
	case t.kind == 'b':
		return fill(count, func(i int) bool { return b[i] != 0 }), nil
	case t.kind == 'u' && t.size == 1:
		return append([]uint8(nil), b...), nil
	case t.kind == 'i' && t.size == 4:
		return fill(count, func(i int) int32 { return int32(u32(i)) }), nil
	case t.kind == 'i' && t.size == 8:
		return fill(count, func(i int) int64 { return int64(u64(i)) }), nil
	case t.kind == 'i' && t.size == 1:
		return fill(count, func(i int) int64 { return int64(int8(b[i])) }), nil
	case t.kind == 'i':
		return fill(count, func(i int) int64 { return int64(int16(u16(i))) }), nil
	case t.size == 2:
		return fill(count, func(i int) int64 { return int64(u16(i)) }), nil
	case t.size == 4:
		return fill(count, func(i int) int64 { return int64(u32(i)) }), nil
	}
	out := make([]int64, count) // uint64
	for i := range out {
		v := u64(i)
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("uint64 element %d is %d, above the largest int64 (nd reads uint64 as Int64)", i, v)
		}
		out[i] = int64(v)
	}
	return out, nil
}

// fill makes n values with at.
func fill[T any](n int, at func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = at(i)
	}
	return out
}
