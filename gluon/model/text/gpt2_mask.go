package text

import "github.com/goluon/goluon/nd"

// ForwardMasked maps token ids [B, T] with an attention mask [B, T] to
// logits [B, T, VocabSize], for batches of sequences of different
// lengths padded to one: the mask is nonzero (or true) at the tokens and
// 0 (false) at the padding, in any dtype. As Hugging Face's GPT-2 does
// with an attention_mask, the padded keys get the dtype's lowest value
// added to their attention scores, so that no token attends to them; and
// the positions are those transformers' generate computes from the mask,
// position_ids = cumsum(mask) − 1, with 1 at the padding, so that each
// row's tokens get positions 0, 1, ... wherever the padding lies. A row
// padded on the left (as generation pads prompts) then gets, at its
// tokens, the logits of the row alone, without padding; a row padded on
// the right gets at its tokens the positions transformers' forward gives
// by default (0, 1, ...), and so the logits of GPT2LMHeadModel(input_ids,
// attention_mask=mask) too.
//
// The logits at the tokens equal those of transformers'
// GPT2LMHeadModel(input_ids, attention_mask=mask, position_ids=...) with
// those position ids; the logits at the padding are finite but carry no
// meaning (transformers' versions differ there too). LMLoss with −100
// labels at the padding trains on such batches (left-padded, give each
// row's first token −100 too, or the last padding position is taught to
// predict it). A nil mask is Forward. A mask of another shape than the
// ids' panics with an *nd.Error of kind ErrShape, one on another context
// with ErrContext.
func (m *GPT2) ForwardMasked(ids, mask *nd.NDArray) *nd.NDArray {
	return m.forward("text.GPT2.ForwardMasked", ids, mask, nil)
}

// ForwardCachedMasked is ForwardCached with an attention mask [B,
// c.Len()+T] over the positions the cache holds and the new ones, as
// transformers' attention_mask with past_key_values covers both (see
// ForwardMasked for its values and the positions it gives). The cache
// keeps the mask: a later ForwardCached, without one, extends it by ones
// for its tokens, and a later ForwardCachedMasked replaces it. The logits
// at the tokens equal those of ForwardMasked on the whole sequence and
// mask. A mask of another shape panics with ErrShape; the rest is as
// ForwardCached.
func (m *GPT2) ForwardCachedMasked(ids, mask *nd.NDArray, c *Cache) *nd.NDArray {
	const op = "text.GPT2.ForwardCachedMasked"
	if c == nil {
		nd.Panicf(op, nd.ErrArgument, "nil cache (make one with NewCache)")
	}
	if ids.Session().IsRecording() {
		nd.Panicf(op, nd.ErrArgument, "the cache is for inference: run ForwardMasked, not ForwardCachedMasked, while recording")
	}
	return m.forward(op, ids, mask, c)
}

// keepMask returns the Bool mask [B, past+T] of the positions that are
// tokens for a call on ids [B, T] after past cached positions: mask's
// nonzero entries, else the cache's mask extended by true for the new
// positions, else nil (no padding anywhere).
func (m *GPT2) keepMask(op string, ids, mask *nd.NDArray, c *Cache, past int) *nd.NDArray {
	bsz, t := ids.Shape()[0], ids.Shape()[1]
	if mask != nil {
		if sh := mask.Shape(); len(sh) != 2 || sh[0] != bsz || sh[1] != past+t {
			if past > 0 {
				nd.Panicf(op, nd.ErrShape, "attention mask %v for %v token ids after %d cached positions: want [%d, %d], the cached positions' mask and the new ones'",
					sh, ids.Shape(), past, bsz, past+t)
			}
			nd.Panicf(op, nd.ErrShape, "attention mask %v: want the token ids' shape %v", sh, ids.Shape())
		}
		if mask.Context() != ids.Context() {
			nd.Panicf(op, nd.ErrContext, "attention mask on %v, token ids on %v", mask.Context(), ids.Context())
		}
		return nd.NotEqual(mask, nd.FullLike(mask, 0))
	}
	if c == nil || c.keep == nil {
		return nil
	}
	ones := ids.Session().Full(ids.Context(), nd.Bool, 1, bsz, t)
	return nd.Concat([]*nd.NDArray{c.keep, ones}, 1)
}

// positions returns the position ids of the T tokens of ids after past
// cached positions: past, ..., past+T−1 ([T]) without a mask; with keep
// [B, past+T], the running count of tokens minus one, 1 at the padding
// ([B, T]), as transformers' generate computes them.
func positions(ids, keep *nd.NDArray, past int) *nd.NDArray {
	t := ids.Shape()[1]
	if keep == nil {
		return ids.Session().Arange(ids.Context(), nd.Int64, float64(past), float64(past+t), 1)
	}
	count := nd.Cumsum(keep, 1) // Int64
	pos := nd.Where(keep, nd.SubScalar(count, 1), nd.OnesLike(count))
	return nd.SliceAxis(pos, past, past+t, 1)
}
