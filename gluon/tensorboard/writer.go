// Package tensorboard writes TensorBoard event files: scalars, histograms,
// images and text, from a training loop (Writer) or from an Estimator's Fit
// (Handler). Point TensorBoard at the log directory:
//
//	w, err := tensorboard.NewWriter("runs/lenet")
//	w.AddScalar("train/loss", loss, step)
//	w.Close()
//
//	tensorboard --logdir runs
//
// A file holds TFRecord-framed Event protobufs: each record is the data's
// length (uint64, little-endian), the masked CRC-32C of those 8 bytes, the
// data and the masked CRC-32C of the data. The first event carries
// file_version "brain.Event:2".
package tensorboard

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/gluon/tensorboard/internal/tbpb"
)

// FileVersion is the file_version of an event file's first event.
const FileVersion = "brain.Event:2"

// clock gives the events' wall times (tests fix it).
var clock = time.Now

// Writer appends events to one event file in a log directory. It is safe
// for concurrent use. Events are buffered: Flush writes them out, and
// Close flushes and closes the file.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	path   string
	closed bool
	texts  map[string]bool // tags whose first text value carried the plugin metadata
}

// NewWriter creates logdir if needed and a new event file in it, named
// events.out.tfevents.<unix seconds>.<host>[.<n>] as TensorFlow names them
// (a number is added when the name is taken), and writes the file-version
// event.
func NewWriter(logdir string) (*Writer, error) {
	if err := os.MkdirAll(logdir, 0o755); err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	now := clock()
	base := filepath.Join(logdir, fmt.Sprintf("events.out.tfevents.%d.%s", now.Unix(), host))
	var f *os.File
	path := base
	for i := 1; ; i++ {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil || !errors.Is(err, os.ErrExist) || i > 1000 {
			break
		}
		path = fmt.Sprintf("%s.%d", base, i)
	}
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriter(f), path: path, texts: map[string]bool{}}
	if err := w.write(&tbpb.Event{WallTime: seconds(now), What: &tbpb.Event_FileVersion{FileVersion: FileVersion}}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Path returns the event file's path.
func (w *Writer) Path() string { return w.path }

func seconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// AddScalar records value under tag at step (TensorBoard's scalar plot).
func (w *Writer) AddScalar(tag string, value float64, step int64) error {
	return w.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_SimpleValue{SimpleValue: float32(value)}})
}

// AddScalars records several scalars at one step, in the order of their
// tags (one event).
func (w *Writer) AddScalars(values map[string]float64, step int64) error {
	tags := make([]string, 0, len(values))
	for t := range values {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	vs := make([]*tbpb.Summary_Value, len(tags))
	for i, t := range tags {
		vs[i] = &tbpb.Summary_Value{Tag: t, Value: &tbpb.Summary_Value_SimpleValue{SimpleValue: float32(values[t])}}
	}
	return w.summary(step, vs...)
}

// AddHistogram records the distribution of values under tag at step, in
// buckets whose edges grow geometrically by 10% from 1e-12 on both sides of
// zero (TensorFlow's default), keeping only the buckets in the values'
// range. NaN values are an error.
func (w *Writer) AddHistogram(tag string, values []float64, step int64) error {
	h, err := histogram(values)
	if err != nil {
		return fmt.Errorf("tensorboard: histogram %q: %w", tag, err)
	}
	return w.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_Histo{Histo: h}})
}

// AddImage records img, PNG-encoded, under tag at step.
func (w *Writer) AddImage(tag string, img image.Image, step int64) error {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return fmt.Errorf("tensorboard: image %q: %w", tag, err)
	}
	b := img.Bounds()
	cs := int32(4) // RGBA
	switch img.(type) {
	case *image.Gray, *image.Gray16:
		cs = 1
	}
	return w.summary(step, &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_Image{Image: &tbpb.Summary_Image{
		Height: int32(b.Dy()), Width: int32(b.Dx()), Colorspace: cs, EncodedImageString: buf.Bytes(),
	}}})
}

// AddText records text (Markdown) under tag at step, for TensorBoard's
// text plugin: a string tensor whose first value per tag carries the
// plugin's metadata.
func (w *Writer) AddText(tag, text string, step int64) error {
	v := &tbpb.Summary_Value{Tag: tag, Value: &tbpb.Summary_Value_Tensor{Tensor: &tbpb.TensorProto{
		Dtype: tbpb.DataType_DT_STRING, TensorShape: &tbpb.TensorShapeProto{Dim: []*tbpb.TensorShapeProto_Dim{{Size: 1}}},
		StringVal: [][]byte{[]byte(text)},
	}}}
	w.mu.Lock()
	first := !w.texts[tag]
	w.texts[tag] = true
	w.mu.Unlock()
	if first {
		v.Metadata = &tbpb.SummaryMetadata{PluginData: &tbpb.SummaryMetadata_PluginData{PluginName: "text"}}
	}
	return w.summary(step, v)
}

