// Package store is the layout of a Flink state store: one application's
// prefix in a bucket, with the checkpoint, savepoint and HA directories
// under it, and its ID "bucket/prefix". It is the one place that spells this
// layout; iampolicy, flinkconf, checkpoint and the resources use it. It does
// not import Terraform or the AWS SDK.
package store

import (
	"fmt"
	"strings"
	"unicode"
)

// The directories of a store, under its prefix.
const (
	CheckpointsDir = "checkpoints" // execution.checkpointing.dir
	SavepointsDir  = "savepoints"  // execution.checkpointing.savepoint-dir
	HADir          = "ha"          // high-availability.storageDir
)

// JobResultStoreDir is Flink's job result store under the HA directory:
// the operator sets job-result-store.storage-path to
// <high-availability.storageDir>/job-result-store/<cluster-id>/<random UUID>
// at every deploy, with job-result-store.delete-on-commit false
// (ApplicationReconciler.setRandomJobResultStorePath,
// flink-kubernetes-operator release-1.15.0), and Flink's
// FileSystemJobResultStore writes <job-id>_DIRTY.json there when a job
// reaches a globally terminal state and renames it to <job-id>.json once
// the job's resources are cleaned up (never deleted, with delete-on-commit
// false). So each deploy leaves a directory that nothing deletes. No
// restore reads it: a new deploy gets a new directory.
const JobResultStoreDir = HADir + "/job-result-store"

// StateDirs are the directories that hold Flink state, in display order.
var StateDirs = []string{CheckpointsDir, SavepointsDir, HADir}

// Store is one application's state location: a bucket and a prefix inside it.
type Store struct {
	Bucket string
	Prefix string
}

// ID is the store's identifier, "bucket/prefix".
func (s Store) ID() string { return s.Bucket + "/" + s.Prefix }

// URI is s3://bucket/prefix.
func (s Store) URI() string { return "s3://" + s.ID() }

// KeyPrefix is the key prefix of everything in the store, "prefix/": the
// trailing slash keeps flink/app1 from reaching flink/app10.
func (s Store) KeyPrefix() string { return s.Prefix + "/" }

// DirKey is the key prefix of one of the store's directories, without a
// trailing slash, e.g. "flink/orders/checkpoints".
func (s Store) DirKey(dir string) string { return s.Prefix + "/" + dir }

// Dirs returns the checkpoint, savepoint and HA directories under the store.
func (s Store) Dirs() (checkpoints, savepoints, ha string) {
	return s.URI() + "/" + CheckpointsDir, s.URI() + "/" + SavepointsDir, s.URI() + "/" + HADir
}

// FromCheckpointDir recovers the store whose checkpoint directory is uri
// (s3://bucket/prefix/checkpoints); ok is false for any other directory.
func FromCheckpointDir(uri string) (s Store, ok bool) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return Store{}, false
	}
	rest, ok = strings.CutSuffix(rest, "/"+CheckpointsDir)
	if !ok {
		return Store{}, false
	}
	s, err := Parse(rest)
	return s, err == nil
}

// FromDirs recovers the store whose layout a deployment's checkpoint and
// savepoint directories follow: PREFIX/checkpoints and PREFIX/savepoints
// in one bucket (s3:// or s3a://), as state.store_id writes them (Dirs).
// A store's role grants that prefix (iampolicy.Permissions), so this is
// what the deployment's role may write when nothing else says; ok is false
// for directories laid out otherwise.
func FromDirs(checkpointDir, savepointDir string) (s Store, ok bool) {
	cp, err1 := ParseDir(checkpointDir)
	sp, err2 := ParseDir(savepointDir)
	if err1 != nil || err2 != nil {
		return Store{}, false
	}
	prefix, ok := strings.CutSuffix(cp.Key, "/"+CheckpointsDir)
	if !ok || sp != (Dir{Bucket: cp.Bucket, Key: prefix + "/" + SavepointsDir}) {
		return Store{}, false
	}
	s, err := Parse(cp.Bucket + "/" + prefix)
	return s, err == nil
}

