//go:build !linux

package affinity

func lockThread()         {}
func unlockThread()       {}
func current() []int      { return nil }
func set(cpus []int) bool { return false }
