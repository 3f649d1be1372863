package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// maxMissingShown caps how many missing files a refused restore names.
const maxMissingShown = 10

// RestoreProblem is why Flink could not restore from a target (see
// CheckRestoreTarget).
type RestoreProblem struct {
	Kind    RestoreProblemKind
	Summary string // "Restore target is incomplete", ...
	Detail  string // what is wrong, one or more sentences, no advice
}

// RestoreProblemKind is what is wrong with a restore target.
type RestoreProblemKind int

// The kinds of RestoreProblem.
const (
	RestoreUnreadable RestoreProblemKind = iota // a _metadata the reader refuses
	RestoreUnchecked                            // S3 did not answer
	RestoreNoMetadata                           // not a completed snapshot
	RestoreIncomplete                           // referenced files missing
	RestoreElsewhere                            // files named in another bucket
)

// CheckRestoreTarget is the one check of a path a deployment is about to
// start from, whether job.initial_savepoint_path or the final savepoint a
// replacement carries: Flink could restore from it only if its _metadata is
// there and readable (CheckComplete reads it as Flink does, and
// fails closed on what it does not know) and every file it references
// exists (a missing one fails the restored job when its tasks read it:
// Flink checks only the _metadata when it resolves the path,
// AbstractFsCheckpointStorageAccess.resolveCheckpointPointer). It costs a
// GET of the _metadata and a listing of each directory holding referenced
// files. nil when the target is complete.
//
// A snapshot whose _metadata names files in another bucket is refused
// before those files are looked for (CheckRestorable with
// OwnBucket): an incremental checkpoint names its shared files by absolute
// path, so a copy of one in another bucket (a cross-region replica) still
// reads the bucket it was written to, which a disaster has taken away;
// measured with real Flink 2.2.1 by TestRealFlink_relocation
// (internal/testbed). describe words an S3 error that stopped the check.
func CheckRestoreTarget(ctx context.Context, s3 S3Reader, target string, describe func(error) string) *RestoreProblem {
	rs, err := CheckRestorable(ctx, s3, target, OwnBucket)
	var comp *Completeness
	if rs != nil {
		comp = rs.Completeness
	}
	var unreadable *MetadataError
	var elsewhere *NotRelocatableError
	switch {
	case errors.As(err, &unreadable):
		return &RestoreProblem{RestoreUnreadable, "Restore target cannot be read",
			fmt.Sprintf("%s.\n\nThe provider reads Flink's %s to check that every file the snapshot needs exists, and refuses a file it "+
				"cannot read rather than guess", err, MetadataFile)}
	case err != nil:
		return &RestoreProblem{RestoreUnchecked, "Restore target could not be checked",
			fmt.Sprintf("checking that %s is complete: %s", target, describe(err))}
	case comp.Metadata == nil:
		return &RestoreProblem{RestoreNoMetadata, "Restore target is not a completed snapshot",
			fmt.Sprintf("%s has no %s: it is not a completed checkpoint (chk-N) or savepoint directory, so Flink could not restore from it",
				target, comp.MetadataURI)}
	case errors.As(rs.Err(), &elsewhere):
		rel := elsewhere.Relocation
		shown, more := rel.OtherBucket, ""
		if len(shown) > maxMissingShown {
			shown, more = shown[:maxMissingShown], fmt.Sprintf("\n  and %d more", len(rel.OtherBucket)-maxMissingShown)
		}
		return &RestoreProblem{RestoreElsewhere, "Restore target cannot restore from where it is",
			fmt.Sprintf("%s names %d of its %d files by absolute path in another bucket, so the restored job would read them there, "+
				"not beside its %s (an incremental checkpoint names its shared files by absolute path, so a copy keeps reading the bucket it "+
				"was copied from):\n  %s%s",
				target, len(rel.OtherBucket), rel.Files, MetadataFile, strings.Join(shown, "\n  "), more)}
	case !comp.Complete():
		shown, more := comp.Missing, ""
		if len(shown) > maxMissingShown {
			shown, more = shown[:maxMissingShown], fmt.Sprintf("\n  and %d more", len(comp.Missing)-maxMissingShown)
		}
		return &RestoreProblem{RestoreIncomplete, "Restore target is incomplete",
			fmt.Sprintf("%s is incomplete: %d of the %d files its %s references are missing, so the restored job would fail when its "+
				"tasks read them:\n  %s%s", target, len(comp.Missing), comp.Referenced, MetadataFile, strings.Join(shown, "\n  "), more)}
	}
	return nil
}
