package audio

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/goluon/goluon/internal/atomicfile"
)

// SaveWAV writes wav to the file at path in encoding enc (see WriteWAV),
// atomically: a failure leaves any file that was there as it was.
func SaveWAV(path string, wav Waveform, enc Encoding) error {
	if err := checkWaveform(wav, enc); err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return WriteWAV(w, wav, enc) }); err != nil {
		return fmt.Errorf("audio: %w (saving %s)", err, path)
	}
	return nil
}

// checkWaveform reports a waveform or encoding WriteWAV cannot write.
func checkWaveform(wav Waveform, enc Encoding) error {
	switch {
	case enc.Bytes() == 0:
		return fmt.Errorf("audio: cannot write %v: want PCMU8, PCMS16, PCMS24, PCMS32, Float32 or Float64", enc)
	case wav.Channels < 1 || wav.Channels > math.MaxUint16:
		return fmt.Errorf("audio: cannot write %d channels (1 to 65535)", wav.Channels)
	case wav.SampleRate < 1 || wav.SampleRate > math.MaxUint32:
		return fmt.Errorf("audio: cannot write a sample rate of %d Hz", wav.SampleRate)
	case len(wav.Samples)%wav.Channels != 0:
		return fmt.Errorf("audio: %d samples are not a whole number of frames of %d channels", len(wav.Samples), wav.Channels)
	case wav.Channels*enc.Bytes() > math.MaxUint16:
		return fmt.Errorf("audio: frames of %d channels of %v do not fit a WAV block", wav.Channels, enc)
	case int64(len(wav.Samples))*int64(enc.Bytes()) > math.MaxUint32-100:
		return fmt.Errorf("audio: %d samples of %v exceed a WAV file's 4 GiB", len(wav.Samples), enc)
	}
	return nil
}

// WriteWAV writes wav as a RIFF WAVE stream in encoding enc, byte for
// byte as torchaudio 0.13's save writes it (through libsox): PCM as
// format tag 1, IEEE floats as tag 3 with a "fact" chunk, and
// WAVE_FORMAT_EXTENSIBLE (with a "fact" chunk and libsox's speaker mask
// for 1, 2, 4, 6 and 8 channels) for PCM of more than two channels or
// wider than 16 bits. The samples are quantised as torchaudio and libsox
// quantise them: each becomes the 32-bit integer x·2³¹ truncated towards
// zero and clipped (NaN becomes the most negative value), and from there
// 8-, 16- and 24-bit PCM round to their step with halves up (towards +∞),
// 32-bit PCM keeps it, Float32 rounds it to a multiple of 2⁻²⁴ (so that
// it fits a float32 exactly; within 2⁻²⁵ of full scale it is 1) and
// Float64 keeps it exactly. So a float sample is clipped to [−1, 1] in
// every encoding, and Float64 holds it to 2⁻³¹, not exactly. What ReadWAV
// read from a file writes back to the same values.
func WriteWAV(w io.Writer, wav Waveform, enc Encoding) error {
	if err := checkWaveform(wav, enc); err != nil {
		return err
	}
	width, ch, frames := enc.Bytes(), wav.Channels, wav.Frames()
	tag := uint16(tagPCM)
	if enc == Float32 || enc == Float64 {
		tag = tagFloat
	}
	ext := tag == tagPCM && (ch > 2 || width > 2)
	le := binary.LittleEndian
	var fmtBody []byte
	fmtBody = le.AppendUint16(fmtBody, tag)
	if ext {
		fmtBody[0], fmtBody[1] = 0xFE, 0xFF
	}
	fmtBody = le.AppendUint16(fmtBody, uint16(ch))
	fmtBody = le.AppendUint32(fmtBody, uint32(wav.SampleRate))
	fmtBody = le.AppendUint32(fmtBody, uint32(wav.SampleRate*ch*width))
	fmtBody = le.AppendUint16(fmtBody, uint16(ch*width))
	fmtBody = le.AppendUint16(fmtBody, uint16(8*width))
	switch {
	case ext:
		// libsox's guesses from the channel count; other counts get no
		// speaker assignment.
		mask := uint32(0)
		switch ch {
		case 1:
			mask = 0x4 // front centre
		case 2:
			mask = 0x3 // front left and right
		case 4:
			mask = 0x33 // quad: front and back, left and right
		case 6:
			mask = 0x3F // 5.1: front left, right and centre, LFE, back left and right
		case 8:
			mask = 0x63F // 7.1: 5.1 and side left and right
		}
		fmtBody = le.AppendUint16(fmtBody, 22)
		fmtBody = le.AppendUint16(fmtBody, uint16(8*width))
		fmtBody = le.AppendUint32(fmtBody, mask)
		fmtBody = le.AppendUint16(fmtBody, tag)
		fmtBody = append(fmtBody, ksSubtype...)
	case tag == tagFloat:
		fmtBody = le.AppendUint16(fmtBody, 0)
	}
	dataSize := len(wav.Samples) * width
	fact := tag == tagFloat || ext
	riffSize := 4 + 8 + len(fmtBody) + 8 + dataSize + dataSize&1
	if fact {
		riffSize += 12
	}
	bw := bufio.NewWriter(w)
	var hdr []byte
	hdr = append(hdr, "RIFF"...)
	hdr = le.AppendUint32(hdr, uint32(riffSize))
	hdr = append(hdr, "WAVEfmt "...)
	hdr = le.AppendUint32(hdr, uint32(len(fmtBody)))
	hdr = append(hdr, fmtBody...)
	if fact {
		hdr = append(hdr, "fact"...)
		hdr = le.AppendUint32(hdr, 4)
		hdr = le.AppendUint32(hdr, uint32(frames))
	}
	hdr = append(hdr, "data"...)
	hdr = le.AppendUint32(hdr, uint32(dataSize))
	bw.Write(hdr)
	buf := make([]byte, 0, 8*ch)
	for t := range frames {
		buf = buf[:0]
		for c := range ch {
			buf = appendSample(buf, wav.Samples[c*frames+t], enc)
		}
		bw.Write(buf)
	}
	if dataSize&1 == 1 {
		bw.WriteByte(0)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("audio: writing WAV: %w", err)
	}
	return nil
}

