package checkpoint

import (
	"context"
	"strings"
	"testing"
	"time"
)

// failingS3 (restore_target_test.go) answers no listing.

func TestReadBaseline(t *testing.T) {
	keys := map[string]time.Time{}
	layout(keys, "cp", jobA, []int{4, 5}, []int{6}, 0, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	s := newMemS3(keys)
	describe := func(err error) string { return "said " + err.Error() }
	cases := []struct {
		name    string
		c       S3API
		job     string
		want    Baseline
		warning string
	}{
		{"newest completed", s, jobA, Baseline{JobID: jobA, After: 5}, ""},
		{"no checkpoint yet", s, jobB, Baseline{JobID: jobB}, ""},
		{"S3 fails", failingS3{}, jobA, Baseline{JobID: jobA, After: -1}, "wait_for = \"checkpoint\": said "},
	}
	for _, c := range cases {
		b, w := ReadBaseline(context.Background(), c.c, "b", "cp", c.job, describe)
		if b != c.want || !strings.HasPrefix(w, c.warning) || (c.warning == "") != (w == "") {
			t.Errorf("%s: %+v %q, want %+v %q", c.name, b, w, c.want, c.warning)
		}
	}
	if w := BaselineWarning("x", true); !strings.HasSuffix(w, "the wait takes any completed checkpoint of a new job id, and of this one only its next one.") {
		t.Errorf("no client: %q", w)
	}
}

func TestBaseline_afterFor(t *testing.T) {
	keys := map[string]time.Time{}
	layout(keys, "cp", jobA, []int{7}, nil, 0, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	s := newMemS3(keys)
	cases := []struct {
		name string
		base Baseline
		job  string
		c    S3API
		want int64
	}{
		{"same job numbers on", Baseline{JobID: jobA, After: 3}, jobA, s, 3},
		{"a new job from 0", Baseline{JobID: jobB, After: 3}, jobA, s, 0},
		{"unread: read now", Baseline{JobID: jobA, After: -1}, jobA, s, 7},
		{"unread, still unreadable", Baseline{JobID: jobA, After: -1}, jobA, failingS3{}, 0},
	}
	for _, c := range cases {
		if got := c.base.AfterFor(context.Background(), c.c, "b", "cp", c.job); got != c.want {
			t.Errorf("%s: AfterFor = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestWaitUnready(t *testing.T) {
	if cause, _ := WaitUnready(jobA, true); cause != "" {
		t.Errorf("ready: %q", cause)
	}
	for _, c := range []struct {
		job   string
		store bool
	}{{"", true}, {jobA, false}, {"not-a-job", true}} {
		cause, todo := WaitUnready(c.job, c.store)
		if !strings.Contains(cause, "(the operator reports \""+c.job+"\")") || !strings.HasPrefix(todo, "Set wait_for = \"running\"") {
			t.Errorf("%+v: %q %q", c, cause, todo)
		}
	}
}

func TestReadNewest(t *testing.T) {
	s, _ := waitBucket(t)
	describe := func(err error) string { return "said " + err.Error() }
	cp, md, why := ReadNewest(context.Background(), s, "b", "cp", waitJob, describe)
	if why != "" || cp == nil || cp.ID != 3 || md == nil || len(md.Operators) == 0 {
		t.Fatalf("%+v %v %q", cp, md, why)
	}
	if cp, md, why := ReadNewest(context.Background(), s, "b", "elsewhere", waitJob, describe); cp != nil || md != nil || why != "" {
		t.Errorf("no checkpoint: %+v %v %q", cp, md, why)
	}
	s.put("cp/"+waitJob+"/chk-4/_metadata", []byte("not metadata"), t0.Add(time.Minute))
	if _, md, why := ReadNewest(context.Background(), s, "b", "cp", waitJob, describe); md != nil ||
		!strings.HasPrefix(why, "reading s3://b/cp/"+waitJob+"/chk-4/_metadata: said ") {
		t.Errorf("unreadable: %v %q", md, why)
	}
	if _, _, why := ReadNewest(context.Background(), failingS3{}, "b", "cp", waitJob, describe); !strings.HasPrefix(why, "said listing s3://b/cp/") {
		t.Errorf("S3 fails: %q", why)
	}
}
