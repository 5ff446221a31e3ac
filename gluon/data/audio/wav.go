package audio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/nd"
)

// Encoding is how a WAV file stores its samples.
type Encoding int

// The encodings ReadWAV reads and WriteWAV writes. The zero Encoding is
// none of them.
const (
	PCMU8   Encoding = iota + 1 // 8-bit unsigned integers, 128 the zero
	PCMS16                      // 16-bit signed integers
	PCMS24                      // 24-bit signed integers
	PCMS32                      // 32-bit signed integers
	Float32                     // 32-bit IEEE floats
	Float64                     // 64-bit IEEE floats
)

// String returns torchaudio's name of the encoding with its width:
// "PCM_U8", "PCM_S16", "PCM_S24", "PCM_S32", "PCM_F32" or "PCM_F64".
func (e Encoding) String() string {
	switch e {
	case PCMU8:
		return "PCM_U8"
	case PCMS16:
		return "PCM_S16"
	case PCMS24:
		return "PCM_S24"
	case PCMS32:
		return "PCM_S32"
	case Float32:
		return "PCM_F32"
	case Float64:
		return "PCM_F64"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// Bytes returns the size of one sample, 0 for an invalid Encoding.
func (e Encoding) Bytes() int {
	switch e {
	case PCMU8:
		return 1
	case PCMS16:
		return 2
	case PCMS24:
		return 3
	case PCMS32, Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// The errors ReadWAV's errors wrap (with errors.Is): ErrFormat for a file
// that is not a valid WAV file, ErrUnsupported for a valid one in an
// encoding this package does not decode (compressed, big-endian, RF64).
// A file that ends before its data chunk also wraps io.ErrUnexpectedEOF.
var (
	ErrFormat      = errors.New("not a valid WAV file")
	ErrUnsupported = errors.New("unsupported WAV encoding")
)

// Waveform is decoded audio: Channels signals of the same length, each
// channel's samples after the previous channel's (torchaudio.load's
// [channels, frames] layout), as float32 values in [−1, 1].
type Waveform struct {
	// SampleRate is the number of frames per second.
	SampleRate int
	// Channels is the number of channels (at least 1).
	Channels int
	// Samples holds Channels·Frames() values, channel-major.
	Samples []float32
	// Encoding is how the file stored the samples (set by ReadWAV;
	// WriteWAV takes its encoding as an argument).
	Encoding Encoding
}

// Frames returns the number of samples per channel.
func (w Waveform) Frames() int {
	if w.Channels < 1 {
		return 0
	}
	return len(w.Samples) / w.Channels
}

// Channel returns channel c's samples (a slice of Samples, not a copy).
func (w Waveform) Channel(c int) []float32 {
	n := w.Frames()
	return w.Samples[c*n : (c+1)*n]
}

// NDArray returns the samples as a float32 array [Channels, Frames] on
// dev.
func (w Waveform) NDArray(dev ctx.Context) *nd.NDArray {
	return nd.FromSlice(dev, w.Samples, w.Channels, w.Frames())
}

// Tensor returns the samples as a float32 data.Tensor [Channels, Frames]
// (sharing Samples), a data set's sample.
func (w Waveform) Tensor() data.Tensor {
	return data.Tensor{Shape: []int{w.Channels, w.Frames()}, F32: w.Samples}
}

// LoadWAV reads the WAV file at path (see ReadWAV).
func LoadWAV(path string) (Waveform, error) {
	f, err := os.Open(path)
	if err != nil {
		return Waveform{}, fmt.Errorf("audio: %w", err)
	}
	defer f.Close()
	w, err := ReadWAV(bufio.NewReader(f))
	if err != nil {
		return Waveform{}, fmt.Errorf("%w (reading %s)", err, path)
	}
	return w, nil
}

// ReadWAV decodes a RIFF WAVE stream as torchaudio 0.13's load does with
// normalize=True (through libsox): 8-bit unsigned, 16-, 24- and 32-bit
// signed PCM (also with fewer valid bits than the container holds,
// left-justified) and 32- and 64-bit IEEE floats, in the plain format
// tags (1, 3) or WAVE_FORMAT_EXTENSIBLE, to float32 values in [−1, 1].
// As libsox it takes a sample's size from the bits per sample (rounded
// up to whole bytes) and the frame's from that and the channels,
// whatever the header's block align says, and it is as lenient with a
// damaged data chunk: one that declares more bytes than the file holds
// gives the whole frames there are, and a trailing partial frame is
// dropped (libsox warns; torchaudio.load returns the samples).
// Like libsox it takes every sample through a 32-bit integer of full
// scale 2³¹ and from there to float32 on a grid of 2⁻²⁴: 8-, 16- and
// 24-bit samples come out exact (v/128, v/2¹⁵, v/2²³), 32-bit ones
// rounded to 2⁻²⁴, and float samples are clipped to [−1, 1] and
// quantised to 2⁻²⁴ too (below that torchaudio 0.13 loses them as
// well). Chunks other than "fmt " and "data" are skipped, and reading
// stops at the end of the data chunk. A file that is not WAV, is corrupt
// or ends before its data chunk returns an error wrapping ErrFormat;
// compressed encodings (ADPCM, A-law, µ-law, MP3, …), big-endian RIFX and
// RF64 files return one wrapping ErrUnsupported.
func ReadWAV(r io.Reader) (Waveform, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Waveform{}, formatErr(err, "the RIFF header")
	}
	switch string(hdr[:4]) {
	case "RIFF":
	case "RIFX":
		return Waveform{}, fmt.Errorf("audio: %w: big-endian RIFX files are not supported", ErrUnsupported)
	case "RF64", "BW64":
		return Waveform{}, fmt.Errorf("audio: %w: %s (64-bit RIFF) files are not supported", ErrUnsupported, hdr[:4])
	default:
		return Waveform{}, fmt.Errorf("audio: %w: it starts %q, not \"RIFF\"", ErrFormat, hdr[:4])
	}
	if string(hdr[8:]) != "WAVE" {
		return Waveform{}, fmt.Errorf("audio: %w: a RIFF file of form %q, not \"WAVE\"", ErrFormat, hdr[8:])
	}
	var f *wavFormat
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if err == io.EOF {
				if f == nil {
					return Waveform{}, fmt.Errorf("audio: %w: no \"fmt \" chunk", ErrFormat)
				}
				return Waveform{}, fmt.Errorf("audio: %w: no \"data\" chunk", ErrFormat)
			}
			return Waveform{}, formatErr(err, "a chunk header")
		}
		id, size := string(ch[:4]), binary.LittleEndian.Uint32(ch[4:])
		switch id {
		case "fmt ":
			if f != nil {
				return Waveform{}, fmt.Errorf("audio: %w: two \"fmt \" chunks", ErrFormat)
			}
			if size > 1<<16 {
				return Waveform{}, fmt.Errorf("audio: %w: a \"fmt \" chunk of %d bytes", ErrFormat, size)
			}
			body := make([]byte, size+size&1)
			if _, err := io.ReadFull(r, body); err != nil && !(err == io.ErrUnexpectedEOF && size&1 == 1) {
				return Waveform{}, formatErr(err, "the \"fmt \" chunk")
			}
			var err error
			if f, err = parseFormat(body[:size]); err != nil {
				return Waveform{}, err
			}
		case "data":
			if f == nil {
				return Waveform{}, fmt.Errorf("audio: %w: the \"data\" chunk comes before the \"fmt \" chunk", ErrFormat)
			}
			return readData(r, f, size)
		default:
			if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size&1)); err != nil {
				return Waveform{}, formatErr(err, fmt.Sprintf("the %q chunk", id))
			}
		}
	}
}

