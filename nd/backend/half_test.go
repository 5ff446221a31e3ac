package backend

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestF16Exhaustive: every binary16 value converts to float32 and back
// unchanged (NaNs stay NaN), and every tie between two neighbouring finite
// values rounds to the one with an even last bit; a hair off the tie
// rounds to the nearer one.
func TestF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := F16(i)
		f := h.Float32()
		got := F16From(f)
		if f != f {
			if got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#04x became %#04x", uint16(h), uint16(got))
			}
			continue
		}
		if got != h {
			t.Fatalf("%#04x → %v → %#04x", uint16(h), f, uint16(got))
		}
	}
	for _, sign := range []uint16{0, 0x8000} {
		for i := range 0x7bff { // every pair of neighbours up to the largest finite value
			a, b := F16(uint16(i)|sign), F16(uint16(i+1)|sign)
			mid := (a.Float32() + b.Float32()) / 2 // exact: 12 significant bits at most
			even := a
			if uint16(a)&1 == 1 {
				even = b
			}
			if got := F16From(mid); got != even {
				t.Fatalf("tie %v between %#04x and %#04x rounded to %#04x", mid, uint16(a), uint16(b), uint16(got))
			}
			lo := math.Nextafter32(mid, float32(math.Inf(-1))*float32(1-2*int(sign>>15)))
			hi := math.Nextafter32(mid, float32(math.Inf(1))*float32(1-2*int(sign>>15)))
			if got := F16From(lo); got != a {
				t.Fatalf("just below the tie %v: %#04x, want %#04x", mid, uint16(got), uint16(a))
			}
			if got := F16From(hi); got != b {
				t.Fatalf("just above the tie %v: %#04x, want %#04x", mid, uint16(got), uint16(b))
			}
		}
	}
	for _, c := range []struct {
		f    float32
		want F16
	}{
		{65504, 0x7bff}, {65520, 0x7c00}, {65519.99, 0x7bff}, {1e10, 0x7c00}, {-1e10, 0xfc00},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{6.103515625e-05, 0x0400}, {5.960464477539063e-08, 0x0001}, {2.9802322387695312e-08, 0x0000}, {3e-08, 0x0001},
		{float32(math.Copysign(0, -1)), 0x8000}, {1e-40, 0},
	} {
		if got := F16From(c.f); got != c.want {
			t.Errorf("F16From(%v) = %#04x, want %#04x", c.f, uint16(got), uint16(c.want))
		}
	}
}

// TestBF16: round trips, ties to even, NaN, ±Inf and subnormals.
func TestBF16(t *testing.T) {
	for i := range 1 << 16 {
		h := BF16(i)
		f := h.Float32()
		got := BF16From(f)
		if f != f {
			if got&0x7f80 != 0x7f80 || got&0x7f == 0 {
				t.Fatalf("NaN %#04x became %#04x", uint16(h), uint16(got))
			}
			continue
		}
		if got != h {
			t.Fatalf("%#04x → %v → %#04x", uint16(h), f, uint16(got))
		}
		if i&0x7f80 != 0x7f80 && i != 0x7f7f && i != 0xff7f { // a tie with the next value up
			mid := math.Float32frombits(uint32(i)<<16 | 0x8000)
			even := h
			if i&1 == 1 {
				even = h + 1
			}
			if got := BF16From(mid); got != even {
				t.Fatalf("tie %v rounded to %#04x, want %#04x", mid, uint16(got), uint16(even))
			}
		}
	}
	if got := BF16From(math.MaxFloat32); got != 0x7f80 {
		t.Errorf("the largest float32 rounds to %#04x, want +Inf", uint16(got))
	}
}

// TestHalfAgainstPyTorch compares both conversions with PyTorch's
// (testdata/golden/half_goldens.json, make_half_goldens.py) on specials,
// ties and random values over every magnitude, bit for bit.
func TestHalfAgainstPyTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/golden/half_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Rows [][3]uint32 `json:"rows"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Rows) < 1000 {
		t.Fatalf("%d rows", len(g.Rows))
	}
	for _, r := range g.Rows {
		f := math.Float32frombits(r[0])
		h, bh := F16From(f), BF16From(f)
		if f != f {
			if h.Float32() == h.Float32() || bh.Float32() == bh.Float32() {
				t.Errorf("NaN became %#04x / %#04x", uint16(h), uint16(bh))
			}
			continue
		}
		if uint32(h) != r[1] {
			t.Errorf("float16(%v [%#08x]) = %#04x, PyTorch %#04x", f, r[0], uint16(h), r[1])
		}
		if uint32(bh) != r[2] {
			t.Errorf("bfloat16(%v [%#08x]) = %#04x, PyTorch %#04x", f, r[0], uint16(bh), r[2])
		}
	}
}
