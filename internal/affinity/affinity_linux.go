package affinity

import (
	"runtime"
	"syscall"
	"unsafe"
)

// mask is a CPU set as the kernel takes it: up to 1024 CPUs.
type mask [16]uint64

func lockThread()   { runtime.LockOSThread() }
func unlockThread() { runtime.UnlockOSThread() }

// current returns the calling thread's CPUs.
func current() []int {
	var m mask
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if errno != 0 {
		return nil
	}
	var cpus []int
	for i, w := range m {
		for b := range 64 {
			if w&(1<<b) != 0 {
				cpus = append(cpus, i*64+b)
			}
		}
	}
	return cpus
}

// set restricts the calling thread to cpus and reports whether the kernel
// took it.
func set(cpus []int) bool {
	var m mask
	for _, c := range cpus {
		if c < 0 || c >= len(m)*64 {
			return false
		}
		m[c/64] |= 1 << (c % 64)
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	return errno == 0
}