// formatErr reports a read that failed in what: the stream ended early
// (wrapping ErrFormat and io.ErrUnexpectedEOF) or could not be read.
func formatErr(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("audio: %w: the file ends in %s (%w)", ErrFormat, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("audio: reading %s: %w", what, err)
}

// wavFormat is what a "fmt " chunk says.
type wavFormat struct {
	enc      Encoding
	channels int
	rate     int
	align    int // bytes per frame
}

// The KSDATAFORMAT_SUBTYPE GUID's last 14 bytes, shared by PCM and IEEE
// float; the first two are the format tag.
var ksSubtype = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

// Format tags.
const (
	tagPCM        = 1
	tagFloat      = 3
	tagExtensible = 0xFFFE
)

// compressed names the common compressed format tags.
var compressed = map[uint16]string{
	0x0002: "Microsoft ADPCM", 0x0006: "A-law", 0x0007: "µ-law", 0x0011: "IMA ADPCM",
	0x0031: "GSM 6.10", 0x0050: "MPEG", 0x0055: "MPEG layer 3", 0x0092: "Dolby AC-3",
	0x00FF: "AAC", 0x1610: "MPEG-4 AAC", 0xF1AC: "FLAC",
}

// parseFormat reads a "fmt " chunk.
func parseFormat(b []byte) (*wavFormat, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("audio: %w: a \"fmt \" chunk of %d bytes, under 16", ErrFormat, len(b))
	}
	le := binary.LittleEndian
	tag := le.Uint16(b)
	// The block align (b[12:14]) is not read: libsox, and so
	// torchaudio.load, derives the frame size from the channels and the
	// bits per sample, and reads files whose block align is 0 or
	// disagrees.
	f := &wavFormat{channels: int(le.Uint16(b[2:])), rate: int(le.Uint32(b[4:]))}
	bits := int(le.Uint16(b[14:]))
	if tag == tagExtensible {
		if len(b) < 40 || le.Uint16(b[16:]) < 22 {
			return nil, fmt.Errorf("audio: %w: a WAVE_FORMAT_EXTENSIBLE \"fmt \" chunk of %d bytes, under 40", ErrFormat, len(b))
		}
		if !bytes.Equal(b[26:40], ksSubtype) {
			return nil, fmt.Errorf("audio: %w: extensible subformat GUID % x", ErrUnsupported, b[24:40])
		}
		tag = le.Uint16(b[24:])
		if valid := int(le.Uint16(b[18:])); valid != 0 {
			if valid > bits {
				return nil, fmt.Errorf("audio: %w: %d valid bits in %d-bit samples", ErrFormat, valid, bits)
			}
		}
	}
	if name, ok := compressed[tag]; ok {
		return nil, fmt.Errorf("audio: %w: format tag 0x%04X (%s) is compressed; only PCM and IEEE float are read", ErrUnsupported, tag, name)
	}
	if f.channels < 1 || f.rate < 1 {
		return nil, fmt.Errorf("audio: %w: %d channels at %d Hz", ErrFormat, f.channels, f.rate)
	}
	width := (bits + 7) / 8 // the container, in bytes, as libsox counts it
	f.align = f.channels * width
	if f.align > math.MaxUint16 {
		// No block align can say it: no writer makes such a file, and
		// WriteWAV could not write it back.
		return nil, fmt.Errorf("audio: %w: frames of %d channels of %d-bit samples (%d bytes) exceed a block align's 65535", ErrFormat, f.channels, bits, f.align)
	}
	switch tag {
	case tagPCM:
		if bits < 1 {
			return nil, fmt.Errorf("audio: %w: %d-bit PCM", ErrFormat, bits)
		}
		if width > 4 {
			return nil, fmt.Errorf("audio: %w: %d-byte PCM samples (at most 4 are read)", ErrUnsupported, width)
		}
		f.enc = []Encoding{0, PCMU8, PCMS16, PCMS24, PCMS32}[width]
	case tagFloat:
		switch {
		case bits == 32:
			f.enc = Float32
		case bits == 64:
			f.enc = Float64
		default:
			return nil, fmt.Errorf("audio: %w: %d-bit IEEE float (32 and 64 are read)", ErrUnsupported, bits)
		}
	default:
		return nil, fmt.Errorf("audio: %w: format tag 0x%04X; only PCM (1) and IEEE float (3) are read", ErrUnsupported, tag)
	}
	return f, nil
}

