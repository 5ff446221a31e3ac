package tensorboard

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The expected records are built here field by field with protowire from
// the field numbers of TensorFlow's event.proto and summary.proto, not
// with the generated types the writer uses.

func msg(num protowire.Number, body []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), body)
}
func str(num protowire.Number, s string) []byte { return msg(num, []byte(s)) }
func dbl(num protowire.Number, v float64) []byte {
	if v == 0 {
		return nil // proto3 leaves zeros out
	}
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), math.Float64bits(v))
}
func flt(num protowire.Number, v float32) []byte {
	return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), math.Float32bits(v))
}
func vint(num protowire.Number, v uint64) []byte {
	if v == 0 {
		return nil
	}
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}
func packed(num protowire.Number, vs []float64) []byte {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendFixed64(body, math.Float64bits(v))
	}
	return msg(num, body)
}
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// event: wall_time 1, step 2, file_version 3, summary 5.
func event(wall float64, step int64, what []byte) []byte {
	return cat(dbl(1, wall), vint(2, uint64(step)), what)
}

// TestEventFile writes every kind of value, reads the file back record by
// record (checking both CRCs of each) and compares each record's bytes
// with bytes built independently from the proto definitions.
func TestEventFile(t *testing.T) {
	fixed := time.Unix(1700000000, 250_000_000)
	clock = func() time.Time { return fixed }
	defer func() { clock = time.Now }()
	wall := 1700000000.25
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(w.Path()), "events.out.tfevents.1700000000.") {
		t.Errorf("file name %s", w.Path())
	}
	gray := image.NewGray(image.Rect(0, 0, 3, 2))
	gray.SetGray(1, 1, color.Gray{Y: 200})
	rgba := image.NewRGBA(image.Rect(0, 0, 2, 2))
	rgba.Set(0, 1, color.RGBA{R: 255, A: 255})
	hist := []float64{-1, 0, 0, 0.5, 2, 2}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddScalar("train/loss", 0.75, 3))
	must(w.AddScalars(map[string]float64{"val/acc": 0.5, "train/acc": 0.25}, 4))
	must(w.AddHistogram("w", hist, 5))
	must(w.AddImage("gray", gray, 6))
	must(w.AddImage("rgba", rgba, 7))
	must(w.AddText("notes", "**hi**", 8))
	must(w.AddText("notes", "again", 9))
	must(w.Close())
	if err := w.AddScalar("late", 1, 10); err == nil {
		t.Error("a write after Close succeeded")
	}
	must(w.Close())

	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(b)
	if err != nil {
		t.Fatal(err)
	}

	value := func(tag string, rest ...[]byte) []byte { return msg(1, cat(append([][]byte{str(1, tag)}, rest...)...)) }
	summary := func(values ...[]byte) []byte { return msg(5, cat(values...)) }
	pngOf := func(img image.Image) []byte {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	image := func(h, w, cs int, img image.Image) []byte {
		return msg(4, cat(vint(1, uint64(h)), vint(2, uint64(w)), vint(3, uint64(cs)), msg(4, pngOf(img))))
	}
	edges := bucketEdges()
	var limits, counts []float64
	// -1 falls in the bucket whose upper edge is the first ≥ -1; the zeros
	// in the 0 bucket, 0.5 and 2 in theirs.
	lo := firstGE(edges, -1)
	hi := firstGE(edges, 2)
	limits = append(limits, edges[lo:hi+1]...)
	counts = make([]float64, len(limits))
	for _, v := range hist {
		counts[firstGE(edges, v)-lo]++
	}
	histo := msg(5, cat(dbl(1, -1), dbl(2, 2), dbl(3, 6), dbl(4, 3.5), dbl(5, 9.25), packed(6, limits), packed(7, counts)))
	text := func(s string) []byte {
		shape := msg(2, msg(2, vint(1, 1)))
		return msg(8, cat(vint(1, 7), shape, str(8, s)))
	}
	meta := msg(9, msg(1, str(1, "text")))
	want := [][]byte{
		event(wall, 0, str(3, "brain.Event:2")),
		event(wall, 3, summary(value("train/loss", flt(2, 0.75)))),
		event(wall, 4, summary(value("train/acc", flt(2, 0.25)), value("val/acc", flt(2, 0.5)))),
		event(wall, 5, summary(value("w", histo))),
		event(wall, 6, summary(value("gray", image(2, 3, 1, gray)))),
		event(wall, 7, summary(value("rgba", image(2, 2, 4, rgba)))),
		// The Go encoder writes a oneof after the other fields (metadata, 9,
		// before tensor, 8): a valid order, TensorBoard reads either.
		event(wall, 8, summary(value("notes", meta, text("**hi**")))),
		event(wall, 9, summary(value("notes", text("again")))),
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i := range want {
		if !bytes.Equal(recs[i], want[i]) {
			t.Errorf("record %d:\n got %x\nwant %x", i, recs[i], want[i])
		}
	}
}

func firstGE(edges []float64, v float64) int {
	for i, e := range edges {
		if e >= v {
			return i
		}
	}
	return len(edges) - 1
}

// TestReadRecordsCorruption: a flipped bit in a length, in data or in a
// checksum, and a cut file, are errors naming the offset.
func TestReadRecordsCorruption(t *testing.T) {
	good := append(Record([]byte("first")), Record([]byte("second record"))...)
	if recs, err := ReadRecords(good); err != nil || len(recs) != 2 || string(recs[1]) != "second record" {
		t.Fatalf("clean file: %q, %v", recs, err)
	}
	for _, tc := range []struct {
		name string
		at   int
		cut  bool
		want string
	}{
		{"length", 0, false, "corrupt length at offset 0"},
		{"length crc", 9, false, "corrupt length at offset 0"},
		{"data", 13, false, "corrupt data in the record at offset 0"},
		{"data crc", 18, false, "corrupt data in the record at offset 0"},
		{"second data", 21 + 12 + 2, false, "offset 21"},
		{"cut", len(good) - 3, true, "truncated record at offset 21"},
		{"cut after a header", 21 + 13, true, "truncated record at offset 21"},
	} {
		b := append([]byte(nil), good...)
		if tc.cut {
			b = b[:tc.at]
		} else {
			b[tc.at] ^= 4
		}
		if _, err := ReadRecords(b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestHistogramErrors: NaN is refused; an empty histogram is valid.
func TestHistogramErrors(t *testing.T) {
	if _, err := histogram([]float64{1, math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
	if h, err := histogram(nil); err != nil || h.Num != 0 || len(h.Bucket) != 0 {
		t.Errorf("empty: %v, %v", h, err)
	}
}
