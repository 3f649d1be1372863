package store

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

var bucketNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ValidateBucketName applies S3's general purpose bucket naming rules and
// returns a sentence saying what is wrong, or "".
func ValidateBucketName(name string) string {
	switch {
	case len(name) < 3 || len(name) > 63:
		return fmt.Sprintf("must be 3 to 63 characters long, got %d", len(name))
	case !bucketNameRE.MatchString(name):
		return "may contain only lowercase letters, digits, dots and hyphens, and must begin and end with a letter or digit"
	case strings.Contains(name, ".."):
		return "must not contain two adjacent periods"
	case net.ParseIP(name) != nil:
		return "must not be formatted as an IP address"
	case strings.HasPrefix(name, "xn--"), strings.HasPrefix(name, "sthree-"), strings.HasPrefix(name, "amzn-s3-demo-"):
		return "must not start with the reserved prefixes xn--, sthree- or amzn-s3-demo-"
	case strings.HasSuffix(name, "-s3alias"), strings.HasSuffix(name, "--ol-s3"), strings.HasSuffix(name, ".mrap"), strings.HasSuffix(name, "--x-s3"), strings.HasSuffix(name, "--table-s3"):
		return "must not end with a reserved suffix (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3)"
	}
	return ""
}

// Dir is an s3:// or s3a:// directory: a bucket and a key prefix (no
// trailing slash). Flink's S3 file systems serve both schemes on the same
// buckets (flink-s3-fs-hadoop registers s3 and s3a: S3FileSystemFactory,
// S3AFileSystemFactory), so s3://b/p and s3a://b/p name the same objects.
type Dir struct {
	Bucket string
	Key    string
}

// String is the s3:// form.
func (d Dir) String() string { return "s3://" + d.Bucket + "/" + d.Key }

// Within tells whether d is o or lies under it.
func (d Dir) Within(o Dir) bool {
	return d.Bucket == o.Bucket && (d.Key == o.Key || strings.HasPrefix(d.Key, o.Key+"/"))
}

// Overlaps tells whether one of d and o is, or lies under, the other.
func (d Dir) Overlaps(o Dir) bool { return d.Within(o) || o.Within(d) }

// ParseDir parses an s3:// or s3a:// directory and applies the rules every
// state directory follows: the bucket-name rule, a key under the bucket (a
// bucket root would mix Flink's files with everything else in the bucket,
// and no store's role grants it), no empty segment (//: S3 keeps it, Hadoop
// paths collapse it, so Flink would read other keys than it wrote) and no
// . or .. segment (S3 keys are literal, Hadoop paths resolve them).
func ParseDir(s string) (Dir, error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "s3a://")
	}
	if !ok {
		return Dir{}, fmt.Errorf("must be an s3:// or s3a:// URI (state on S3 survives pods and nodes; a local or other path does not)")
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if msg := ValidateBucketName(bucket); msg != "" {
		return Dir{}, fmt.Errorf("names the bucket %q, which %s", bucket, msg)
	}
	key = strings.TrimSuffix(key, "/")
	if key == "" {
		return Dir{}, fmt.Errorf("is the root of bucket %s: give a directory under it, e.g. s3://%s/flink/app/checkpoints", bucket, bucket)
	}
	if strings.Contains(key, "//") || strings.HasPrefix(key, "/") {
		return Dir{}, fmt.Errorf("contains an empty path segment (//): remove it")
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return Dir{}, fmt.Errorf("contains a %q segment: S3 keys are literal, write the directory without it", seg)
		}
	}
	return Dir{Bucket: bucket, Key: key}, nil
}

// ValidateDir returns what is wrong with a state directory, or "".
func ValidateDir(s string) string {
	if _, err := ParseDir(s); err != nil {
		return err.Error()
	}
	return ""
}

// ValidatePath returns what is wrong with the path of a savepoint or
// checkpoint to restore from (job.initial_savepoint_path, a snapshot's
// path), or "": the same rules as a directory, so a local path
// (file:///..., /opt/flink/...) is refused: it exists in no new pod.
func ValidatePath(s string) string { return ValidateDir(s) }

// ValidateID returns what is wrong with a state store ID, or "".
func ValidateID(id string) string {
	if _, err := Parse(id); err != nil {
		return strings.TrimPrefix(err.Error(), fmt.Sprintf("%q ", id))
	}
	return ""
}

// WildcardCertMatches reports whether a bucket can be reached over TLS
// with virtual-hosted-style addressing. Its name becomes the first labels
// of the host name (BUCKET.s3.REGION.amazonaws.com), and S3's certificate
// is issued for *.s3.REGION.amazonaws.com: a wildcard matches one label
// only (RFC 6125, section 6.4.3), so a name with dots yields a host the
// certificate does not cover (S3 User Guide, "Virtual hosting of general
// purpose buckets": "When you use virtual hosted-style buckets with SSL,
// the SSL wildcard certificate matches only buckets that do not contain
// periods. To work around this, use HTTP or write your own certificate
// verification logic"; and "General purpose bucket naming rules": "For
// best compatibility, we recommend that you avoid using periods (.) in
// bucket names, except for buckets that are used only for static website
// hosting").
func WildcardCertMatches(bucket string) bool { return !strings.Contains(bucket, ".") }
