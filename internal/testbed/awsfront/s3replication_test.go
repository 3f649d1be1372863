package awsfront

import (
	"reflect"
	"strings"
	"testing"
)

func mustParseReplication(t *testing.T, body string) ReplicationConfiguration {
	t.Helper()
	c, err := ParseReplicationConfiguration([]byte(body))
	if err != nil {
		t.Fatalf("ParseReplicationConfiguration: %v", err)
	}
	return c
}

func destinations(ts []ReplicationTarget) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Destination)
	}
	return out
}

const v2Rules = `<ReplicationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Role>arn:aws:iam::123456789012:role/r</Role>
  <Rule><ID>orders</ID><Priority>1</Priority><Status>Enabled</Status>
    <Filter><Prefix>flink/orders/</Prefix></Filter>
    <DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication>
    <Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
  <Rule><ID>payments</ID><Priority>2</Priority><Status>Enabled</Status>
    <Filter><Prefix>flink/payments/</Prefix></Filter>
    <DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication>
    <Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
  <Rule><ID>off</ID><Priority>3</Priority><Status>Disabled</Status>
    <Filter><Prefix>flink/off/</Prefix></Filter>
    <DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication>
    <Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
</ReplicationConfiguration>`

// A rule's filter selects by key prefix; a disabled rule replicates nothing.
func TestReplicationTargets_prefixFilter(t *testing.T) {
	c := mustParseReplication(t, v2Rules)
	for key, want := range map[string][]string{
		"flink/orders/checkpoints/chk-1/_metadata": {"dr"},
		"flink/payments/savepoints/x/_metadata":    {"dr"},
		"flink/other/_metadata":                    {},
		"flink/orders":                             {}, // the prefix ends in "/"
		"flink/off/a":                              {},
	} {
		if got := destinations(c.Targets(key, false)); !reflect.DeepEqual(got, want) {
			t.Errorf("Targets(%q) = %v, want %v", key, got, want)
		}
	}
}

// A V2 rule (with Filter) replicates delete markers only with
// DeleteMarkerReplication Enabled; a V1 rule (no Filter) always does.
func TestReplicationTargets_deleteMarkers(t *testing.T) {
	c := mustParseReplication(t, v2Rules)
	if got := c.Targets("flink/orders/a", true); len(got) != 0 {
		t.Errorf("a delete marker under a rule with DeleteMarkerReplication Disabled replicates to %v", got)
	}
	if got := destinations(c.Targets("flink/payments/a", true)); !reflect.DeepEqual(got, []string{"dr"}) {
		t.Errorf("a delete marker under a rule with DeleteMarkerReplication Enabled replicates to %v, want [dr]", got)
	}
	v1 := mustParseReplication(t, `<ReplicationConfiguration><Role>arn:aws:iam::1:role/r</Role>
	  <Rule><ID>v1</ID><Status>Enabled</Status><Prefix>logs/</Prefix><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
	</ReplicationConfiguration>`)
	if got := destinations(v1.Targets("logs/a", true)); !reflect.DeepEqual(got, []string{"dr"}) {
		t.Errorf("a V1 rule replicates a delete marker to %v, want [dr]", got)
	}
}

// Of the matching rules with one destination, the highest priority applies;
// a rule with another destination applies too.
func TestReplicationTargets_priority(t *testing.T) {
	c := mustParseReplication(t, `<ReplicationConfiguration><Role>arn:aws:iam::1:role/r</Role>
	  <Rule><ID>all</ID><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix></Prefix></Filter>
	    <DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
	  <Rule><ID>state</ID><Priority>5</Priority><Status>Enabled</Status><Filter><Prefix>state/</Prefix></Filter>
	    <DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>
	  <Rule><ID>other</ID><Priority>2</Priority><Status>Enabled</Status><Filter><Prefix>state/</Prefix></Filter>
	    <DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication><Destination><Bucket>arn:aws-us-gov:s3:::dr2</Bucket></Destination></Rule>
	</ReplicationConfiguration>`)
	got := c.Targets("state/a", false)
	if len(got) != 2 || got[0].Destination != "dr" || got[0].RuleID != "state" || got[1].Destination != "dr2" {
		t.Fatalf("Targets(state/a) = %+v, want dr by rule state (priority 5 over 1) and dr2", got)
	}
	// The higher-priority rule does not replicate delete markers, so none
	// goes to dr even though the lower one would.
	if got := destinations(c.Targets("state/a", true)); len(got) != 0 {
		t.Errorf("delete marker of state/a replicates to %v, want none", got)
	}
	if got := destinations(c.Targets("logs/a", true)); !reflect.DeepEqual(got, []string{"dr"}) {
		t.Errorf("delete marker of logs/a replicates to %v, want [dr]", got)
	}
}

