package store

import (
	"strings"
	"testing"
)

func TestValidatePrefix(t *testing.T) {
	for _, ok := range []string{"flink/orders", "app1", "a/b/c-d_e.f"} {
		if msg := ValidatePrefix(ok); msg != "" {
			t.Errorf("%q rejected: %s", ok, msg)
		}
	}
	bad := map[string]string{
		"":                       "empty",
		"/flink":                 "start with a slash",
		"flink/":                 "end with a slash",
		"flink//app":             "empty segment",
		"flink/../x":             ". or ..",
		"./flink":                ". or ..",
		"flink/*":                "wildcards",
		"flink app":              "spaces",
		"flink?x":                "wildcards",
		strings.Repeat("a", 513): "512",
	}
	for p, want := range bad {
		if msg := ValidatePrefix(p); !strings.Contains(msg, want) {
			t.Errorf("%q: got %q, want a message containing %q", p, msg, want)
		}
	}
}

func TestParse(t *testing.T) {
	s, err := Parse("acme-flink-state/flink/orders")
	if err != nil || s.Bucket != "acme-flink-state" || s.Prefix != "flink/orders" {
		t.Fatalf("got %+v, %v", s, err)
	}
	cp, sp, ha := s.Dirs()
	if cp != "s3://acme-flink-state/flink/orders/checkpoints" || sp != "s3://acme-flink-state/flink/orders/savepoints" || ha != "s3://acme-flink-state/flink/orders/ha" {
		t.Fatalf("dirs %s %s %s", cp, sp, ha)
	}
	if s.KeyPrefix() != "flink/orders/" || s.DirKey(CheckpointsDir) != "flink/orders/checkpoints" {
		t.Fatalf("keys %s %s", s.KeyPrefix(), s.DirKey(CheckpointsDir))
	}
	for _, bad := range []string{"bucket", "bucket/", "/prefix", "bucket//x", "bucket/x/"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFromCheckpointDir(t *testing.T) {
	s := Store{Bucket: "bkt", Prefix: "flink/orders"}
	cp, _, _ := s.Dirs()
	if got, ok := FromCheckpointDir(cp); !ok || got != s {
		t.Fatalf("%s: got %+v %v", cp, got, ok)
	}
	for _, other := range []string{"s3://bkt/flink/orders/chk", "s3a://bkt/p/checkpoints", "s3://bkt/checkpoints", "s3://bkt//x/checkpoints"} {
		if _, ok := FromCheckpointDir(other); ok {
			t.Errorf("%s taken for a store's checkpoint dir", other)
		}
	}
}

func TestMarkerAndAncestors(t *testing.T) {
	s := Store{Bucket: "b", Prefix: "flink/team/orders"}
	if s.MarkerKey() != "flink/team/orders/.flinkstate-store.json" {
		t.Fatal(s.MarkerKey())
	}
	if got := strings.Join(s.Ancestors(), ","); got != "flink,flink/team" {
		t.Fatalf("ancestors %s", got)
	}
	if len((Store{Bucket: "b", Prefix: "app"}).Ancestors()) != 0 {
		t.Fatal("a one-segment prefix has no ancestors")
	}
	if got, ok := MarkerStoreOf("b", s.MarkerKey()); !ok || got != s {
		t.Fatalf("%+v %v", got, ok)
	}
	if _, ok := MarkerStoreOf("b", "flink/orders/checkpoints/x"); ok {
		t.Fatal("a state file taken for a marker")
	}
}

// A bucket name with a dot is more than one host label, which S3's
// wildcard certificate does not cover.
func TestWildcardCertMatches(t *testing.T) {
	for _, b := range []string{"a.b", "my.bucket.name", "acme.flink-state", "x.y.z"} {
		if WildcardCertMatches(b) {
			t.Errorf("WildcardCertMatches(%q) = true", b)
		}
	}
	for _, b := range []string{"acme-flink-state", "abc", "my-bucket-name"} {
		if !WildcardCertMatches(b) {
			t.Errorf("WildcardCertMatches(%q) = false", b)
		}
	}
}

// The store a deployment's directories lay out, in either scheme.
func TestFromDirs(t *testing.T) {
	for _, tc := range []struct {
		cp, sp, want string
	}{
		{"s3://acme/flink/orders/checkpoints", "s3://acme/flink/orders/savepoints", "acme/flink/orders"},
		{"s3a://acme/flink/orders/checkpoints/", "s3://acme/flink/orders/savepoints", "acme/flink/orders"},
		{"s3://acme/orders/checkpoints", "s3://acme/other/savepoints", ""},
		{"s3://acme/orders/checkpoints", "s3://other/orders/savepoints", ""},
		{"s3://acme/orders/chk", "s3://acme/orders/savepoints", ""},
		{"s3://acme/checkpoints", "s3://acme/savepoints", ""}, // no prefix: not a store
		{"", "s3://acme/orders/savepoints", ""},
	} {
		s, ok := FromDirs(tc.cp, tc.sp)
		if got := map[bool]string{true: s.ID(), false: ""}[ok]; got != tc.want {
			t.Errorf("FromDirs(%q, %q) = %q, want %q", tc.cp, tc.sp, got, tc.want)
		}
	}
}

func TestHolds(t *testing.T) {
	s := Store{Bucket: "acme", Prefix: "flink/orders"}
	for dir, want := range map[string]bool{
		"s3://acme/flink/orders/savepoints": true, "s3a://acme/flink/orders/adhoc/x": true, "s3://acme/flink/orders": true,
		"s3://acme/flink/orders2/savepoints": false, "s3://acme/flink/payments": false, "s3://other/flink/orders/savepoints": false, "/tmp/x": false,
	} {
		if got := s.Holds(dir); got != want {
			t.Errorf("Holds(%q) = %v, want %v", dir, got, want)
		}
	}
}
