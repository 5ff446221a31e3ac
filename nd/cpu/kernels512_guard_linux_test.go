//go:build amd64

package cpu

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// guarded is memory followed by an inaccessible page: a kernel that reads
// or writes past the end of a buffer placed at its end faults.
type guarded struct{ mem []byte }

// newGuarded maps size bytes (rounded up to pages) and a guard page.
func newGuarded(t *testing.T, size int) guarded {
	t.Helper()
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return guarded{mem[:size+page]}
}

// tail returns the last n float32 before the guard page, filled from
// vals (cycled), and the address of the first (the guard page's when n
// is 0).
func (g guarded) tail(n int, vals []float32) ([]float32, *float32) {
	end := len(g.mem) - os.Getpagesize()
	p := (*float32)(unsafe.Pointer(&g.mem[end-4*n]))
	s := unsafe.Slice(p, n)
	for i := range s {
		s[i] = vals[i%len(vals)]
	}
	return s, p
}

// TestZMMGuardPage runs every ZMM kernel on buffers that end where an
// inaccessible page begins: the masked tails, and the last odd group of
// the pooling and Winograd kernels, must neither read nor write past the
// values they are given.
func TestZMMGuardPage(t *testing.T) {
	needZMM(t)
	const maxN = 4099
	var regions [5]guarded
	for i := range regions {
		regions[i] = newGuarded(t, 4*16*(maxN+64))
	}
	vals := []float32{1.5, -2, 0, 3, -0.25, 7, -1}
	ns := append([]int(nil), zmmLengths...)
	for _, n := range ns {
		_, d := regions[0].tail(n, vals)
		_, a := regions[1].tail(n, vals)
		_, b := regions[2].tail(n, vals)
		_, e := regions[4].tail(n, vals)
		for _, c := range zmmElemCases {
			c.zmm(d, []*float32{a, b, e}, []float32{2, 0.5, -1}, n)
		}
		sumF32x512(a, n)
		bnSumsF32x512(a, b, n)
		_, acc := regions[3].tail(2*n, vals) // n float64
		accF32x512((*float64)(unsafe.Pointer(acc)), a, n)
		if n > 0 {
			for rows := 1; rows <= 3; rows++ {
				width := n%40 + 1
				ld := width + rows%2
				_, ds := regions[0].tail((rows-1)*ld+width, vals)
				_, ss := regions[1].tail((rows-1)*ld+width, vals)
				copyRowsF32x512(ds, ss, rows, width, ld, ld)
				addRowsF32x512(ds, ss, rows, width, ld, ld)
			}
		}
	}
	for groups := 1; groups <= 5; groups++ {
		w := 16 * groups
		// Pooling: each of the six rows ends at a guard page.
		_, y := regions[0].tail(8*groups, vals)
		_, r0 := regions[1].tail(w, vals)
		_, r1 := regions[2].tail(w, vals)
		maxPool2x2RowF32x512(y, r0, r1, groups)
		_, dy := regions[3].tail(8*groups, vals)
		_, d1 := regions[4].tail(w, vals)
		d0 := make([]float32, w)
		maxPool2x2BackRowF32x512(&d0[0], d1, r0, r1, y, dy, groups)
		// Winograd: the last row or plane ends at a guard page.
		ld := 16*groups + 2
		_, src := regions[1].tail(3*ld+16*groups+2, vals)
		_, planes := regions[2].tail(15*8*groups+8*groups, vals)
		winoInputRowF32x512(src, ld, planes, 8*groups, groups)
		_, out := regions[3].tail(16*groups+16*groups, vals)
		winoOutputRowF32x512(planes, 8*groups, out, 16*groups, groups)
		_, dyw := regions[4].tail(16*groups+16*groups, vals)
		winoGradOutRowF32x512(dyw, 16*groups, planes, 8*groups, groups)
	}
	// Pooling whole planes: the last input row and the last output end at
	// a guard page, for every tail length.
	for outW := 1; outW <= 35; outW++ {
		for rows := 1; rows <= 3; rows++ {
			inW := 2*outW + rows%2
			xs, x := regions[1].tail((2*rows-1)*inW+2*outW, vals)
			ys, y := regions[0].tail(rows*outW, vals)
			maxPool2x2RowsF32x512(y, x, rows, outW, inW)
			dxs, dx := regions[2].tail((2*rows-1)*inW+2*outW, vals)
			clear(dxs)
			dys, dy := regions[3].tail(rows*outW, vals)
			if done := maxPool2x2BackRowsF32x512(dx, x, y, dy, rows, outW, inW); done != rows {
				t.Fatalf("backward rows kernel outW=%d rows=%d: did %d rows", outW, rows, done)
			}
			checkRouted(t, fmt.Sprintf("backward rows kernel outW=%d rows=%d", outW, rows), dxs, dys)
			for r := range rows {
				for i := range outW {
					a, b := xs[2*r*inW+2*i:], xs[(2*r+1)*inW+2*i:]
					if want := max(a[0], a[1], b[0], b[1]); ys[r*outW+i] != want {
						t.Fatalf("rows kernel outW=%d rows=%d: y[%d][%d] = %v, want %v", outW, rows, r, i, ys[r*outW+i], want)
					}
				}
			}
		}
	}
	// The narrow backward kernel: one and two groups of stacked row
	// pairs, the last input and output ending at a guard page.
	for w := 2; w <= 16; w += 2 {
		tab := &narrowPoolTables[w/2-1]
		pairs := 32 / w
		nin, nout := 2*w*pairs, w/2*pairs
		for groups := 1; groups <= 2; groups++ {
			xs, x := regions[1].tail(groups*nin, vals)
			ys, y := regions[0].tail(groups*nout, vals)
			for r := range groups * pairs {
				for i := range w / 2 {
					a, b := xs[2*r*w+2*i:], xs[(2*r+1)*w+2*i:]
					ys[r*w/2+i] = max(a[0], a[1], b[0], b[1])
				}
			}
			dxs, dx := regions[2].tail(groups*nin, vals)
			clear(dxs)
			dys, dy := regions[3].tail(groups*nout, vals)
			if done := maxPool2x2BackNarrowF32x512(dx, x, y, dy, groups, w, nin, nout, tab); done != groups {
				t.Fatalf("narrow kernel w=%d: did %d of %d groups", w, done, groups)
			}
			checkRouted(t, fmt.Sprintf("narrow kernel w=%d groups=%d", w, groups), dxs, dys)
		}
	}
}

// checkRouted checks that a pooling's backward pass gave each output's
// gradient to one input: the input gradients sum to the output gradients'
// sum.
func checkRouted(t *testing.T, what string, dx, dy []float32) {
	t.Helper()
	var gin, gout float64
	for _, v := range dx {
		gin += float64(v)
	}
	for _, v := range dy {
		gout += float64(v)
	}
	if gin != gout {
		t.Fatalf("%s: input gradients sum to %v, output gradients to %v", what, gin, gout)
	}
}
