package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// RegistryDocs is where the Terraform Registry serves docs/: the provider
// page at RegistryDocs, the others at RegistryDocs/<kind>/<name>, without
// ".md" (the Registry's provider documentation publishes docs/ so; a
// relative "x.md" link there leads nowhere).
const RegistryDocs = "https://registry.terraform.io/providers/flinkstate/flinkstate/latest/docs"

// RepoPages are the documents outside docs/ whose links are checked: their
// relative links are files of the repository, as GitHub shows them.
var RepoPages = []string{"README.md", "CONTRIBUTING.md", "TESTBED.md", "CHANGELOG.md"}

var (
	fence      = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	comment    = regexp.MustCompile(`(?s)<!--.*?-->`)
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// prose is a Markdown page without what is not rendered as links: code
// blocks, code spans and HTML comments.
func prose(md string) string {
	md = fence.ReplaceAllString(md, "")
	md = comment.ReplaceAllString(md, "")
	return codeSpan.ReplaceAllString(md, "")
}

// Slug is the anchor a heading gets: lower case, spaces as hyphens, other
// punctuation but "-" and "_" dropped (GitHub's and the Registry's rule).
func Slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown page: its headings' slugs (a
// repeated one numbered, -1, -2, as GitHub does) and its HTML anchors.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range htmlAnchor.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
		text := strings.NewReplacer("`", "", "*", "").Replace(m[1])
		s := Slug(text)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// CheckLinks reads docs/ and RepoPages under root and returns every bad
// link, as "file: link: why":
//   - in docs/, a relative link ending in .md (the Registry does not serve
//     it), a relative link on the provider page (the Registry resolves it
//     from /latest/, not /latest/docs/), a link to a page or anchor docs/
//     does not have, relative or at RegistryDocs;
//   - in RepoPages, a relative link to a file that does not exist, or to
//     an anchor its Markdown page does not have, and a RegistryDocs link
//     to a page docs/ does not have.
func CheckLinks(root string) ([]string, error) {
	var problems []string
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*", "*.md"))
	if err != nil {
		return nil, err
	}
	pages = append(pages, filepath.Join(root, "docs", "index.md"))
	cache := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, bool) {
		if a, ok := cache[file]; ok {
			return a, a != nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			cache[file] = nil
			return nil, false
		}
		cache[file] = anchors(string(b))
		return cache[file], true
	}
	// target checks a Markdown file and an anchor in it.
	target := func(file, anchor string) string {
		a, ok := anchorsOf(file)
		if !ok {
			rel, _ := filepath.Rel(root, file)
			return "no such page: " + rel
		}
		if anchor != "" && !a[anchor] {
			rel, _ := filepath.Rel(root, file)
			return fmt.Sprintf("%s has no anchor #%s", rel, anchor)
		}
		return ""
	}
	registry := func(link string) string {
		rest, anchor, _ := strings.Cut(strings.TrimPrefix(link, RegistryDocs), "#")
		rest = strings.Trim(rest, "/")
		if rest == "" {
			return target(filepath.Join(root, "docs", "index.md"), anchor)
		}
		return target(filepath.Join(root, "docs", filepath.FromSlash(rest)+".md"), anchor)
	}
	check := func(file string, inDocs bool) error {
		b, err := os.ReadFile(file)
		if err != nil {
			if !inDocs && os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, file)
		for _, m := range mdLink.FindAllStringSubmatch(prose(string(b)), -1) {
			link := m[1]
			why := ""
			switch {
			case strings.HasPrefix(link, RegistryDocs):
				why = registry(link)
			case strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:"):
				continue
			case strings.HasPrefix(link, "#"):
				why = target(file, link[1:])
			default:
				path, anchor, _ := strings.Cut(link, "#")
				dest := filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				switch {
				case inDocs && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".md.tmpl")):
					why = "relative link ending in .md: the Registry serves docs pages without it (e.g. ../guides/name)"
				case inDocs && filepath.Base(file) == "index.md" && filepath.Dir(file) == filepath.Join(root, "docs"):
					why = "relative link on the provider page: the Registry resolves it from /latest/, not /latest/docs/: use " + RegistryDocs + "/..."
				case inDocs:
					why = target(dest+".md", anchor)
				case strings.HasSuffix(path, ".md"):
					why = target(dest, anchor)
				default:
					if _, err := os.Stat(dest); err != nil {
						why = "no such file: " + path
					}
				}
			}
			if why != "" {
				problems = append(problems, fmt.Sprintf("%s: %s: %s", rel, link, why))
			}
		}
		return nil
	}
	for _, p := range pages {
		if err := check(p, true); err != nil {
			return nil, err
		}
	}
	for _, p := range RepoPages {
		if err := check(filepath.Join(root, p), false); err != nil {
			return nil, err
		}
	}
	sort.Strings(problems)
	return problems, nil
}
