package pagetext

import (
	"strings"
	"time"
	"unicode"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Word-level diff of two visible texts with github.com/sergi/go-diff: each
// distinct word (and each separator, a space or a line break) becomes one
// rune, the rune strings are diffed, and the runes are mapped back. This is
// go-diff's own line-mode technique applied to words, so insertions and
// deletions fall on word boundaries and read as a person expects.

// Op is the kind of one segment of a word diff.
type Op int

const (
	OpEqual Op = iota
	OpDelete
	OpInsert
	OpGap // equal text left out of the rendering ("…")
)

// Seg is one segment of a word diff, for templates and the report.
type Seg struct {
	Op   Op
	Text string
}

// IsDel, IsIns and IsGap are template helpers: the kind of a segment.
func (s Seg) IsDel() bool { return s.Op == OpDelete }

// IsIns reports an insertion.
func (s Seg) IsIns() bool { return s.Op == OpInsert }

// IsGap reports equal text left out.
func (s Seg) IsGap() bool { return s.Op == OpGap }

// WordDiff is the result of diffing two texts.
type WordDiff struct {
	Segs            []Seg
	Added, Removed  int // words
	Changed         bool
	OldCut, NewCut  bool // a text was cut at MaxBytes
	MissingOldOrNew bool // one side has no stored text (snapshots older than the text column)
}

// tokenize splits text into words and separators (" " or "\n").
func tokenize(s string) []string {
	var toks []string
	start := -1
	for i, r := range s {
		if r == ' ' || r == '\n' {
			if start >= 0 {
				toks = append(toks, s[start:i])
				start = -1
			}
			toks = append(toks, s[i:i+1])
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		toks = append(toks, s[start:])
	}
	return toks
}

// ContextWords is how many words of unchanged text are kept on each
// side of a change.
const ContextWords = 8

// Diff diffs a and b word by word, keeping ContextWords of
// unchanged text around each change.
func Diff(a, b string) WordDiff { return diffWordsCtx(a, b, ContextWords) }

// diffWordsCtx diffs a and b; ctx < 0 keeps all unchanged text.
func diffWordsCtx(a, b string, ctx int) WordDiff {
	var wd WordDiff
	if a == b {
		return wd
	}
	wd.Changed = true
	ids := map[string]rune{}
	var words []string
	enc := func(toks []string) []rune {
		out := make([]rune, len(toks))
		for i, t := range toks {
			id, ok := ids[t]
			if !ok {
				// Runes from U+10000 on: about a million distinct tokens,
				// more than a capped text can hold.
				id = rune(0x10000 + len(words))
				ids[t] = id
				words = append(words, t)
			}
			out[i] = id
		}
		return out
	}
	ra, rb := enc(tokenize(a)), enc(tokenize(b))
	dmp := diffmatchpatch.New()
	// A bound, not a target: a pathological pair of texts gets a coarser
	// (still correct) diff instead of holding a history page or a run.
	dmp.DiffTimeout = 300 * time.Millisecond
	diffs := dmp.DiffMainRunes(ra, rb, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	for _, d := range diffs {
		var sb strings.Builder
		n := 0
		for _, r := range d.Text {
			t := words[r-0x10000]
			sb.WriteString(t)
			if t != " " && t != "\n" {
				n++
			}
		}
		seg := Seg{Text: sb.String()}
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			seg.Op = OpDelete
			wd.Removed += n
		case diffmatchpatch.DiffInsert:
			seg.Op = OpInsert
			wd.Added += n
		default:
			seg.Op = OpEqual
		}
		wd.Segs = append(wd.Segs, seg)
	}
	if ctx >= 0 {
		wd.Segs = trimContext(wd.Segs, ctx)
	}
	return wd
}

// DiffFull is Diff without shortening the unchanged text: the
// equal and deleted segments spell a, the equal and inserted ones b.
func DiffFull(a, b string) []Seg {
	return diffWordsCtx(a, b, -1).Segs
}

// trimContext shortens long unchanged segments to ctx words around the
// changes, replacing what is left out by a gap.
func trimContext(segs []Seg, ctx int) []Seg {
	out := make([]Seg, 0, len(segs))
	for i, s := range segs {
		if s.Op != OpEqual {
			out = append(out, s)
			continue
		}
		toks := tokenize(s.Text)
		words := 0
		for _, t := range toks {
			if t != " " && t != "\n" {
				words++
			}
		}
		first, last := i == 0, i == len(segs)-1
		keepHead, keepTail := ctx, ctx // words kept after the previous change, before the next
		if first {
			keepHead = 0
		}
		if last {
			keepTail = 0
		}
		if words <= keepHead+keepTail+2 {
			out = append(out, s)
			continue
		}
		head := takeWords(toks, keepHead, false)
		tail := takeWords(toks, keepTail, true)
		if head != "" {
			out = append(out, Seg{Op: OpEqual, Text: head})
		}
		out = append(out, Seg{Op: OpGap, Text: "…"})
		if tail != "" {
			out = append(out, Seg{Op: OpEqual, Text: tail})
		}
	}
	return out
}

// takeWords returns the first (or, fromEnd, the last) n words of toks with
// their separators, trimmed of the separators at the cut.
func takeWords(toks []string, n int, fromEnd bool) string {
	if n == 0 {
		return ""
	}
	var picked []string
	count := 0
	if fromEnd {
		for i := len(toks) - 1; i >= 0 && count < n; i-- {
			picked = append([]string{toks[i]}, picked...)
			if toks[i] != " " && toks[i] != "\n" {
				count++
			}
		}
		s := strings.Join(picked, "")
		// keep the separator next to the change, so words do not run together
		return " " + strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	for i := 0; i < len(toks) && count < n; i++ {
		picked = append(picked, toks[i])
		if toks[i] != " " && toks[i] != "\n" {
			count++
		}
	}
	return strings.TrimRightFunc(strings.Join(picked, ""), unicode.IsSpace) + " "
}

// Plain renders a word diff for a terminal, git --word-diff style:
// [-removed-]{+added+}, gaps as "…", line breaks as " ¶ ".
func (wd WordDiff) Plain() string {
	var b strings.Builder
	for _, s := range wd.Segs {
		t := strings.ReplaceAll(s.Text, "\n", " ¶ ")
		switch s.Op {
		case OpDelete:
			b.WriteString("[-" + t + "-]")
		case OpInsert:
			b.WriteString("{+" + t + "+}")
		case OpGap:
			b.WriteString(" … ")
		default:
			b.WriteString(t)
		}
	}
	return strings.TrimSpace(b.String())
}
