package awsfront

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Keys that end in "/" (the directory markers Hadoop's S3A writes for
// every mkdirs, S3AFileSystem.createFakeDirectory) are distinct S3 keys:
// "a/b/" and "a/b" are two objects. The emulator cannot tell them apart: its
// router cleans the URL path (kumo internal/server/router.go, path.Clean,
// to avoid ServeMux redirects), so "PUT /bucket/a/b/" stores "a/b", and S3A
// then takes the directory for a zero-length file (a restore from
// s3://.../chk-2 read "chk-2" as the metadata file and failed with
// EOFException). The test bed's AWS front keeps them apart: it stores such
// a key under a reserved name beneath it and translates listings and
// DeleteObjects back, so every client sees S3's own key space.
const MarkerSuffix = ".flinkstate-testbed-dir-marker"

// toEmulatorKey maps a key that ends in "/" to the name the emulator stores.
func toEmulatorKey(key string) string {
	if strings.HasSuffix(key, "/") {
		return key + MarkerSuffix
	}
	return key
}

var (
	markerKeyIn  = []byte("/</Key>")
	markerKeyOut = []byte("/" + MarkerSuffix + "</Key>")
)

// rewriteMarkerRequest rewrites an S3 request for the emulator: the object
// key in a path-style URL, and the keys of a DeleteObjects body (its
// Content-MD5 recomputed, which S3 requires for it).
func rewriteMarkerRequest(r *http.Request) error {
	bucket, key, hasKey := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if hasKey && strings.HasSuffix(key, "/") {
		r.URL.Path = "/" + bucket + "/" + toEmulatorKey(key)
		r.URL.RawPath = ""
	}
	// DeleteObjects is a bucket-level POST, which may come with the
	// bucket's trailing slash ("/bucket/?delete"): real Flink's S3A
	// directory-marker deletes reached kumo untranslated before (kumo held
	// delete markers under the raw key "flink/counts/").
	if (!hasKey || key == "") && r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		body, err := replaceBody(&r.Body, r.Header, markerKeyIn, markerKeyOut)
		if err != nil {
			return err
		}
		r.ContentLength = int64(len(body))
		if r.Header.Get("Content-MD5") != "" {
			sum := md5.Sum(body)
			r.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		}
	}
	return nil
}

// rewriteMarkerResponse translates the reserved names back in bucket-level
// answers (listings, DeleteObjects results).
func rewriteMarkerResponse(resp *http.Response) error {
	req := resp.Request
	if req == nil || strings.Contains(strings.Trim(req.URL.Path, "/"), "/") {
		return nil // object-level: no keys in the body
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "xml") {
		return nil
	}
	body, err := replaceBody(&resp.Body, resp.Header, markerKeyOut, markerKeyIn)
	resp.ContentLength = int64(len(body))
	return err
}

// replaceBody reads a body (up to 16 MiB), replaces from with to in it,
// puts it back and sets its Content-Length header.
func replaceBody(body *io.ReadCloser, h http.Header, from, to []byte) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(*body, 16<<20))
	_ = (*body).Close()
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, from, to)
	*body = io.NopCloser(bytes.NewReader(b))
	h.Set("Content-Length", strconv.Itoa(len(b)))
	return b, nil
}
