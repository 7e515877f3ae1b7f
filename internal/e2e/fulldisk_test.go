package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// bulkySite is a site of n pages whose rows (60 links each, with long
// anchors) outgrow a 1 MiB disk.
func bulkySite(t *testing.T, n int) *testsite.Site {
	s := testsite.New(t)
	s.Robots("User-agent: *\nDisallow:\n")
	var all []string
	for i := range n {
		all = append(all, fmt.Sprintf("/page-%03d-%s", i, strings.Repeat("x", 60)))
	}
	for i, p := range all {
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>Page %d %s</title><body>", i, strings.Repeat("words ", 20))
		for k := range 60 {
			fmt.Fprintf(&b, `<a href="%s">anchor text of a link that is quite long %d</a> `, all[(i+k)%n], k)
		}
		s.HTML(p, b.String())
	}
	s.HTML("/", page("Home", all...))
	return s
}

// TestAuditFullDiskStopsAndResumes: a crawl whose database fills its disk
// (a 1 MiB tmpfs in a mount namespace of its own: unshare -rm) stops at the
// first failed write with a non-zero exit naming the file and the cause,
// and stays resumable: once there is room, -resume finishes it with every
// page in the file. Expected to fail until the audit branch merges: on
// main the crawl says "finished", loses the middle, and -resume refuses.
func TestAuditFullDiskStopsAndResumes(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("unshare", "-rm", "true").CombinedOutput()
	need(t, err == nil, fmt.Sprintf("mount namespaces are not available (unshare -rm true: %v %s)", err, out),
		"run as root, or enable unprivileged user namespaces, with util-linux's unshare installed")
	const n = 150
	s := bulkySite(t, n)
	disk, keep := t.TempDir(), t.TempDir()
	script := `mount -t tmpfs -o size=1m tmpfs "$DISK" && cd "$DISK" || exit 99
"$AUDIT" -gap 0 -concurrency 8 -no-report -db full.db "$SITE"
echo "crawl exit $?"
mount -o remount,size=64m "$DISK" || exit 98
"$AUDIT" -resume -quiet -no-report -db full.db
echo "resume exit $?"
cp full.db* "$KEEP"/`
	p := start(t, "", opts{dir: keep, wrap: []string{"unshare", "-rm", "sh", "-c", script},
		env: []string{"DISK=" + disk, "KEEP=" + keep, "AUDIT=" + bin("audit"), "SITE=" + s.URL() + "/"}})
	r := p.wait()
	require.Equal(t, 0, r.code, r)
	codes := regexp.MustCompile(`(?m)^(crawl|resume) exit (\d+)$`).FindAllStringSubmatch(r.stdout, -1)
	require.Len(t, codes, 2, r)
	assert.NotEqual(t, "0", codes[0][2], "a crawl that could not write its pages fails: %s", r)
	assert.NotContains(t, r.stdout[:strings.Index(r.stdout, "crawl exit")], " finished ", "not called finished")
	assert.Regexp(t, `(?i)full\.db.*(no space|disk is full|full)|(no space|disk is full).*full\.db`, r.stderr, "the file and the cause are named")
	assert.Equal(t, "0", codes[1][2], "-resume finishes the crawl once there is room: %s", r)

	db, err := sql.Open("sqlite", "file:"+filepath.Join(keep, "full.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var pages int
	var outcome string
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM pages WHERE crawl_id = 1`).Scan(&pages))
	require.NoError(t, db.QueryRow(`SELECT outcome FROM crawls WHERE id = 1`).Scan(&outcome))
	assert.Equal(t, n+1, pages, "every page is in the file: a full disk loses nothing")
	assert.Equal(t, "finished", outcome)
	_, err = os.Stat(filepath.Join(keep, "full.db"))
	assert.NoError(t, err)
}
