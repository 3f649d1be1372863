package provider

import (
	"reflect"
	"regexp"
	"strings"
)

// Descriptions are written once, in Markdown (code in backticks, *emphasis*).
// markdownDescriptions gives each schema both forms, as the framework
// expects: MarkdownDescription keeps the Markdown (tfplugindocs renders it
// into docs/), and Description becomes plain text (what the terraform CLI
// and language servers show), so neither shows the other's syntax.
func markdownDescriptions(schema any) {
	v := reflect.ValueOf(schema).Elem()
	setMarkdown(v)
	walkMarkdown(v)
}

var emphasis = regexp.MustCompile(`\*([A-Za-z][^*\s]*)\*`)

// plainText is a Markdown description without its Markdown.
func plainText(md string) string {
	return strings.ReplaceAll(emphasis.ReplaceAllString(md, "$1"), "`", "")
}

func hasMarkdown(s string) bool {
	return strings.Contains(s, "`") || emphasis.MatchString(s)
}

// setMarkdown moves a Markdown Description into MarkdownDescription (a
// struct value that can be set).
func setMarkdown(v reflect.Value) {
	d, m := v.FieldByName("Description"), v.FieldByName("MarkdownDescription")
	if !d.IsValid() || !m.IsValid() || m.String() != "" || !hasMarkdown(d.String()) {
		return
	}
	m.SetString(d.String())
	d.SetString(plainText(d.String()))
}

func walkMarkdown(v reflect.Value) {
	for _, field := range []string{"Attributes", "Blocks"} {
		m := v.FieldByName(field)
		if !m.IsValid() || m.Kind() != reflect.Map || m.IsNil() {
			continue
		}
		for _, k := range m.MapKeys() {
			e := m.MapIndex(k)
			if e.Kind() == reflect.Interface {
				e = e.Elem()
			}
			if e.Kind() != reflect.Struct {
				continue
			}
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			setMarkdown(c)
			walkMarkdown(c)
			m.SetMapIndex(k, c)
		}
	}
}
