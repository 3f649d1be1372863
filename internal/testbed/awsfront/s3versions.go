package awsfront

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
)

// ListObjectVersions pages, for kumo. S3 returns at most max-keys (default
// 1000) versions and delete markers, sorted by key and, for one key, newest
// first, with IsTruncated, NextKeyMarker and NextVersionIdMarker, and
// continues after key-marker / version-id-marker (Amazon S3 API Reference,
// ListObjectVersions). kumo (internal/service/s3/handlers.go
// ListObjectVersions) cuts the answer at max-keys, always says IsTruncated
// false and ignores the markers: a bucket with more than 1000 versions
// (a versioned state bucket after a few minutes of real Flink checkpoints)
// could not be emptied. The front asks kumo for everything and pages the
// answer itself.

// versionsAll is the max-keys the front asks kumo for.
const versionsAll = 1 << 20

var versionEntryRE = regexp.MustCompile(`(?s)<(Version|DeleteMarker)>.*?</(?:Version|DeleteMarker)>`)

// versionsPage is a ListObjectVersions request's paging, taken off the
// request sent to kumo.
type versionsPage struct {
	keyMarker, versionMarker string
	maxKeys                  int
}

// takeVersionsPaging rewrites a ListObjectVersions request to ask kumo for
// every version, and returns the paging the client asked for.
func takeVersionsPaging(r *http.Request) versionsPage {
	q := r.URL.Query()
	pg := versionsPage{keyMarker: q.Get("key-marker"), versionMarker: q.Get("version-id-marker"), maxKeys: 1000}
	if n, err := strconv.Atoi(q.Get("max-keys")); err == nil && n > 0 && n < 1000 {
		pg.maxKeys = n
	}
	q.Del("key-marker")
	q.Del("version-id-marker")
	q.Set("max-keys", strconv.Itoa(versionsAll))
	r.URL.RawQuery = q.Encode()
	return pg
}

// page cuts kumo's whole answer to the page asked for. Delimited
// listings (common prefixes) are left as they are.
func (pg versionsPage) page(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	_ = resp.Body.Close()
	if err != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return err
	}
	type entry struct {
		raw         []byte
		key, id     string
		lastUpdated string
	}
	locs := versionEntryRE.FindAllIndex(body, -1)
	if len(locs) == 0 {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	entries := make([]entry, 0, len(locs))
	for _, l := range locs {
		raw := body[l[0]:l[1]]
		var v struct {
			Key          string `xml:"Key"`
			VersionID    string `xml:"VersionId"`
			LastModified string `xml:"LastModified"`
		}
		_ = xml.Unmarshal(raw, &v)
		entries = append(entries, entry{raw: raw, key: v.Key, id: v.VersionID, lastUpdated: v.LastModified})
	}
	// By key, then newest first (kumo lists versions and markers apart).
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].key != entries[j].key {
			return entries[i].key < entries[j].key
		}
		return entries[i].lastUpdated > entries[j].lastUpdated
	})
	start := 0
	if pg.keyMarker != "" {
		start = len(entries)
		for i, e := range entries {
			if e.key > pg.keyMarker {
				start = i
				break
			}
			if e.key == pg.keyMarker && pg.versionMarker != "" && e.id == pg.versionMarker {
				start = i + 1
				break
			}
		}
	}
	end := min(start+pg.maxKeys, len(entries))
	var out bytes.Buffer
	out.Write(body[:locs[0][0]])
	for _, e := range entries[start:end] {
		out.Write(e.raw)
	}
	tail := body[locs[len(locs)-1][1]:]
	truncated := end < len(entries)
	head := out.Bytes()
	head = regexp.MustCompile(`<IsTruncated>\w*</IsTruncated>`).ReplaceAll(head, []byte("<IsTruncated>"+strconv.FormatBool(truncated)+"</IsTruncated>"))
	head = regexp.MustCompile(`<MaxKeys>\d*</MaxKeys>`).ReplaceAll(head, []byte("<MaxKeys>"+strconv.Itoa(pg.maxKeys)+"</MaxKeys>"))
	var res bytes.Buffer
	res.Write(head)
	if truncated {
		last := entries[end-1]
		var k, v bytes.Buffer
		_ = xml.EscapeText(&k, []byte(last.key))
		_ = xml.EscapeText(&v, []byte(last.id))
		res.WriteString("<NextKeyMarker>" + k.String() + "</NextKeyMarker><NextVersionIdMarker>" + v.String() + "</NextVersionIdMarker>")
	}
	res.Write(tail)
	b := res.Bytes()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return nil
}

// isVersionsListing tells whether a bucket GET is ListObjectVersions.
func isVersionsListing(q url.Values) bool { return q.Has("versions") }
