package nd

import (
	"testing"
	"time"
)

// TestProfileNestedAccounting: a call nested in a call of the same op (a
// part of it) hands its children's time to the enclosing call, which then
// has no self time of its own (a review found B's time counted twice), and
// a backward function inside another is a call of its own.
func TestProfileNestedAccounting(t *testing.T) {
	p, err := StartProfile(ProfileOpts{})
	if err != nil {
		t.Fatal(err)
	}
	profEnter("A", nil)
	profEnter("A", nil) // a part of the first call
	profEnter("B", nil)
	time.Sleep(20 * time.Millisecond)
	profExit()
	profExit()
	profExit()
	profEnterOwn("C backward", nil, true)
	profEnterOwn("C backward", nil, true) // a nested backward function: a call
	profExit()
	profExit()
	p.Stop()
	got := map[string]OpStat{}
	for _, s := range p.Stats() {
		got[s.Op] = s
	}
	a, b := got["A"], got["B"]
	if a.Calls != 1 || b.Calls != 1 || a.Self > 5*time.Millisecond || b.Self < 20*time.Millisecond || a.Total < b.Total {
		t.Errorf("A %+v, B %+v: want one call each, A's time B's", a, b)
	}
	if c := got["C backward"]; c.Calls != 2 {
		t.Errorf("nested backward functions: %d calls, want 2", c.Calls)
	}
}
