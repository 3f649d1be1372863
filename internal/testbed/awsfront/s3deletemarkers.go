package awsfront

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Delete markers, for kumo. In a versioned bucket a DELETE without a
// version adds a delete marker, and the key then no longer exists for
// HeadObject, GetObject and ListObjects (S3 User Guide, "Working with
// delete markers": "a delete marker ... causes Amazon S3 to behave as if
// the object were deleted"). kumo answers GetObject so, but its
// HeadObject answers 200 with an empty body and its ListObjects(V2) lists
// the key as a 0-byte object (kumo internal/service/s3/storage.go:
// HeadObject and ListObjects read b.Objects[key] without looking at
// IsDeleteMarker, where GetObject does). So Flink's subsumed checkpoints,
// deleted in a versioned state bucket (replication needs versioning), would
// still list as 0-byte files. The front remembers the keys whose current
// version is a delete marker it saw made, answers HEAD and GET on them
// with 404 and x-amz-delete-marker: true, and leaves them out of listings.
// A delimited listing leaves out a common prefix whose every key is gone
// (as S3 lists only prefixes of keys that exist). Not covered: markers made
// before the front started (the set is kept in memory only).
type deleteMarkers struct {
	mu   sync.Mutex
	keys map[string]map[string]bool // bucket -> keys whose current version is a delete marker
}

// set marks or unmarks a key (only for kumo: on is false otherwise).
func (d *deleteMarkers) set(on bool, bucket, key string, gone bool) {
	if !on {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if gone {
		if d.keys == nil {
			d.keys = map[string]map[string]bool{}
		}
		if d.keys[bucket] == nil {
			d.keys[bucket] = map[string]bool{}
		}
		d.keys[bucket][key] = true
		return
	}
	delete(d.keys[bucket], key)
}

func (d *deleteMarkers) has(bucket, key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.keys[bucket][key]
}

func (d *deleteMarkers) bucketDeleted(bucket string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.keys, bucket)
}

// listParams are the query parameters of ListObjects and ListObjectsV2
// (Amazon S3 API Reference); a bucket GET with any other is a sub-resource.
var listParams = map[string]bool{"list-type": true, "prefix": true, "delimiter": true, "max-keys": true, "continuation-token": true,
	"start-after": true, "encoding-type": true, "fetch-owner": true, "marker": true, "x-id": true}

func isListing(q url.Values) bool {
	for k := range q {
		if !listParams[k] {
			return false
		}
	}
	return true
}

var (
	contentsRE = regexp.MustCompile(`(?s)<Contents>.*?</Contents>`)
	prefixesRE = regexp.MustCompile(`(?s)<CommonPrefixes>\s*<Prefix>(.*?)</Prefix>\s*</CommonPrefixes>`)
	keyRE      = regexp.MustCompile(`(?s)<Key>(.*?)</Key>`)
	keyCountRE = regexp.MustCompile(`<KeyCount>(\d+)</KeyCount>`)
)

// filterListing leaves the keys whose current version is a delete marker
// out of a listing's Contents (and its KeyCount), and the common prefixes
// under which no other key is left (live tells whether a prefix has a key
// that is not gone).
func (d *deleteMarkers) filterListing(bucket string, resp *http.Response, live func(prefix string) bool) error {
	d.mu.Lock()
	gone := d.keys[bucket]
	n := len(gone)
	d.mu.Unlock()
	if n == 0 {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	_ = resp.Body.Close()
	if err != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return err
	}
	removed := 0
	d.mu.Lock()
	body = contentsRE.ReplaceAllFunc(body, func(c []byte) []byte {
		m := keyRE.FindSubmatch(c)
		if m == nil {
			return c
		}
		var key string
		if xml.Unmarshal(append(append([]byte("<k>"), m[1]...), "</k>"...), &key) != nil {
			return c
		}
		if d.keys[bucket][key] {
			removed++
			return nil
		}
		return c
	})
	goneUnder := func(prefix string) bool {
		for k := range d.keys[bucket] {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		return false
	}
	var candidates []string
	for _, m := range prefixesRE.FindAllSubmatch(body, -1) {
		var prefix string
		if xml.Unmarshal(append(append([]byte("<p>"), m[1]...), "</p>"...), &prefix) == nil && goneUnder(prefix) {
			candidates = append(candidates, prefix)
		}
	}
	d.mu.Unlock()
	drop := map[string]bool{}
	for _, prefix := range candidates {
		if !live(prefix) {
			drop[prefix] = true
		}
	}
	if len(drop) > 0 {
		body = prefixesRE.ReplaceAllFunc(body, func(c []byte) []byte {
			var prefix string
			m := prefixesRE.FindSubmatch(c)
			if xml.Unmarshal(append(append([]byte("<p>"), m[1]...), "</p>"...), &prefix) == nil && drop[prefix] {
				removed++
				return nil
			}
			return c
		})
	}
	if removed > 0 {
		body = keyCountRE.ReplaceAllFunc(body, func(b []byte) []byte {
			k, _ := strconv.Atoi(string(keyCountRE.FindSubmatch(b)[1]))
			return []byte("<KeyCount>" + strconv.Itoa(max(k-removed, 0)) + "</KeyCount>")
		})
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// deleteObject is one key of a DeleteObjects request (as the client named
// it), and whether it names a version.
type deleteObject struct {
	Key       string
	Versioned bool
}

// deleteRequestObjects reads the keys of a DeleteObjects request (its body
// as sent to the emulator, the keys translated back).
func deleteRequestObjects(r *http.Request) []deleteObject {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var del struct {
		Objects []struct {
			Key       string `xml:"Key"`
			VersionID string `xml:"VersionId"`
		} `xml:"Object"`
	}
	if xml.Unmarshal(body, &del) != nil {
		return nil
	}
	out := make([]deleteObject, 0, len(del.Objects))
	for _, o := range del.Objects {
		out = append(out, deleteObject{Key: strings.TrimSuffix(o.Key, MarkerSuffix), Versioned: o.VersionID != ""})
	}
	return out
}

// liveUnder tells whether a bucket has a key under prefix whose current
// version is not a delete marker: it lists the emulator directly (up to
// 1000 keys; a longer listing counts as live).
func (p *awsProxy) liveUnder(bucket, prefix string) bool {
	resp, err := p.repl.emulatorRequest(http.MethodGet, bucket, "", "list-type=2&prefix="+url.QueryEscape(prefix), nil, nil)
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return true
	}
	var out struct {
		IsTruncated bool `xml:"IsTruncated"`
		Contents    []struct {
			Key string `xml:"Key"`
		} `xml:"Contents"`
	}
	if xml.Unmarshal(body, &out) != nil || out.IsTruncated {
		return true
	}
	for _, c := range out.Contents {
		if !p.gone.has(bucket, strings.TrimSuffix(c.Key, MarkerSuffix)) {
			return true
		}
	}
	return false
}
