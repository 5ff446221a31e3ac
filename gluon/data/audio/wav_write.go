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

// WriteWAV writes wav as a RIFF WAVE stream in encoding enc, as
// torchaudio.save writes it: PCM as format tag 1, IEEE floats as tag 3
// with a "fact" chunk, and WAVE_FORMAT_EXTENSIBLE (with a "fact" chunk)
// for PCM of more than two channels or wider than 16 bits. Integer encodings round each
// sample times 128, 2¹⁵, 2²³ or 2³¹ to the nearest integer (halves away
// from zero) and clip it to the encoding's range (NaN becomes 0), so
// what ReadWAV read from a file writes back to the same values; libsox's
// quantisation rounds twice and can differ by one step where a sample
// lies within 2⁻¹⁶ of a step's half. Float64 keeps float32 samples
// exactly.
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
		mask := uint32(0) // no speaker assignment for more than two channels
		switch ch {
		case 1:
			mask = 0x4 // front centre
		case 2:
			mask = 0x3 // front left and right
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

// appendSample appends v in encoding enc.
func appendSample(b []byte, v float32, enc Encoding) []byte {
	le := binary.LittleEndian
	switch enc {
	case PCMU8:
		return append(b, uint8(quantize(v, 7)+128))
	case PCMS16:
		return le.AppendUint16(b, uint16(int16(quantize(v, 15))))
	case PCMS24:
		q := uint32(int32(quantize(v, 23)))
		return append(b, byte(q), byte(q>>8), byte(q>>16))
	case PCMS32:
		return le.AppendUint32(b, uint32(int32(quantize(v, 31))))
	case Float32:
		return le.AppendUint32(b, math.Float32bits(v))
	}
	return le.AppendUint64(b, math.Float64bits(float64(v)))
}

// quantize returns v·2^bits rounded and clipped to [−2^bits, 2^bits − 1].
func quantize(v float32, bits int) int64 {
	if v != v {
		return 0
	}
	s := math.Ldexp(1, bits)
	return int64(min(max(math.Round(float64(v)*s), -s), s-1))
}
