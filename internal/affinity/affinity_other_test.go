//go:build !linux

package affinity

import "testing"

// TestNoAffinity checks that outside Linux nothing is pinned.
func TestNoAffinity(t *testing.T) {
	if a := Allowed(); a != nil {
		t.Errorf("Allowed() = %v, want nil", a)
	}
	if undo, ok := Pin(0); ok || !undo() {
		t.Error("Pin succeeded, or its undo failed, outside Linux")
	}
}
