package progress

import (
	"os"
	"syscall"
	"unsafe"
)

// termColumns returns the width in columns of the terminal f is open on,
// or 0 when it cannot tell.
func termColumns(f *os.File) int {
	var ws struct{ rows, cols, xpix, ypix uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
