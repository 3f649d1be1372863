package awsfront

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// kumoVersions is a ListObjectVersions answer as kumo writes it: every
// version, then every delete marker, IsTruncated false.
func kumoVersions(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult><Name>b</Name><Prefix>p/</Prefix><MaxKeys>1048576</MaxKeys><IsTruncated>false</IsTruncated>`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<Version><Key>p/k%03d</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest><LastModified>2026-12-01T17:00:00.000Z</LastModified></Version>`, i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<DeleteMarker><Key>p/k%03d</Key><VersionId>v2</VersionId><IsLatest>true</IsLatest><LastModified>2026-12-01T17:00:01.000Z</LastModified></DeleteMarker>`, i)
	}
	b.WriteString(`</ListVersionsResult>`)
	return b.String()
}

// Paged by the front: every version and marker once, in S3's order (by
// key, newest first), max-keys at a time, with the markers S3 gives.
func TestVersionsPaging(t *testing.T) {
	body := kumoVersions(150)
	type result struct {
		IsTruncated   bool
		MaxKeys       int
		NextKeyMarker string
		NextVersionID string `xml:"NextVersionIdMarker"`
		Entries       []struct {
			XMLName   xml.Name
			Key       string
			VersionID string `xml:"VersionId"`
		} `xml:",any"`
	}
	seen := map[string]bool{}
	var order []string
	keyMarker, versionMarker, pages := "", "", 0
	for {
		q := "versions&prefix=p%2F&max-keys=40"
		if keyMarker != "" {
			q += "&key-marker=" + keyMarker + "&version-id-marker=" + versionMarker
		}
		r := httptest.NewRequest(http.MethodGet, "/b?"+q, nil)
		pg := takeVersionsPaging(r)
		if got := r.URL.Query(); got.Has("key-marker") || got.Get("max-keys") != fmt.Sprint(versionsAll) {
			t.Fatalf("request to kumo %s: want the markers gone and max-keys %d", r.URL.RawQuery, versionsAll)
		}
		resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		if err := pg.page(resp); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		var res result
		if err := xml.Unmarshal(b, &res); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		pages++
		n := 0
		for _, e := range res.Entries {
			if e.XMLName.Local != "Version" && e.XMLName.Local != "DeleteMarker" {
				continue
			}
			n++
			id := e.Key + "@" + e.VersionID
			if seen[id] {
				t.Fatalf("page %d repeats %s", pages, id)
			}
			seen[id] = true
			order = append(order, id)
		}
		if n > 40 || res.MaxKeys != 40 {
			t.Fatalf("page %d: %d entries, MaxKeys %d; want at most 40", pages, n, res.MaxKeys)
		}
		if !res.IsTruncated {
			break
		}
		if res.NextKeyMarker == "" || res.NextVersionID == "" {
			t.Fatalf("page %d truncated without NextKeyMarker/NextVersionIdMarker", pages)
		}
		keyMarker, versionMarker = res.NextKeyMarker, res.NextVersionID
	}
	if len(seen) != 300 || pages != 8 {
		t.Fatalf("%d entries in %d pages, want 300 in 8", len(seen), pages)
	}
	if order[0] != "p/k000@v2" || order[1] != "p/k000@v1" {
		t.Errorf("first entries %v, want the key's delete marker (newest) then its version", order[:2])
	}
}
