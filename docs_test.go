package meshrti

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocLinks fails when a relative link of README.md or docs/*.md
// names a file that does not exist, or a #section that the page does not
// have (sections as GitHub names them: the heading in lower case, spaces
// as -, other punctuation dropped).
func TestDocLinks(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md")
	anchors := map[string]map[string]bool{}
	sectionsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		b, err := os.ReadFile(path)
		if err == nil {
			inCode := false
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "```") {
					inCode = !inCode
				}
				if !inCode && strings.HasPrefix(l, "#") {
					a[slug(strings.TrimLeft(l, "# "))] = true
				}
			}
		}
		anchors[path] = a
		return a
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link to %s: no such file", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !sectionsOf(path)[anchor] {
				t.Errorf("%s: link to %s: %s has no section %q", page, target, path, anchor)
			}
		}
	}
}

// slug is a heading's anchor as GitHub makes it.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
