package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// fusePoolRelu replaces, in g.bwd, each pooling backward step whose
// gradient the next bias + ReLU backward step reads (the ReLU's output
// being the pooling's input) with one PoolReluBackward step of the
// backend (backend.PoolReluBackwardKernels), and returns how many pairs
// it fused. It applies where the ReLU's gradient is written exactly where
// the pooling's was, or where nothing else reads the pooling's gradient;
// and where neither gradient written shares a slot with the pooling's
// input, output or output gradient (the fused kernel reads those while it
// writes, plane by plane). The results are the pair's bit for bit; the
// pooling's gradient is no longer written whole and read back. Eager
// execution cannot do this: it runs each backward kernel without knowing
// the next.
func (g *Graph) fusePoolRelu() int {
	users, handed, inFwd := stepUsers(g.bwd), g.handedSlots(true), stepUsers(g.fwd)
	repl := map[int]step{}
	drop := map[int]bool{}
	for i, st := range g.bwd {
		pk := st.k
		if pk == nil || pk.kind != kindPoolBwd {
			continue
		}
		t := pk.refs[0] // the pooling's gradient
		if t.slot < 0 || t.strides != nil || len(users[t.slot]) < 2 || users[t.slot][0] != i {
			continue
		}
		j := users[t.slot][1]
		bk := g.bwd[j].k
		if bk == nil || bk.kind != kindBiasReluBwd {
			continue
		}
		dx, db, gr, y := bk.refs[0], bk.refs[1], bk.refs[2], bk.refs[3]
		x, py, dy := pk.refs[1], pk.refs[2], pk.refs[3]
		if !sameRef(gr, t) || !sameRef(y, x) || dx.strides != nil || (db.slot >= 0 && db.strides != nil) {
			continue
		}
		// Unless the ReLU's gradient goes exactly where the pooling's went,
		// the pooling's gradient must be private to the pair.
		if !sameRef(dx, t) && (g.slots[t.slot].kind != slotPlanned || handed[t.slot] || inFwd[t.slot] != nil || !slices.Equal(users[t.slot], []int{i, j})) {
			continue
		}
		if overlaps := func(w ref) bool { return w.slot >= 0 && (w.slot == x.slot || w.slot == py.slot || w.slot == dy.slot) }; overlaps(dx) || overlaps(db) {
			continue
		}
		f, ok := pk.be.(backend.PoolReluBackwardKernels)
		if !ok || !f.FusesPoolReluBackward(pk.pool, bk.channel) || usedBetween(g.bwd[i+1:j], []ref{dx, db, x, py, dy}) {
			continue
		}
		pp, cp := pk.pool, bk.channel
		repl[i] = step{run: func(e *replay) {
			f.PoolReluBackward(pp, cp, dx.arg(e), db.arg(e), x.arg(e), py.arg(e), dy.arg(e))
		}, uses: slotsOf(dx, db, x, py, dy)}
		drop[j] = true
	}
	if len(repl) == 0 {
		return 0
	}
	var bwd []step
	for i, st := range g.bwd {
		switch {
		case drop[i]:
		case repl[i].run != nil:
			bwd = append(bwd, repl[i])
		default:
			bwd = append(bwd, st)
		}
	}
	g.bwd = bwd
	return len(repl)
}
