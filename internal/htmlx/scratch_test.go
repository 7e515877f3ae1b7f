package htmlx

import (
	"bytes"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Parse reuses its buffers from page to page (scratch): nothing of one page may show in the next,
// whichever page came before and however many parse at once.
func TestScratchReuseLeavesNothingBehind(t *testing.T) {
	u, _ := url.Parse("https://shop.example/widgets/")
	big := benchPage()
	small := `<html lang=de><title>Klein</title><h1>Eins <i>zwei</i></h1><p>drei</p><a href=/k>vier</a>` +
		`<noscript><a href=/n>fünf</a></noscript><h1>sechs`
	opts := Options{Facts: true, keepText: true}
	parse := func(doc []byte) *Page {
		p, err := opts.Parse(bytes.NewReader(doc), u)
		require.NoError(t, err)
		return p
	}
	first := parse([]byte(small))
	bigFirst := parse(big)
	require.Equal(t, first, parse([]byte(small)), "after a large page")
	require.Equal(t, bigFirst, parse(big), "after a small page")

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				doc := []byte(small)
				want := first
				if i%2 == 0 {
					doc, want = big, bigFirst
				}
				p, err := opts.Parse(bytes.NewReader(doc), u)
				if err != nil || !reflect.DeepEqual(p, want) {
					t.Errorf("goroutine %d: the page differs when parsed alongside others (err %v)", i, err)
					return
				}
			}
		})
	}
	wg.Wait()

	// A page too large for the pool is parsed as well, and the next one is unaffected.
	huge := []byte(strings.Repeat(`<a href="/a">x</a>`, 5000) + `<title>` + strings.Repeat("t", 100_000) + `</title>`)
	require.Len(t, parse(huge).Links, 5000)
	require.Equal(t, first, parse([]byte(small)))
}
