package checkpoint

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// replicaOf is a bucket named replica holding a copy of the named fixtures'
// objects under the same keys, as S3 replication writes them.
func replicaOf(t *testing.T, replica string, names ...string) *objS3 {
	t.Helper()
	src := fixtureS3(t, names...)
	s := &objS3{bucket: replica, objects: src.objects, pageSize: 1000}
	return s
}

// copyURI is uri with its bucket replaced by bucket.
func copyURI(uri, bucket string) string {
	_, k, _ := splitObjectURI(uri)
	return "s3://" + bucket + "/" + k
}

// Savepoints, canonical and native, name their files relative to their
// directory (what real Flink 2.2.1 wrote: testdata): read at a copy in
// another bucket they are relocatable, every file counted as relative.
func TestCheckRelocation_savepointsAreRelocatable(t *testing.T) {
	for _, name := range []string{"canonical-savepoint", "native-savepoint"} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			copyDir := copyURI(f.snapshot, "acme-flink-state-dr")
			r := CheckRelocation(f.read(t), copyDir)
			if !r.Relocatable() || r.Err() != nil {
				t.Fatalf("not relocatable: outside %v", r.Outside)
			}
			if r.Files == 0 || r.Relative != r.Files {
				t.Fatalf("%d files, %d relative; want all relative", r.Files, r.Relative)
			}
			if r.Dir != copyDir {
				t.Errorf("Dir = %q, want %q", r.Dir, copyDir)
			}
		})
	}
}

// An incremental checkpoint read where it was written names its shared
// files by absolute path outside chk-N (in the job's shared/): not
// relocatable, though in its own bucket.
func TestCheckRelocation_checkpointInPlace(t *testing.T) {
	f := loadFixture(t, "incremental-rocksdb-checkpoint")
	r := CheckRelocation(f.read(t), f.snapshot)
	if r.Relocatable() {
		t.Fatal("an incremental checkpoint is relocatable")
	}
	if len(r.OtherBucket) != 0 {
		t.Errorf("in its own bucket, OtherBucket = %v", r.OtherBucket)
	}
	jobDir := f.snapshot[:strings.LastIndex(f.snapshot, "/")]
	for _, u := range r.Outside {
		if !strings.HasPrefix(u, jobDir+"/shared/") {
			t.Errorf("outside file %s not under %s/shared/", u, jobDir)
		}
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "outside its own directory") {
		t.Errorf("Err() = %v", err)
	}
}

