package pagetext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTextCompressionRoundTrip(t *testing.T) {
	s := strings.Repeat("Visible text of a page, repeated. ", 500)
	z := Compress(s)
	assert.Less(t, len(z), len(s)/10)
	back, err := Decompress(z)
	require.NoError(t, err)
	assert.Equal(t, s, back)

	// A row that inflates past the cap is cut there, with an error.
	bomb := Compress(strings.Repeat("a", MaxBytes+1000))
	back, err = Decompress(bomb)
	assert.ErrorIs(t, err, ErrTooLong)
	assert.Len(t, back, MaxBytes)
	_, err = Decompress([]byte("not deflate"))
	assert.Error(t, err)
}