// What S3 refuses in the document itself.
func TestParseReplicationConfiguration_refusals(t *testing.T) {
	rule := func(extra string) string {
		return `<ReplicationConfiguration><Role>arn:aws:iam::1:role/r</Role>` + extra + `</ReplicationConfiguration>`
	}
	ok := `<Rule><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix>a/</Prefix></Filter><DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>`
	for name, tc := range map[string]struct{ body, want string }{
		"no role":            {`<ReplicationConfiguration>` + ok + `</ReplicationConfiguration>`, "Role is required"},
		"no rule":            {rule(""), "at least one Rule"},
		"no delete marker":   {rule(`<Rule><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix>a/</Prefix></Filter><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>`), "DeleteMarkerReplication must be specified"},
		"duplicate priority": {rule(ok + ok), "duplicate priority 1"},
		"bad status":         {rule(strings.Replace(ok, "Enabled", "On", 1)), "Status must be Enabled or Disabled"},
		"destination name":   {rule(strings.Replace(ok, "arn:aws:s3:::dr", "dr", 1)), "bucket ARN"},
		"mixed V1 and V2": {rule(ok + `<Rule><Status>Enabled</Status><Prefix>b/</Prefix><Destination><Bucket>arn:aws:s3:::dr</Bucket></Destination></Rule>`),
			"cannot be mixed"},
	} {
		if _, err := ParseReplicationConfiguration([]byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := ParseReplicationConfiguration([]byte(rule(ok))); err != nil {
		t.Errorf("a valid configuration is refused: %v", err)
	}
}

// CreateBucket's region: none given is us-east-1; GetBucketLocation
// answers us-east-1 as an empty constraint.
func TestBucketRegion_createAndLocation(t *testing.T) {
	for body, want := range map[string]string{
		"": "us-east-1",
		`<CreateBucketConfiguration><LocationConstraint>us-west-2</LocationConstraint></CreateBucketConfiguration>`: "us-west-2",
		`<CreateBucketConfiguration></CreateBucketConfiguration>`:                                                   "us-east-1",
	} {
		if got, err := createBucketRegion([]byte(body)); err != nil || got != want {
			t.Errorf("createBucketRegion(%q) = %q, %v; want %q", body, got, err, want)
		}
	}
	if b := string(locationConstraintBody("us-east-1")); !strings.Contains(b, "></LocationConstraint>") {
		t.Errorf("us-east-1 location %s, want an empty constraint", b)
	}
	if b := string(locationConstraintBody("us-west-2")); !strings.Contains(b, ">us-west-2</LocationConstraint>") {
		t.Errorf("us-west-2 location %s", b)
	}
}

// The front keeps bucket regions and replication configurations in its
// data file: a front started again on the same file has them.
func TestReplicator_dataSurvivesRestart(t *testing.T) {
	file := t.TempDir() + "/awsfront.json"
	r, err := newReplicator(nil, file, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	r.setBucketRegion("dr", SecondRegion)
	r.mu.Lock()
	r.data.Replication["src"] = v2Rules
	r.save()
	r.mu.Unlock()
	again, err := newReplicator(nil, file, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if reg, ok := again.bucketRegion("dr"); !ok || reg != SecondRegion {
		t.Errorf("region after restart = %q, %v; want %s", reg, ok, SecondRegion)
	}
	if got := destinations(again.configs["src"].Targets("flink/orders/a", false)); !reflect.DeepEqual(got, []string{"dr"}) {
		t.Errorf("configuration after restart sends flink/orders/a to %v, want [dr]", got)
	}
	again.bucketDeleted("src")
	if third, err := newReplicator(nil, file, "us-east-1"); err != nil || len(third.configs) != 0 {
		t.Errorf("after the bucket's deletion a restarted front has %v (%v), want no configuration", third.configs, err)
	}
}
