//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// VirtualGPUsEnv names the environment variable that, set to N >= 1,
// exposes N logical GPUs backed by physical device 0.
const VirtualGPUsEnv = "GOLUON_VIRTUAL_GPUS"

// SyncEnv names the environment variable that, set to 1, makes every GPU
// operation wait for completion and check for errors: slow, but a kernel
// failure is then reported by the op that caused it.
const SyncEnv = "GOLUON_CUDA_SYNC"

// Backend is the CUDA implementation of backend.Backend. Importing the
// package registers one for ctx.KindGPU; use Default to reach it.
type Backend struct {
	mu       sync.Mutex
	phys     []*physical
	devs     []*device // by logical id; nil until first used
	mapping  []int     // logical id -> index into phys
	syncEach bool
	initErr  error
}

var defaultBackend = newBackend()

func init() {
	ctx.Register(ctx.KindGPU, func() int { return len(defaultBackend.mapping) })
	backend.Register(ctx.KindGPU, defaultBackend)
}

// Default returns the registered CUDA backend.
func Default() *Backend { return defaultBackend }

// InitError reports why no GPU is available (nil when ctx.NumGPUs() > 0 or
// the machine simply has none).
func InitError() error { return defaultBackend.initErr }

func newBackend() *Backend {
	b := &Backend{syncEach: os.Getenv(SyncEnv) == "1"}
	n, err := drvNumDevices()
	if err != nil {
		b.initErr = fmt.Errorf("cuda: counting devices: %w", err)
		return b
	}
	for i := 0; i < n; i++ {
		b.phys = append(b.phys, &physical{ordinal: i})
	}
	virt := strings.TrimSpace(os.Getenv(VirtualGPUsEnv))
	switch {
	case virt != "" && n > 0:
		v, err := strconv.Atoi(virt)
		if err != nil || v < 1 {
			b.initErr = fmt.Errorf("cuda: %s=%q: want a positive number of virtual GPUs", VirtualGPUsEnv, virt)
			return b
		}
		b.mapping = make([]int, v) // all on physical device 0
	default:
		for i := 0; i < n; i++ {
			b.mapping = append(b.mapping, i)
		}
	}
	b.devs = make([]*device, len(b.mapping))
	return b
}

// Name returns "cuda".
func (*Backend) Name() string { return "cuda" }

// NumDevices reports the number of logical GPUs.
func (b *Backend) NumDevices() int { return len(b.mapping) }

// device returns the started device for dev, starting it on first use.
func (b *Backend) device(dev ctx.Context) (*device, error) {
	if dev.Kind != ctx.KindGPU || dev.ID < 0 || dev.ID >= len(b.mapping) {
		if b.initErr != nil {
			return nil, b.initErr
		}
		return nil, fmt.Errorf("cuda: %v does not exist (%d GPU(s))", dev, len(b.mapping))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.devs[dev.ID]; d != nil {
		return d, nil
	}
	d, err := startDevice(dev.ID, b.phys[b.mapping[dev.ID]], b.syncEach)
	if err != nil {
		return nil, err
	}
	b.devs[dev.ID] = d
	return d, nil
}

// started returns dev's device if it has been started, else nil.
func (b *Backend) started(dev ctx.Context) *device {
	if dev.Kind != ctx.KindGPU || dev.ID < 0 || dev.ID >= len(b.mapping) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.devs[dev.ID]
}

// siblings returns the started devices other than d on d's physical device.
func (b *Backend) siblings(d *device) []*device {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*device
	for _, o := range b.devs {
		if o != nil && o != d && o.phys == d.phys {
			out = append(out, o)
		}
	}
	return out
}

// mustDevice is device for the methods that cannot return an error.
func (b *Backend) mustDevice(op string, dev ctx.Context) *device {
	d, err := b.device(dev)
	if err != nil {
		deviceFail(op, dev, err)
	}
	return d
}

// deviceFail reports a device failure the way nd reports errors: a panic
// with a *backend.Error (nd.Error) of kind ErrDevice, which nd.Catch turns
// into an error.
// The backend interface's kernels return nothing, so this is how a failed
// launch or copy reaches the caller.
func deviceFail(op string, dev ctx.Context, err error) {
	panic(&backend.Error{Op: "cuda." + op, Kind: backend.ErrDevice, Msg: fmt.Sprintf("%v: %v", dev, err)})
}

// Buffer is device memory holding Len elements of one DType.
type Buffer struct {
	dev  *device
	ptr  dptr
	n    int
	dt   backend.DType
	size int64 // bytes of the block (its size class)
}

// Len returns the number of elements.
func (b *Buffer) Len() int { return b.n }

// DType returns the element type.
func (b *Buffer) DType() backend.DType { return b.dt }

// Context returns the context the buffer lives on.
func (b *Buffer) Context() ctx.Context { return b.dev.dev }

// buf returns an operand's CUDA buffer.
func buf(a backend.Arg) *Buffer { return a.Buf.(*Buffer) }

// devOf returns the device an operand lives on.
func devOf(a backend.Arg) *device { return buf(a).dev }

// devPtr returns the device address of an operand's first element.
func devPtr(a backend.Arg) dptr {
	b := buf(a)
	return b.ptr + dptr(a.Off*b.dt.Size())
}

// suffix returns the kernel name suffix of a dtype's storage type: "_f32",
// "_f64", "_i32", "_i64" or "_u8" (Bool is stored as uint8 0 or 1 and uses
// the uint8 kernels).
func suffix(dt backend.DType) string {
	switch dt {
	case backend.Float64:
		return "_f64"
	case backend.Int32:
		return "_i32"
	case backend.Int64:
		return "_i64"
	case backend.Uint8, backend.Bool:
		return "_u8"
	case backend.Float16:
		return "_f16"
	case backend.BFloat16:
		return "_bf16"
	}
	return "_f32"
}

// Sync waits until all work queued on dev has finished.
func (b *Backend) Sync(dev ctx.Context) {
	d := b.started(dev)
	if d == nil {
		return
	}
	if err := d.synchronize("Sync"); err != nil {
		deviceFail("Sync", dev, err)
	}
}

// Synchronize is Sync returning the device's error instead of panicking.
func Synchronize(dev ctx.Context) error {
	d := defaultBackend.started(dev)
	if d == nil {
		return nil
	}
	return d.synchronize("Synchronize")
}

// DeviceName returns the name of the physical device behind dev.
func DeviceName(dev ctx.Context) (string, error) {
	d, err := defaultBackend.device(dev)
	if err != nil {
		return "", err
	}
	return d.phys.name, nil
}

// MemInfo returns the free and total memory in bytes of the physical
// device behind dev, as the driver reports them.
func MemInfo(dev ctx.Context) (free, total int64, err error) {
	d, err := defaultBackend.device(dev)
	if err != nil {
		return 0, 0, err
	}
	return d.memInfo()
}

func (d *device) memInfo() (free, total int64, err error) {
	err = d.call("MemInfo", func() error {
		var e error
		free, total, e = drvMemInfo()
		return e
	})
	return free, total, err
}

var _ backend.Backend = (*Backend)(nil)
