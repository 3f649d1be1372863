package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// failingS3 answers nothing.
type failingS3 struct{ *objS3 }

func (failingS3) GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return nil, errors.New("connection refused")
}

func (failingS3) ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	return nil, errors.New("connection refused")
}

func TestCheckRestoreTarget(t *testing.T) {
	const fixture = "incremental-rocksdb-checkpoint"
	f := loadFixture(t, fixture)
	describe := func(err error) string { return "S3 said: " + err.Error() }
	for name, c := range map[string]struct {
		s3   func() S3Reader
		kind RestoreProblemKind
		ok   bool   // no problem
		says string // a phrase of the detail
	}{
		"complete": {s3: func() S3Reader { return fixtureS3(t, fixture) }, ok: true},
		"no metadata": {s3: func() S3Reader {
			s := fixtureS3(t, fixture)
			delete(s.objects, key(f.snapshot+"/_metadata"))
			return s
		}, kind: RestoreNoMetadata, says: "not a completed checkpoint"},
		"unreadable": {s3: func() S3Reader {
			s := fixtureS3(t, fixture)
			s.put(key(f.snapshot+"/_metadata"), f.meta[:100], t0)
			return s
		}, kind: RestoreUnreadable, says: "refuses a file it cannot read"},
		"incomplete": {s3: func() S3Reader {
			s := fixtureS3(t, fixture)
			delete(s.objects, key(f.listed+"shared/635450c3-59b5-4a4b-8e33-cb642e9dbc67"))
			return s
		}, kind: RestoreIncomplete, says: "1 of the 1 files"},
		"unchecked": {s3: func() S3Reader { return failingS3{fixtureS3(t, fixture)} }, kind: RestoreUnchecked, says: "S3 said: "},
	} {
		p := CheckRestoreTarget(context.Background(), c.s3(), f.snapshot, describe)
		switch {
		case c.ok && p != nil:
			t.Errorf("%s: %+v, want no problem", name, p)
		case c.ok:
		case p == nil:
			t.Errorf("%s: no problem, want kind %d", name, c.kind)
		case p.Kind != c.kind || p.Summary == "" || !strings.Contains(p.Detail, c.says):
			t.Errorf("%s: %+v, want kind %d saying %q", name, p, c.kind, c.says)
		}
	}
}
