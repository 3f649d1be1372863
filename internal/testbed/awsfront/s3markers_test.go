package awsfront

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A DeleteObjects body names directory markers by their S3 keys; the
// emulator gets the reserved names, whether the path has the bucket's
// trailing slash (as real Flink's S3A sent it) or not (AWS SDK for Go v2).
func TestRewriteMarkerRequest_deleteObjects(t *testing.T) {
	for _, path := range []string{"/b?delete", "/b/?delete"} {
		body := `<Delete><Object><Key>flink/counts/</Key><VersionId>v1</VersionId></Object><Object><Key>flink/counts/a</Key></Object></Delete>`
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if err := rewriteMarkerRequest(r); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r.Body)
		want := strings.Replace(body, "flink/counts/</Key>", "flink/counts/"+MarkerSuffix+"</Key>", 1)
		if string(got) != want {
			t.Errorf("POST %s: body to the emulator %s, want %s", path, got, want)
		}
	}
}
