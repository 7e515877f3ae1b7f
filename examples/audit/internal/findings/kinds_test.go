package findings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// findingKinds reads every finding kind the program declares: the string constants named Kind... in its
// (non-test) Go files. Reading the source, not a list, is what makes a new kind without a row fail.
func findingKinds(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var kinds []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, f, src, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if len(name.Name) < 5 || !strings.HasPrefix(name.Name, "Kind") || name.Name[4] < 'A' || name.Name[4] > 'Z' || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						kinds = append(kinds, v)
					}
				}
			}
		}
	}
	require.Greater(t, len(kinds), 30, "the finding kinds were found")
	return kinds
}

// Every finding kind has a severity and a line of advice, in the one table; the table is ordered by
// severity (the report lists kinds in its order) and names no kind twice or that does not exist.
func TestEveryFindingKindHasSeverityAndAdvice(t *testing.T) {
	kinds := findingKinds(t)
	declared := map[string]bool{}
	for _, k := range kinds {
		declared[k] = true
		_, ok := kindIndex[k]
		assert.True(t, ok, "finding kind %q has no row in kindTable", k)
	}
	seen := map[string]bool{}
	last := SevError
	for _, row := range kindTable {
		assert.True(t, declared[row.Kind], "kindTable names %q, which is not a finding kind", row.Kind)
		assert.False(t, seen[row.Kind], "%q twice", row.Kind)
		seen[row.Kind] = true
		assert.GreaterOrEqual(t, row.Severity, last, "%s: the table goes errors, warnings, notices", row.Kind)
		last = row.Severity
		assert.NotEmpty(t, row.Title, row.Kind)
		assert.NotContains(t, row.Advice, "\n", "%s: one line", row.Kind)
		assert.True(t, strings.HasSuffix(row.Advice, ".") && len(row.Advice) > 30, "%s: a sentence of advice: %q", row.Kind, row.Advice)
	}
	for _, k := range kindOrder {
		assert.True(t, seen[k], "the summary's kind %q has no severity", k)
	}
	assert.Equal(t, "error", InfoOf(KindBrokenLink).Severity.String())
	assert.Equal(t, "warning", InfoOf(KindRedirectChain).Severity.String())
	assert.Equal(t, "notice", InfoOf(KindExternalLink).Severity.String())
	assert.Equal(t, KindInfo{Kind: "no_such_kind", Severity: sevNotice, Title: "no_such_kind", Category: CatSite}, InfoOf("no_such_kind"))
}

// Every kind has a category from the fixed list (the app's tabs), and KindsOf lists each category's kinds
// exactly once across the categories.
func TestEveryFindingKindHasACategory(t *testing.T) {
	fixed := map[string]bool{}
	for _, c := range []string{"Response codes", "Links", "URL", "Titles", "Descriptions", "Headings", "Content", "Canonicals",
		"Directives", "Hreflang", "Sitemaps", "Security", "Rendering", "Site"} {
		fixed[c] = true
	}
	assert.Len(t, Categories, len(fixed))
	for _, c := range Categories {
		assert.True(t, fixed[c], "category %q is not one of the fixed list", c)
	}
	listed := map[string]string{}
	for _, c := range Categories {
		for _, k := range KindsOf(c) {
			_, twice := listed[k]
			assert.False(t, twice, "%q in two categories", k)
			listed[k] = c
		}
	}
	for _, k := range findingKinds(t) {
		info := InfoOf(k)
		assert.True(t, fixed[info.Category], "finding kind %q has category %q, not one of the fixed list", k, info.Category)
		assert.Equal(t, info.Category, listed[k], "KindsOf(%q) lists %q", info.Category, k)
	}
	assert.Equal(t, CatLinks, InfoOf(KindBrokenLink).Category)
	assert.Equal(t, CatTitles, InfoOf(KindTitleDuplicate).Category)
	assert.Empty(t, KindsOf("No such category"))
}

// The README's table of finding kinds is this table: same kinds, order, severities and advice.
func TestREADMEListsEveryFindingKind(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var got []KindInfo
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			continue
		}
		kind := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, ok := kindIndex[kind]; !ok && !strings.Contains(kind, "_") {
			continue // another table of the README
		}
		sev := map[string]severity{"error": SevError, "warning": sevWarning, "notice": sevNotice}[cells[1]]
		got = append(got, KindInfo{Kind: kind, Severity: sev, Advice: strings.ReplaceAll(strings.TrimSpace(cells[2]), "`", "")})
	}
	var want []KindInfo
	for _, k := range kindTable {
		want = append(want, KindInfo{Kind: k.Kind, Severity: k.Severity, Advice: k.Advice})
	}
	assert.Equal(t, want, got)
}

// Issue 20 asks for at least 100 finding kinds: the table has them.
func TestAtLeast100Kinds(t *testing.T) {
	assert.GreaterOrEqual(t, len(kindTable), 100)
}