func (w *Writer) summary(step int64, vs ...*tbpb.Summary_Value) error {
	return w.write(&tbpb.Event{WallTime: seconds(clock()), Step: step, What: &tbpb.Event_Summary{Summary: &tbpb.Summary{Value: vs}}})
}

// write appends one TFRecord holding ev.
func (w *Writer) write(ev *tbpb.Event) error {
	data, err := proto.Marshal(ev)
	if err != nil {
		return fmt.Errorf("tensorboard: encoding an event: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("tensorboard: write to a closed Writer")
	}
	if _, err := w.w.Write(Record(data)); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

// Flush writes the buffered events to the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

// Close flushes and closes the file; later writes are errors, and a second
// Close does nothing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaskedCRC is TFRecord's checksum: the CRC-32C of data, rotated right by
// 15 bits, plus 0xa282ead8.
func MaskedCRC(data []byte) uint32 {
	c := crc32.Checksum(data, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// Record frames data as one TFRecord.
func Record(data []byte) []byte {
	out := make([]byte, 12, 16+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(data)))
	binary.LittleEndian.PutUint32(out[8:], MaskedCRC(out[:8]))
	out = append(out, data...)
	return binary.LittleEndian.AppendUint32(out, MaskedCRC(data))
}

// ReadRecords splits an event file's bytes into its records' data,
// checking both checksums of each; a truncated or corrupt record is an
// error naming its offset.
func ReadRecords(b []byte) ([][]byte, error) {
	var out [][]byte
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			return out, fmt.Errorf("tensorboard: truncated record header at offset %d", off)
		}
		n := binary.LittleEndian.Uint64(b[off:])
		if MaskedCRC(b[off:off+8]) != binary.LittleEndian.Uint32(b[off+8:]) {
			return out, fmt.Errorf("tensorboard: corrupt length at offset %d", off)
		}
		if n > uint64(len(b)-off-12) || uint64(len(b)-off-12)-n < 4 {
			return out, fmt.Errorf("tensorboard: truncated record at offset %d (%d bytes of data announced)", off, n)
		}
		data := b[off+12 : off+12+int(n)]
		if MaskedCRC(data) != binary.LittleEndian.Uint32(b[off+12+int(n):]) {
			return out, fmt.Errorf("tensorboard: corrupt data in the record at offset %d", off)
		}
		out = append(out, data)
		off += 16 + int(n)
	}
	return out, nil
}

// histogram bins values on TensorFlow's default bucket edges.
func histogram(values []float64) (*tbpb.HistogramProto, error) {
	h := &tbpb.HistogramProto{Min: math.Inf(1), Max: math.Inf(-1)}
	if len(values) == 0 {
		h.Min, h.Max = 0, 0
		return h, nil
	}
	for _, v := range values {
		if math.IsNaN(v) {
			return nil, errors.New("NaN value")
		}
		h.Min, h.Max = min(h.Min, v), max(h.Max, v)
		h.Num++
		h.Sum += v
		h.SumSquares += v * v
	}
	edges := bucketEdges()
	counts := make([]float64, len(edges))
	for _, v := range values {
		i, _ := slices.BinarySearch(edges, v) // the first edge ≥ v
		counts[min(i, len(edges)-1)]++
	}
	lo, hi := 0, len(edges)-1
	for lo < hi && counts[lo] == 0 {
		lo++
	}
	for hi > lo && counts[hi] == 0 {
		hi--
	}
	h.BucketLimit = slices.Clone(edges[lo : hi+1])
	h.Bucket = slices.Clone(counts[lo : hi+1])
	return h, nil
}

var (
	edgesOnce sync.Once
	edges     []float64
)

// bucketEdges returns the upper edges: ±1e-12·1.1^k up to ±1e20, 0, and
// the largest float64 last.
func bucketEdges() []float64 {
	edgesOnce.Do(func() {
		var pos []float64
		for v := 1e-12; v < 1e20; v *= 1.1 {
			pos = append(pos, v)
		}
		for i := len(pos) - 1; i >= 0; i-- {
			edges = append(edges, -pos[i])
		}
		edges = append(edges, 0)
		edges = append(edges, pos...)
		edges = append(edges, math.MaxFloat64)
	})
	return edges
}
