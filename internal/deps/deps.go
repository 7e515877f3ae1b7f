//go:build tools
package deps
import (
 _ "github.com/temoto/robotstxt"
 _ "golang.org/x/time/rate"
 _ "golang.org/x/net/publicsuffix"
 _ "golang.org/x/net/html"
 _ "golang.org/x/net/idna"
 _ "golang.org/x/term"
 _ "github.com/stretchr/testify/require"
 _ "modernc.org/sqlite"
 _ "github.com/schollz/progressbar/v3"
)
