package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Which snapshots restore from a copy in another bucket, as measured with
// real Flink 2.2.1 (TestRealFlink_relocation in internal/testbed: each
// snapshot copied object by object to a second bucket under the same keys,
// the originals deleted, then restored from the copy in a fresh cluster):
//
//	snapshot                        _metadata names its files                      from the copy
//	canonical savepoint (RocksDB)   relative (RelativeFileStateHandle)             restores, counters continue
//	native savepoint (RocksDB)      relative (RelativeFileStateHandle)             restores, counters continue
//	incremental RocksDB checkpoint  absolute, s3://<source>/…/<job>/shared/…       fails: FileNotFoundException naming the source
//	full checkpoint (hashmap)       relative (RelativeFileStateHandle)             restores, counters continue
//
// Savepoints are self-contained and relocatable since Flink 1.11
// (FLINK-5763). An incremental checkpoint's shared and private files
// (IncrementalRemoteKeyedStateHandle) are named by absolute path under the
// job's shared/ directory, so a copy still reads the source bucket; a full
// checkpoint's files are in chk-N and, in Flink 2.2.1, named relative to it.
// So the rule is not by kind but by what the _metadata says: every file it
// names by absolute path must lie under the snapshot's own directory, which
// is what CheckRelocation checks.

// Relocation is what a snapshot's _metadata says about restoring it from
// where it is read: which files it names relative to its own directory, and
// which it names by an absolute path that points elsewhere.
type Relocation struct {
	// Dir is the snapshot's directory (s3://bucket/…/savepoint-x or chk-N),
	// without a trailing slash.
	Dir string
	// Files is how many distinct files the _metadata references.
	Files int
	// Relative are the files named relative to Dir (they follow a copy).
	Relative int
	// Outside are the distinct s3:// URIs named by absolute path outside
	// Dir, sorted: a copy of the snapshot still reads them there.
	Outside []string
	// OtherBucket are those of Outside in another bucket than Dir's,
	// sorted.
	OtherBucket []string
}

// Relocatable tells whether every file the snapshot references lies in its
// own directory, so that a copy of that directory restores on its own.
func (r *Relocation) Relocatable() bool { return len(r.Outside) == 0 }

// CheckRelocation reads what meta (the parsed _metadata of the snapshot in
// dir, a directory or its _metadata) references, and lists the absolute
// paths outside dir. Paths are compared with their scheme normalised (s3,
// s3a and s3p name the same object: Flink's S3 file systems).
func CheckRelocation(meta *Metadata, dir string) *Relocation {
	d := strings.TrimSuffix(strings.TrimSuffix(MetadataURI(dir), MetadataFile), "/")
	r := &Relocation{Dir: d}
	ownBucket, ownKey, _ := splitObjectURI(d + "/" + MetadataFile)
	ownPrefix := strings.TrimSuffix(ownKey, MetadataFile)
	seen := map[string]bool{}
	outside, other := map[string]bool{}, map[string]bool{}
	for _, f := range meta.Files {
		if seen[f.URI] {
			continue
		}
		seen[f.URI] = true
		r.Files++
		if f.Kind == FileRelative {
			r.Relative++
			continue
		}
		bucket, key, ok := splitObjectURI(f.URI)
		if ok && bucket == ownBucket && strings.HasPrefix(key, ownPrefix) {
			continue
		}
		outside[f.URI] = true
		if !ok || bucket != ownBucket {
			other[f.URI] = true
		}
	}
	r.Outside, r.OtherBucket = sortedKeys(outside), sortedKeys(other)
	return r
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NotRelocatableError says a snapshot names files outside its own directory
// by absolute path.
type NotRelocatableError struct {
	Relocation *Relocation
}

func (e *NotRelocatableError) Error() string {
	r := e.Relocation
	shown, more := r.Outside, ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(r.Outside)-5)
	}
	where := "outside its own directory"
	if len(r.OtherBucket) > 0 {
		where = "in another bucket"
	}
	return fmt.Sprintf("%s cannot restore from where it is: its %s names %d of its %d files by absolute path %s (%s%s); "+
		"a copy keeps reading them there (an incremental checkpoint names its shared files so). Restore from a savepoint instead "+
		"(canonical or native: Flink names a savepoint's files relative to its directory, FLINK-5763), taken into this bucket or replicated to it",
		r.Dir, MetadataFile, len(r.Outside), r.Files, where, strings.Join(shown, ", "), more)
}

// Err is nil for a relocatable snapshot, else a *NotRelocatableError.
func (r *Relocation) Err() error {
	if r.Relocatable() {
		return nil
	}
	return &NotRelocatableError{Relocation: r}
}

// Restorability is what CheckRestorable found: whether the snapshot can
// restore from where it is, and whether everything it references is there.
type Restorability struct {
	// Relocation is nil when the _metadata is missing.
	Relocation *Relocation
	// Completeness is the file check; for a snapshot refused by the
	// rule, only its _metadata was read (Missing is empty and Present 0:
	// the files elsewhere were not looked for).
	Completeness *Completeness
	// Rule is the rule it was checked by.
	Rule RelocationRule
}

// RelocationRule says which absolute paths a restore may follow.
type RelocationRule int

const (
	// OwnDirectory: every file must lie under the snapshot's own
	// directory, so that a copy of that directory (a replica in another
	// region) restores on its own.
	OwnDirectory RelocationRule = iota
	// OwnBucket: files elsewhere in the snapshot's own bucket are
	// followed (a retained incremental checkpoint restored where it was
	// written names its job's shared/ files), files in another bucket are
	// refused: the restore would depend on a bucket, perhaps in a region,
	// the deployment does not restore from.
	OwnBucket
)

// refused are the files rule refuses.
func (r *Relocation) refused(rule RelocationRule) []string {
	if rule == OwnBucket {
		return r.OtherBucket
	}
	return r.Outside
}

// Err is nil for a snapshot that restores from where it is: its _metadata
// is there, every file it names lies in its own directory, and every one
// exists. Else a *NotRelocatableError or an *IncompleteError.
func (r *Restorability) Err() error {
	if r.Completeness.Metadata == nil {
		return r.Completeness.Err()
	}
	if len(r.Relocation.refused(r.Rule)) > 0 {
		return &NotRelocatableError{Relocation: r.Relocation}
	}
	return r.Completeness.Err()
}

// CheckRestorable reads the _metadata of target (a savepoint or chk-N
// directory, or its _metadata) and checks, in this order, that it is there,
// that every file it names lies where rule allows (CheckRelocation), and
// that each of those files exists (as CheckComplete, by the _metadata and
// not by listing alone). With OwnDirectory, what passes is what a copy in
// another region can restore from. Files the rule refuses are not looked
// for: in a disaster their bucket's region is gone.
func CheckRestorable(ctx context.Context, c S3Reader, target string, rule RelocationRule) (*Restorability, error) {
	res, found, err := openCheck(ctx, c, target)
	if err != nil {
		return nil, err
	}
	if !found {
		return &Restorability{Completeness: res}, nil
	}
	rel := CheckRelocation(res.Metadata, target)
	out := &Restorability{Relocation: rel, Completeness: res, Rule: rule}
	if len(rel.refused(rule)) > 0 {
		return out, nil
	}
	if err := res.lookForReferenced(ctx, c); err != nil {
		return nil, err
	}
	return out, nil
}
