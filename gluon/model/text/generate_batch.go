package text

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/nd"
)

// GenerateBatch continues several prompts at once, as transformers'
// generate does a batch padded on the left, and returns each prompt's new
// tokens (row i continues prompts[i]), without the prompt: up to
// maxNewTokens each, a row that generates one of o.EOS ending with it.
//
// The prompts are padded on the left to the longest with an attention
// mask, so that every row's last token is the batch's last position;
// the rows' positions come from the mask (see ForwardMasked) and the
// padding is masked from the attention, so that each row's logits are
// those of the row alone. All rows then run through one Cache, a step
// feeding one token per row. A row that has ended is fed the padding
// token (transformers' pad_token_id for GPT-2 is the end token: here the
// first of o.EOS within the vocabulary, else 0) until every row has
// ended or has maxNewTokens tokens; what it computes there is not
// returned. Rows that end early make the others no faster: the batch
// runs until the last row ends.
//
// The options are Generate's, applied to every row. Greedy decoding gives
// each row the tokens Generate gives its prompt alone (the batch changes
// the float32 rounding, not the choices, unless two logits of a row tie
// within it). Sampling draws each row from a stream of its own, named
// after o.Seed and the row, in a session of GenerateBatch's own (see
// GenerateOpts.Seed): the same prompts, options and nd.Seed give the
// same tokens, and rows with equal prompts draw different samples. These
// streams are not Generate's: a row's samples differ from those Generate
// draws for its prompt with the same Seed. OnBatchToken streams the
// tokens with their row; OnToken, which cannot tell the rows apart, is
// an error here.
//
// Each prompt must be non-empty and, with the new tokens but the last,
// fit NPositions; no prompts, an empty one, token ids outside the
// vocabulary, bad options and uninitialised parameters are returned as
// errors naming the row.
func (m *GPT2) GenerateBatch(prompts [][]int64, maxNewTokens int, o GenerateOpts) ([][]int64, error) {
	if len(prompts) == 0 {
		return nil, fmt.Errorf("text: generate batch: no prompts")
	}
	if o.OnToken != nil {
		return nil, fmt.Errorf("text: generate batch: OnToken streams one sequence: set OnBatchToken, which is given the row too")
	}
	for i, p := range prompts {
		if err := m.checkGenerate(p, maxNewTokens, o); err != nil {
			return nil, fmt.Errorf("%w (prompt %d of %d)", err, i, len(prompts))
		}
	}
	out := make([][]int64, len(prompts))
	if maxNewTokens == 0 {
		for i := range out {
			out[i] = []int64{}
		}
		return out, nil
	}
	samplers := make([]*nd.Session, len(prompts))
	for i := range samplers {
		samplers[i] = nd.NewSession(fmt.Sprintf("text.GenerateBatch/%d/%d", o.Seed, i))
	}
	return m.decode(prompts, maxNewTokens, o, samplers, o.OnBatchToken)
}

// decode runs Generate's and GenerateBatch's loop on checked prompts
// (maxNew ≥ 1): the prompts left-padded (with a mask when their lengths
// differ), then one token per row and step through a cache, row i
// sampled from samplers[i]; emit (nil: none) sees each row's tokens and
// ends the row by returning false.
func (m *GPT2) decode(prompts [][]int64, maxNew int, o GenerateOpts, samplers []*nd.Session, emit func(int, int64) bool) ([][]int64, error) {
	w := m.body.wte.Weight
	if !w.Initialized() {
		return nil, fmt.Errorf("text: generate: the parameters are not initialised (gluon.Initialize or Load)")
	}
	dev := w.Contexts()[0]
	rows, vocab := len(prompts), m.cfg.VocabSize
	pad := int64(0)
	if i := slices.IndexFunc(o.EOS, func(t int64) bool { return t >= 0 && t < int64(vocab) }); i >= 0 {
		pad = o.EOS[i]
	}
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	// The prompts, padded on the left; a mask only when some row is
	// padded (without one the computation is Generate's of old).
	ids, mask := make([]int64, rows*longest), []int64(nil)
	for i, p := range prompts {
		off := longest - len(p)
		row := ids[i*longest : (i+1)*longest]
		for j := range off {
			row[j] = pad
		}
		copy(row[off:], p)
		if off > 0 && mask == nil {
			mask = make([]int64, rows*longest)
		}
	}
	if mask != nil {
		for i, p := range prompts {
			for j := longest - len(p); j < longest; j++ {
				mask[i*longest+j] = 1
			}
		}
	}
	out := make([][]int64, rows)
	for i := range out {
		out[i] = []int64{}
	}
	done := make([]bool, rows)
	err := nd.Catch(func() {
		autograd.PauseMode(false, func() {
			c := m.NewCache()
			defer c.Release()
			// step returns the last position's logits [rows·V] after next
			// [rows, t], the step's temporaries released (a panic too
			// releases them).
			step := func(next []int64, t int, mask []int64) []float64 {
				s := nd.NewScope()
				defer s.Close()
				var mk *nd.NDArray
				if mask != nil {
					mk = nd.FromSlice(dev, mask, rows, t)
				}
				logits := m.forward("text.GPT2.Generate", nd.FromSlice(dev, next, rows, t), mk, c)
				return nd.SliceAxis(logits, t-1, t, 1).Float64s()
			}
			next, t := ids, longest
			for n := 0; n < maxNew; n++ {
				logits := step(next, t, mask)
				next, t, mask = make([]int64, rows), 1, nil
				live := false
				for r := range rows {
					if done[r] {
						next[r] = pad
						continue
					}
					tok := pick(logits[r*vocab:(r+1)*vocab], o, samplers[r])
					out[r] = append(out[r], tok)
					next[r] = tok
					// emit sees every token returned, the EOS one too.
					if emit != nil && !emit(r, tok) || slices.Contains(o.EOS, tok) {
						done[r] = true
					} else {
						live = true
					}
				}
				if !live {
					break
				}
			}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("text: generate: %w", err)
	}
	return out, nil
}