// appendSample appends v in encoding enc, as libsox writes the sample
// torchaudio hands it (see WriteWAV).
func appendSample(b []byte, v float32, enc Encoding) []byte {
	le := binary.LittleEndian
	s := soxFromFloat(v)
	switch enc {
	case PCMU8:
		return append(b, uint8(soxToSigned(s, 8))^0x80)
	case PCMS16:
		return le.AppendUint16(b, uint16(soxToSigned(s, 16)))
	case PCMS24:
		q := uint32(soxToSigned(s, 24))
		return append(b, byte(q), byte(q>>8), byte(q>>16))
	case PCMS32:
		return le.AppendUint32(b, uint32(s))
	case Float32:
		return le.AppendUint32(b, math.Float32bits(soxFloat(int64(s))))
	}
	return le.AppendUint64(b, math.Float64bits(float64(s)/(1<<31)))
}

// soxFromFloat returns v as torchaudio.save hands it to libsox: v·2³¹ in
// float64, clipped to the int32 range and truncated towards zero; NaN,
// which the conversion turns into the "integer indefinite" of x86,
// becomes the most negative value.
func soxFromFloat(v float32) int32 {
	d := float64(v) * (1 << 31)
	switch {
	case d != d, d <= math.MinInt32:
		return math.MinInt32
	case d >= math.MaxInt32:
		return math.MaxInt32
	}
	return int32(d)
}

// soxToSigned returns the 32-bit sample s as a bits-bit integer, as
// libsox's SOX_SAMPLE_TO_SIGNED does: rounded to the nearest step with
// halves up (add half a step, shift right), and the top half step
// clipped to the largest value.
func soxToSigned(s int32, bits uint) int32 {
	half := int32(1) << (31 - bits)
	if s > math.MaxInt32-half {
		return 1<<(bits-1) - 1
	}
	return (s + half) >> (32 - bits)
}