// The same checkpoint copied to another bucket still names the source
// bucket: every outside file is in another bucket, and the error names
// them and says to use a savepoint.
func TestCheckRelocation_checkpointCopy(t *testing.T) {
	f := loadFixture(t, "incremental-rocksdb-checkpoint")
	src, _, _ := splitObjectURI(f.snapshot + "/_metadata")
	copyDir := copyURI(f.snapshot, "acme-flink-state-dr")
	r := CheckRelocation(f.read(t), copyDir+"/_metadata")
	if r.Relocatable() || !slices.Equal(r.Outside, r.OtherBucket) {
		t.Fatalf("outside %v, other bucket %v", r.Outside, r.OtherBucket)
	}
	for _, u := range r.OtherBucket {
		if !strings.HasPrefix(u, "s3://"+src+"/") {
			t.Errorf("%s is not in the source bucket %s", u, src)
		}
	}
	var nre *NotRelocatableError
	err := r.Err()
	if !errors.As(err, &nre) {
		t.Fatalf("Err() = %v", err)
	}
	for _, want := range []string{copyDir, "in another bucket", r.OtherBucket[0], "savepoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

// s3a:// and s3:// name the same object (Flink's S3 file systems): a
// snapshot read through s3a:// is still in its own directory.
func TestCheckRelocation_schemeNormalised(t *testing.T) {
	dir := "s3a://b/p/savepoints/savepoint-1"
	m := &Metadata{Files: []FileRef{{URI: "s3://b/p/savepoints/savepoint-1/f1", Kind: FileExclusive},
		{URI: "s3://b/p/savepoints/savepoint-10/f2", Kind: FileExclusive}}}
	r := CheckRelocation(m, dir)
	if want := []string{"s3://b/p/savepoints/savepoint-10/f2"}; !slices.Equal(r.Outside, want) || len(r.OtherBucket) != 0 {
		t.Fatalf("outside %v (want %v: a sibling directory sharing the name's start is outside), other %v", r.Outside, want, r.OtherBucket)
	}
}

// CheckRestorable on a replica: a savepoint copy whose files all arrived
// passes; one missing a file names it; a checkpoint copy is refused as not
// relocatable without a request to the source bucket; a directory without
// _metadata is reported as such.
func TestCheckRestorable(t *testing.T) {
	ctx := context.Background()
	const replica = "acme-flink-state-dr"
	sp := loadFixture(t, "canonical-savepoint")
	chk := loadFixture(t, "incremental-rocksdb-checkpoint")

	s := replicaOf(t, replica, "canonical-savepoint", "incremental-rocksdb-checkpoint")
	r, err := CheckRestorable(ctx, s, copyURI(sp.snapshot, replica), OwnDirectory)
	if err != nil || r.Err() != nil {
		t.Fatalf("arrived savepoint: %v / %v", err, r.Err())
	}
	if r.Completeness.Present != r.Completeness.Referenced || r.Completeness.Referenced == 0 {
		t.Errorf("present %d of %d", r.Completeness.Present, r.Completeness.Referenced)
	}

	// One file of the savepoint has not arrived.
	var gone string
	for _, u := range r.Completeness.Metadata.FileURIs() {
		gone = u
	}
	delete(s.objects, key(gone))
	r, err = CheckRestorable(ctx, s, copyURI(sp.snapshot, replica), OwnDirectory)
	var inc *IncompleteError
	if err != nil || !errors.As(r.Err(), &inc) || !slices.Equal(inc.Missing, []string{gone}) {
		t.Fatalf("partly arrived savepoint: %v / %v", err, r.Err())
	}

	s.requests = nil
	r, err = CheckRestorable(ctx, s, copyURI(chk.snapshot, replica), OwnDirectory)
	var nre *NotRelocatableError
	if err != nil || !errors.As(r.Err(), &nre) {
		t.Fatalf("copied checkpoint: %v / %v", err, r.Err())
	}
	if s.count("LIST")+s.count("HEAD") != 0 {
		t.Errorf("a checkpoint that is not relocatable had its files looked for: %v", s.requests)
	}

	r, err = CheckRestorable(ctx, s, "s3://"+replica+"/flink/counts/savepoints/savepoint-none", OwnDirectory)
	if err != nil || r.Relocation != nil || !errors.As(r.Err(), &inc) || !inc.MetadataMissing {
		t.Fatalf("no _metadata: %v / %+v", err, r)
	}
}

// With OwnBucket, an incremental checkpoint restored where it was written
// is checked file by file (its shared/ files are in its own bucket); the
// same checkpoint copied to another bucket is refused alike.
func TestCheckRestorable_ownBucket(t *testing.T) {
	ctx := context.Background()
	chk := loadFixture(t, "incremental-rocksdb-checkpoint")
	s := fixtureS3(t, "incremental-rocksdb-checkpoint")
	r, err := CheckRestorable(ctx, s, chk.snapshot, OwnBucket)
	if err != nil || r.Err() != nil || r.Completeness.Present == 0 {
		t.Fatalf("checkpoint in place: %v / %v (present %d)", err, r.Err(), r.Completeness.Present)
	}
	if r, _ := CheckRestorable(ctx, s, chk.snapshot, OwnDirectory); r == nil || r.Err() == nil {
		t.Fatal("OwnDirectory accepts a checkpoint naming its shared/ files")
	}
	cp := replicaOf(t, "acme-flink-state-dr", "incremental-rocksdb-checkpoint")
	r, err = CheckRestorable(ctx, cp, copyURI(chk.snapshot, "acme-flink-state-dr"), OwnBucket)
	var nre *NotRelocatableError
	if err != nil || !errors.As(r.Err(), &nre) {
		t.Fatalf("copied checkpoint with OwnBucket: %v / %v", err, r.Err())
	}
}