// Holds tells whether an s3:// or s3a:// directory lies in the store.
func (s Store) Holds(dir string) bool {
	d, err := ParseDir(dir)
	return err == nil && d.Within(Dir{Bucket: s.Bucket, Key: s.Prefix})
}

// ValidatePrefix returns what is wrong with a store prefix, or "".
// A prefix is one or more path segments: no leading or trailing slash, no
// empty segment (//), no "." or ".." segment, nothing S3 or Flink paths
// handle badly.
func ValidatePrefix(p string) string {
	switch {
	case p == "":
		return "must not be empty"
	case len(p) > 512:
		return "must be at most 512 characters"
	case strings.HasPrefix(p, "/"):
		return "must not start with a slash"
	case strings.HasSuffix(p, "/"):
		return "must not end with a slash"
	case strings.Contains(p, "//"):
		return "must not contain an empty segment (//)"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return "must not contain . or .. segments"
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || unicode.IsSpace(r) || strings.ContainsRune(`*?\{}[]^%#"<>|~`+"`", r) {
			return fmt.Sprintf("must not contain %q (wildcards, spaces and characters S3 or Hadoop paths treat specially)", r)
		}
	}
	return ""
}

// Parse parses a store ID "bucket/prefix" (the prefix may hold slashes).
func Parse(id string) (Store, error) {
	bucket, prefix, ok := strings.Cut(id, "/")
	if !ok || bucket == "" || prefix == "" {
		return Store{}, fmt.Errorf("%q is not a state store ID of the form bucket/prefix (e.g. flinkstate_state_store.x.id)", id)
	}
	if msg := ValidateBucketName(bucket); msg != "" {
		return Store{}, fmt.Errorf("%q names the bucket %q, which %s", id, bucket, msg)
	}
	if msg := ValidatePrefix(prefix); msg != "" {
		return Store{}, fmt.Errorf("%q has a prefix that %s", id, msg)
	}
	return Store{Bucket: bucket, Prefix: prefix}, nil
}

// BucketMarkerKey is the key of a bucket's ownership marker, at the bucket's
// root (written by s3state.WriteBucketMarker); listings that judge a
// bucket's contents leave it out.
const BucketMarkerKey = ".flinkstate-bucket.json"

// MarkerName is the ownership marker's file name, directly under a store's
// prefix: <prefix>/.flinkstate-store.json. The provider writes it when it
// creates (or first applies after importing) a store; Flink never reads or
// writes it (Flink only touches the checkpoints/, savepoints/ and ha/
// directories it is configured with).
const MarkerName = ".flinkstate-store.json"

// MarkerKey is the key of the store's ownership marker.
func (s Store) MarkerKey() string { return s.Prefix + "/" + MarkerName }

// Ancestors are the key prefixes of the stores s would be nested in:
// "a/b/c" has "a" and "a/b".
func (s Store) Ancestors() []string {
	segs := strings.Split(s.Prefix, "/")
	out := make([]string, 0, len(segs)-1)
	for i := 1; i < len(segs); i++ {
		out = append(out, strings.Join(segs[:i], "/"))
	}
	return out
}

// Marker is the content of an ownership marker: which store it is and the
// owner token the owning Terraform state holds. A second configuration
// does not know the token, so it can neither create over nor force-destroy
// the store.
type Marker struct {
	StoreID string `json:"store_id"`
	Owner   string `json:"owner"`
	Writer  string `json:"written_by"`
}

// MarkerStoreOf returns the store whose marker key is key, ok false when
// key is not a marker.
func MarkerStoreOf(bucket, key string) (Store, bool) {
	prefix, ok := strings.CutSuffix(key, "/"+MarkerName)
	if !ok || ValidatePrefix(prefix) != "" {
		return Store{}, false
	}
	return Store{Bucket: bucket, Prefix: prefix}, true
}
