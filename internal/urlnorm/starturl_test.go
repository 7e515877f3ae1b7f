package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartURLAccepts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://shop.example/", "https://shop.example/"},
		{"http://shop.example:8080/x", "http://shop.example:8080/x"},
		{"HTTPS://Shop.Example", "https://shop.example/"},
		{"  https://shop.example/a b#frag \n", "https://shop.example/a%20b"},
		{"http://localhost:8080/", "http://localhost:8080/"},
		{"https://intranet/", "https://intranet/"},
		{"http://127.0.0.1:3000", "http://127.0.0.1:3000/"},
		{"http://[::1]:8080/", "http://[::1]:8080/"},
		// A bare host name with a dot is read as https.
		{"shop.example", "https://shop.example/"},
		{"Shop.Example/products?page=2", "https://shop.example/products?page=2"},
		{"shop.example:8443/x", "https://shop.example:8443/x"},
		{"www.shop.example.", "https://www.shop.example./"},
		{"127.0.0.1:8080", "https://127.0.0.1:8080/"},
		{"bücher.example", "https://xn--bcher-kva.example/"},
	} {
		got, err := StartURL(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		again, err := StartURL(got)
		require.NoError(t, err)
		assert.Equal(t, got, again, "StartURL of its own answer")
	}
}

func TestStartURLRejects(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", ErrEmpty},
		{" \t\n", ErrEmpty},
		{"notaurl", ErrNoScheme},
		{"localhost", ErrNoScheme},
		{"localhost:8080", ErrNoScheme},
		{"localhost:8080/x", ErrNoScheme},
		{"/relative/path", ErrNoScheme},
		{"//shop.example/", ErrNoScheme},
		{"[::1]:8080", ErrNoScheme},
		{"ftp://shop.example/", ErrScheme},
		{"mailto:a@shop.example", ErrScheme},
		{"javascript:alert(1)", ErrScheme},
		{"file:///etc/passwd", ErrScheme},
		{"http:shop.example", ErrNotAbsolute},
		{"https:/shop.example", ErrNotAbsolute},
		{"https://", ErrHost},
		{"shop .example", ErrHost},
		{".example", ErrHost},
		{"a..example", ErrHost},
		{"https://.example/", ErrHost},
		{"shop.example:99999", ErrPort},
		{"https://user:secret@shop.example/", ErrUserinfo},
		{"user@shop.example", ErrUserinfo},
		{"https://shop.example/" + strings.Repeat("a", MaxStartURL), ErrTooLong},
		{"https://shop.example/" + strings.Repeat("{", MaxStartURL/2), ErrTooLong}, // 4 KiB, 12 KiB once encoded
	} {
		_, err := StartURL(tc.in)
		require.ErrorIs(t, err, tc.want, "%q", tc.in)
		var e *Error
		require.True(t, errors.As(err, &e), "%q", tc.in)
		if tc.want != ErrTooLong {
			assert.Equal(t, tc.in, e.URL)
		}
		assert.Contains(t, err.Error(), tc.want.Error(), "the message says what is wrong")
	}
}

func TestStartURLMessage(t *testing.T) {
	_, err := StartURL("notaurl")
	assert.EqualError(t, err, `urlnorm: no http:// or https://, and not a host name with a dot (write the scheme for a host without one): "notaurl"`)
}

// FuzzStartURL checks that StartURL never panics, that what it accepts is
// normalized, http(s), without user info, and accepted again unchanged, and
// that every refusal is an *Error with a reason.
func FuzzStartURL(f *testing.F) {
	for _, s := range []string{
		"https://shop.example/", "shop.example", "shop.example:8080/a?b#c", "notaurl", "localhost:8080", "",
		"mailto:x@y.example", "http:x.example", "user@x.example", ".example", "a..b", "[::1]", "http://[::1]/",
		" HTTP://X.Example ", "x.example:", "x.example:0", "1.2", "https:///x.example", "ht tp://x.example",
	} {
		f.Add(s)
	}
	reasons := []error{ErrEmpty, ErrNoScheme, ErrScheme, ErrNotAbsolute, ErrHost, ErrPort, ErrUserinfo, ErrTooLong}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := StartURL(in)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("StartURL(%q): %v is not an *Error", in, err)
			}
			for _, r := range reasons {
				if errors.Is(err, r) {
					return
				}
			}
			t.Fatalf("StartURL(%q): %v has no known reason", in, err)
		}
		if n, err := Normalize(got); err != nil || n != got {
			t.Fatalf("StartURL(%q) = %q, not normalized (%q, %v)", in, got, n, err)
		}
		u, err := url.Parse(got)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			t.Fatalf("StartURL(%q) = %q: %v", in, got, err)
		}
		if again, err := StartURL(got); err != nil || again != got {
			t.Fatalf("StartURL(%q) = %q, then %q, %v", in, got, again, err)
		}
	})
}
