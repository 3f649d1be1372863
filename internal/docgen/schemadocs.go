package docgen

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RequiredBlockMarker ends the description of a block the resource cannot
// do without. terraform-plugin-framework has no required blocks (a block's
// presence is a validator's or a config validator's rule, and the protocol
// schema carries no MinItems for it), so tfplugindocs lists every block
// under Optional; RequiredBlocks moves a block whose description says this
// to Required.
const RequiredBlockMarker = " (the block is required)"

// RequiredBlocks rewrites a page tfplugindocs rendered: each top-level
// "(Block, Optional)" entry whose description holds RequiredBlockMarker is
// listed under "### Required" as "(Block, Required)", in name order, and
// the marker is dropped (the section says it).
func RequiredBlocks(page string) string {
	lines := strings.Split(page, "\n")
	schema := index(lines, "## Schema", 0)
	if schema < 0 {
		return page
	}
	end := len(lines)
	for i := schema + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], `<a id="nested`) {
			end = i
			break
		}
	}
	var moved []string
	var kept []string
	for i := schema + 1; i < end; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "- `") && strings.Contains(l, " (Block, Optional) ") && strings.Contains(l, RequiredBlockMarker) {
			l = strings.Replace(l, " (Block, Optional) ", " (Block, Required) ", 1)
			moved = append(moved, strings.Replace(l, RequiredBlockMarker, "", 1))
			continue
		}
		kept = append(kept, l)
	}
	if len(moved) == 0 {
		return page
	}
	body := kept
	req := index(body, "### Required", 0)
	if req < 0 {
		opt := index(body, "### Optional", 0)
		if opt < 0 {
			return page
		}
		body = append(body[:opt:opt], append([]string{"### Required", "", ""}, body[opt:]...)...)
		req = opt
	}
	// The Required list: from req+2 to the first blank line.
	first := req + 2
	last := first
	for last < len(body) && body[last] != "" {
		last++
	}
	list := append(append([]string{}, body[first:last]...), moved...)
	sort.SliceStable(list, func(i, j int) bool { return list[i] < list[j] })
	body = append(body[:first:first], append(list, body[last:]...)...)
	out := append(append(append([]string{}, lines[:schema+1]...), body...), lines[end:]...)
	return strings.Join(out, "\n")
}

func index(lines []string, s string, from int) int {
	for i := from; i < len(lines); i++ {
		if lines[i] == s {
			return i
		}
	}
	return -1
}

// FixDocs applies RequiredBlocks to every page under docs/ (run by go
// generate after tfplugindocs); it returns the pages it rewrote.
func FixDocs(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*", "*.md"))
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		after := RequiredBlocks(string(b))
		if after == string(b) {
			continue
		}
		if err := os.WriteFile(p, []byte(after), 0o644); err != nil {
			return nil, err
		}
		wrote = append(wrote, p)
	}
	return wrote, nil
}
