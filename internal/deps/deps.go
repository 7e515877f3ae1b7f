//go:build tools

package deps

import (
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/stretchr/testify/require"
	_ "github.com/temoto/robotstxt"
	_ "golang.org/x/net/html"
	_ "golang.org/x/net/idna"
	_ "golang.org/x/net/publicsuffix"
	_ "golang.org/x/term"
	_ "golang.org/x/time/rate"
	_ "modernc.org/sqlite"
)
