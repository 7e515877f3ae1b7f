package pagetext

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"sync"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// The visible text of a snapshot is kept (compressed) so that a change of
// content can be shown as a word diff rather than as two hashes. It is
// extracted by package textscope, the monitor's one implementation of
// visible text (the whole page, or the part a page's rules select).

// MaxBytes caps the stored text of one snapshot: textscope's cap.
const MaxBytes = textscope.MaxTextBytes

// flateWriters are reused: a flate.Writer holds about 1 MB of tables, and
// a run compresses one text per snapshot.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// Compress deflates text for the snapshots.text column.
func Compress(s string) []byte {
	if s == "" {
		return nil
	}
	var buf bytes.Buffer
	w := flateWriters.Get().(*flate.Writer)
	w.Reset(&buf)
	io.WriteString(w, s)
	w.Close()
	flateWriters.Put(w)
	return buf.Bytes()
}

// ErrTooLong: a stored text inflates past its cap (a damaged or hostile
// database row); reading stops there.
var ErrTooLong = errors.New("stored text longer than the cap")

// Decompress inflates a snapshots.text value, reading at most
// MaxBytes+1 bytes whatever the row holds.
func Decompress(z []byte) (string, error) {
	if len(z) == 0 {
		return "", nil
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxBytes {
		return string(b[:MaxBytes]), ErrTooLong
	}
	return string(b), nil
}
