package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flinkstate/terraform-provider-flinkstate/internal/checkpoint"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/flinkconf"
	"github.com/flinkstate/terraform-provider-flinkstate/internal/preflight"
)

// TestRealFlink_metadataVersionRefusalIsFlinks holds the pre-flight's
// Flink-version rule (preflight.Check, rule "metadata-version") to Flink
// itself: every Flink version the provider accepts reads the _metadata
// files real Flink 2.2.1 wrote (internal/checkpoint/testdata, written by
// TestRealFlink_recordMetadataFixtures) as a restore does
// (Checkpoints.loadCheckpointMetadata, run by tools/flink's ReadMetadata
// over that version's own jars), and the provider must refuse a snapshot
// for a flink_version exactly when that Flink refuses it, with Flink's own
// message. One JVM per version, over the jars TestRealFlink_derivedKeysAreFlinks
// brings into the cache.
func TestRealFlink_metadataVersionRefusalIsFlinks(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("needs Java and Maven like the real-Flink tests: set TF_ACC=1")
	}
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dist, err := BuildFlink(ctx, root, t.Logf) // ReadMetadata is in the test job's jar
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Glob(filepath.Join(root, "internal", "checkpoint", "testdata", "*", "_metadata"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no _metadata fixtures under internal/checkpoint/testdata (%v)", err)
	}
	metas := map[string]*checkpoint.Metadata{}
	for _, f := range fixtures {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := checkpoint.ReadMetadata(r, "s3://acme-flink-state/flink/counts/"+filepath.Base(filepath.Dir(f))+"/_metadata")
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		metas[f] = m
	}
	minors := make([]string, 0, len(flinkconf.ReleasedVersions))
	for m := range flinkconf.ReleasedVersions {
		minors = append(minors, m)
	}
	sort.Strings(minors)
	refusedSomewhere, readSomewhere := false, false
	for _, minor := range minors {
		patch, _ := flinkconf.NewestPatch(minor)
		version := fmt.Sprintf("%s.%d", minor, patch)
		t.Run(version, func(t *testing.T) {
			// The classes TestRealFlink_derivedKeysAreFlinks asks about, so its
			// cached answer serves here too.
			knows, err := KnowsVersion(ctx, root, dist, version, []string{flinkconf.IRSACredentialsProvider, flinkconf.PodIdentityCredentialsProvider}, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			cp := filepath.Join(knows.Lib, "*") + string(filepath.ListSeparator) + dist.JobJar
			out, err := exec.CommandContext(ctx, dist.Java, append([]string{"-cp", cp, "org.flinkstate.testjob.ReadMetadata"}, fixtures...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("ReadMetadata over Flink %s: %v\n%s", version, err, out)
			}
			said := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				verdict, rest, _ := strings.Cut(line, " ")
				file, detail, _ := strings.Cut(rest, " ")
				if verdict == "read" || verdict == "refused" {
					said[file] = verdict + " " + detail
				}
			}
			for _, f := range fixtures {
				flink, ok := said[f]
				if !ok {
					t.Fatalf("ReadMetadata said nothing of %s:\n%s", f, out)
				}
				var versionFinding *preflight.Finding
				for _, fd := range preflight.Check(metas[f], preflight.Desired{FlinkVersion: version}) {
					if fd.Rule == "metadata-version" {
						versionFinding = &fd
					}
				}
				name := filepath.Base(filepath.Dir(f))
				t.Logf("Flink %s, %s (metadata version %d): Flink %s; provider refuses: %v", version, name, metas[f].Version, flink, versionFinding != nil)
				switch {
				case strings.HasPrefix(flink, "read "):
					readSomewhere = true
					if versionFinding != nil {
						t.Errorf("%s: Flink %s reads it, but the pre-flight refuses it: %s", name, version, versionFinding.Detail())
					}
				default:
					refusedSomewhere = true
					if versionFinding == nil {
						t.Errorf("%s: Flink %s refuses it (%s), but the pre-flight lets it through", name, version, flink)
					} else if !strings.Contains(flink, versionFinding.FlinkMessage) {
						t.Errorf("%s: Flink %s says %q; the pre-flight quotes %q", name, version, flink, versionFinding.FlinkMessage)
					}
				}
			}
		})
	}
	// The fixtures are version 6 (Flink 2.1 and later): some version the
	// provider accepts must refuse them and some must read them, or the
	// test proved nothing.
	if !refusedSomewhere || !readSomewhere {
		t.Errorf("every Flink version gave the same answer (refused somewhere: %v, read somewhere: %v)", refusedSomewhere, readSomewhere)
	}
}