// readData decodes the data chunk of size bytes (0xFFFFFFFF: up to the
// end of the stream, as streaming writers leave it). As libsox does, it
// decodes the whole frames there are: a chunk that declares more bytes
// than the stream holds (an interrupted recording or download) gives the
// frames present, and a trailing partial frame is dropped.
func readData(r io.Reader, f *wavFormat, size uint32) (Waveform, error) {
	lr := io.LimitReader(r, int64(size))
	raw, err := io.ReadAll(lr)
	if err != nil {
		return Waveform{}, fmt.Errorf("audio: reading the \"data\" chunk: %w", err)
	}
	frames := len(raw) / f.align
	w := Waveform{SampleRate: f.rate, Channels: f.channels, Encoding: f.enc, Samples: make([]float32, frames*f.channels)}
	width := f.enc.Bytes()
	for t := range frames {
		for c := range f.channels {
			w.Samples[c*frames+t] = soxFloat(soxSample(raw[t*f.align+c*width:], f.enc))
		}
	}
	return w, nil
}

// soxSample returns the sample at p as libsox holds it, a 32-bit integer
// (full scale ±2³¹): integers shifted to the top bits; float32 samples
// scaled by 2³¹, truncated towards zero and clipped, float64 ones scaled,
// rounded (halves away from zero) and clipped, as libsox's
// SOX_FLOAT_32BIT_TO_SAMPLE and SOX_FLOAT_64BIT_TO_SAMPLE do. NaN gives 0.
func soxSample(p []byte, enc Encoding) int64 {
	le := binary.LittleEndian
	const lo, hi = math.MinInt32, math.MaxInt32
	switch enc {
	case PCMU8:
		return int64(int(p[0])-128) << 24
	case PCMS16:
		return int64(int16(le.Uint16(p))) << 16
	case PCMS24:
		return int64(int32(uint32(p[0])<<8 | uint32(p[1])<<16 | uint32(p[2])<<24))
	case PCMS32:
		return int64(int32(le.Uint32(p)))
	case Float32:
		d := float64(math.Float32frombits(le.Uint32(p))) * (1 << 31)
		switch {
		case d != d:
			return 0
		case d < lo:
			return lo
		case d >= hi+1:
			return hi
		}
		return int64(d)
	}
	d := math.Float64frombits(le.Uint64(p)) * (1 << 31)
	switch {
	case d != d:
		return 0
	case d < 0 && d <= lo-0.5:
		return lo
	case d < 0:
		return int64(d - 0.5)
	case d >= hi+0.5:
		return hi
	}
	return int64(d + 0.5)
}

// soxFloat returns the 32-bit sample s as libsox's
// SOX_SAMPLE_TO_FLOAT_32BIT converts it for torchaudio.load: rounded to a
// multiple of 2⁷ (halves up), so that it fits a float32's 24 bits
// exactly, and scaled by 2⁻³¹; samples within 2⁶ of full scale give 1.
func soxFloat(s int64) float32 {
	if s > math.MaxInt32-64 {
		return 1
	}
	return float32(float64((s+64)&^127) / (1 << 31))
}
