package text

import (
	"fmt"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// BertEncodeOpts configure BertTokenizer's Encode, EncodePair and
// EncodeBatch. The zero value neither truncates nor pads a single
// encoding.
type BertEncodeOpts struct {
	// MaxLength, when positive, truncates each encoding to that many
	// tokens, [CLS] and [SEP] included (Hugging Face's truncation=True
	// with max_length): tokens are dropped from the end of the text, or,
	// for a pair, one at a time from the end of the longer text (the
	// second on a tie), "longest_first". Use the model's
	// MaxPositionEmbeddings (512) for long texts.
	MaxLength int
	// PadToMax pads every encoding to MaxLength (padding="max_length");
	// otherwise Encode and EncodePair do not pad and EncodeBatch pads to
	// the longest of the batch.
	PadToMax bool
}

// BertEncoding is one encoded text (or pair of texts): the token ids, the
// token types (0 for [CLS], the first text and its [SEP]; 1 for the
// second text and its [SEP]; 0 for padding) and the attention mask (1 for
// a token, 0 for padding), all of one length.
type BertEncoding struct {
	// IDs are the token ids, [CLS] first.
	IDs []int64
	// TokenTypeIDs are the segments, 0 or 1.
	TokenTypeIDs []int64
	// AttentionMask is 1 for a token, 0 for padding.
	AttentionMask []int64
}

// Encode returns [CLS] text [SEP] as ids, with token types and mask.
// It fails only when opts.MaxLength is below 2, too short for the special
// tokens.
func (t *BertTokenizer) Encode(text string, opts BertEncodeOpts) (BertEncoding, error) {
	return t.encode(t.ids(t.Tokenize(text)), nil, false, opts)
}

// EncodePair returns [CLS] a [SEP] b [SEP] as ids, with token types (1
// from b on) and mask, for tasks on sentence pairs (entailment,
// question and passage). It fails only when opts.MaxLength is below 3.
func (t *BertTokenizer) EncodePair(a, b string, opts BertEncodeOpts) (BertEncoding, error) {
	return t.encode(t.ids(t.Tokenize(a)), t.ids(t.Tokenize(b)), true, opts)
}

// ids maps tokens to ids, [UNK]'s for tokens the vocabulary lacks.
func (t *BertTokenizer) ids(tokens []string) []int64 {
	out := make([]int64, len(tokens))
	for i, tok := range tokens {
		id, ok := t.vocab[tok]
		if !ok {
			id = t.unk
		}
		out[i] = id
	}
	return out
}

func (t *BertTokenizer) encode(a, b []int64, pair bool, o BertEncodeOpts) (BertEncoding, error) {
	specials := 2
	if pair {
		specials = 3
	}
	if o.MaxLength < 0 || o.MaxLength > 0 && o.MaxLength < specials || o.PadToMax && o.MaxLength == 0 {
		return BertEncoding{}, fmt.Errorf("text: BERT encode: max length %d (pad to it: %v): want 0 (no limit, no padding) or at least %d", o.MaxLength, o.PadToMax, specials)
	}
	if o.MaxLength > 0 {
		for over := len(a) + len(b) + specials - o.MaxLength; over > 0; over-- {
			if !pair || len(a) > len(b) {
				a = a[:len(a)-1]
			} else {
				b = b[:len(b)-1]
			}
		}
	}
	var e BertEncoding
	add := func(typ int64, ids ...int64) {
		for _, id := range ids {
			e.IDs = append(e.IDs, id)
			e.TokenTypeIDs = append(e.TokenTypeIDs, typ)
			e.AttentionMask = append(e.AttentionMask, 1)
		}
	}
	add(0, t.cls)
	add(0, a...)
	add(0, t.sep)
	if pair {
		add(1, b...)
		add(1, t.sep)
	}
	if o.PadToMax {
		t.padTo(&e, o.MaxLength)
	}
	return e, nil
}

// padTo pads e with [PAD] (token type 0, mask 0) to n tokens.
func (t *BertTokenizer) padTo(e *BertEncoding, n int) {
	for len(e.IDs) < n {
		e.IDs = append(e.IDs, t.pad)
		e.TokenTypeIDs = append(e.TokenTypeIDs, 0)
		e.AttentionMask = append(e.AttentionMask, 0)
	}
}

// BertBatch is a batch of encodings padded to one length, ready for
// Bert.Run as arrays (Arrays).
type BertBatch struct {
	// IDs are the token ids, a row per text.
	IDs [][]int64
	// TokenTypeIDs are the rows' segments.
	TokenTypeIDs [][]int64
	// AttentionMask is the rows' masks (0 on padding).
	AttentionMask [][]int64
}

// EncodeBatch encodes texts (and, when pairs is not nil, the pair
// texts[i], pairs[i]; it must then be as long as texts) and pads the
// encodings to the longest, or to opts.MaxLength with PadToMax. It fails
// when there is no text, when pairs has another length, or as Encode
// does.
func (t *BertTokenizer) EncodeBatch(texts, pairs []string, opts BertEncodeOpts) (BertBatch, error) {
	if len(texts) == 0 || pairs != nil && len(pairs) != len(texts) {
		return BertBatch{}, fmt.Errorf("text: BERT encode batch: %d texts and %d pairs: want at least one text, and pairs nil or one per text", len(texts), len(pairs))
	}
	encs := make([]BertEncoding, len(texts))
	longest := 0
	for i, s := range texts {
		var err error
		if pairs == nil {
			encs[i], err = t.Encode(s, opts)
		} else {
			encs[i], err = t.EncodePair(s, pairs[i], opts)
		}
		if err != nil {
			return BertBatch{}, err
		}
		longest = max(longest, len(encs[i].IDs))
	}
	var b BertBatch
	for _, e := range encs {
		t.padTo(&e, longest)
		b.IDs = append(b.IDs, e.IDs)
		b.TokenTypeIDs = append(b.TokenTypeIDs, e.TokenTypeIDs)
		b.AttentionMask = append(b.AttentionMask, e.AttentionMask)
	}
	return b, nil
}

// Arrays returns the batch's ids, token types and attention mask as Int64
// arrays [B, T] on dev, the inputs of Bert.Run and the heads' Logits.
func (b BertBatch) Arrays(dev ctx.Context) (ids, tokenTypes, mask *nd.NDArray) {
	flat := func(rows [][]int64) *nd.NDArray {
		var v []int64
		for _, r := range rows {
			v = append(v, r...)
		}
		return nd.FromSlice(dev, v, len(rows), len(rows[0]))
	}
	return flat(b.IDs), flat(b.TokenTypeIDs), flat(b.AttentionMask)
}

// Decode returns the text of ids: the tokens joined by spaces, each "##"
// piece glued to the one before, and the spaces Hugging Face's
// clean_up_tokenization removes before punctuation and English
// contractions removed (" ." → ".", " n't" → "n't", ...). With
// skipSpecial, [CLS], [SEP], [PAD], [MASK] and [UNK] are left out. Ids
// outside the vocabulary are skipped.
func (t *BertTokenizer) Decode(ids []int64, skipSpecial bool) string {
	var toks []string
	for _, id := range ids {
		tok := t.Token(id)
		if id < 0 || id >= int64(len(t.tokens)) || skipSpecial && special(tok) {
			continue
		}
		toks = append(toks, tok)
	}
	s := strings.TrimSpace(strings.ReplaceAll(strings.Join(toks, " "), " ##", ""))
	for i := 0; i < len(cleanUps); i += 2 { // in order, as clean_up_tokenization
		s = strings.ReplaceAll(s, cleanUps[i], cleanUps[i+1])
	}
	return s
}

// cleanUps are the replacements, in order, that remove the spaces
// tokenisation put before punctuation and contractions.
var cleanUps = []string{
	" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'",
	" n't", "n't", " 'm", "'m", " 's", "'s", " 've", "'ve", " 're", "'re",
}
