package awsfront

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// S3 replication, emulated in the test bed's AWS front: neither kumo nor
// LocalStack copies objects between buckets (kumo does not even serve
// PutBucketReplication: a PUT ?replication would create the bucket and a
// DELETE ?replication would delete it, handlers.go bucketPutSubresources /
// bucketDeleteSubresources). The front serves Put/Get/DeleteBucketReplication
// itself, keeps the configurations in its data file (so a restart of the
// front within one test bed keeps them), and copies, after a lag the test
// sets, each object written through it under a rule, as S3 documents:
//
//   - PutBucketReplication needs versioning Enabled on the source and on
//     every destination bucket, and a role (S3 User Guide, "Requirements and
//     considerations for replication"; Amazon S3 API Reference,
//     PutBucketReplication: InvalidRequest otherwise).
//   - Only objects written after the rule replicate: objects that existed
//     before need S3 Batch Replication (S3 User Guide, "Setting up live
//     replication overview": "Amazon S3 doesn't replicate objects
//     retroactively").
//   - Replication is asynchronous and per object, in no guaranteed order
//     (S3 User Guide, "Replicating objects within and across Regions": each
//     object has its own replication status, "Getting replication status
//     information").
//   - A rule's filter selects by key prefix (S3 User Guide, "Replication
//     configuration file elements": Filter, Prefix).
//   - Deletes: a DELETE naming a version is never replicated; a delete
//     marker (a DELETE without a version) is replicated by a V2 rule (one
//     with a Filter) only with DeleteMarkerReplication Enabled, and always by
//     a V1 rule (S3 User Guide, "How delete operations affect replication"
//     and "Replicating delete markers between buckets").
//   - Replicas are not replicated again (S3 User Guide, "What does Amazon S3
//     replicate?": objects that are replicas created by another replication
//     rule are not replicated): the front writes replicas to the emulator
//     directly, never through itself, so no rule ever sees them.
//   - A destination that lost its versioning, or was deleted, fails the
//     replication (S3 User Guide, "Amazon S3 replication failure reasons":
//     DstBucketUnversioned, DstBucketNotFound); ReplicationStatus.Failed
//     lists it.
//   - Among rules with the same destination that match a key, the one of
//     highest Priority applies (S3 User Guide, "Replication configuration
//     file elements": Priority); rules with other destinations each apply
//     (multiple destinations).
//
// Not emulated: the role is not assumed (kumo enforces no IAM policy; the
// role's policy is judged by the policy engine instead), tags, ACLs and
// SSE-KMS selection criteria, Replication Time Control, replica modification
// sync, and replication status headers (x-amz-replication-status).

// ReplicationConfiguration is the S3 ReplicationConfiguration document
// (Amazon S3 API Reference, PutBucketReplication request body).
type ReplicationConfiguration struct {
	XMLName xml.Name          `xml:"ReplicationConfiguration"`
	Role    string            `xml:"Role"`
	Rules   []ReplicationRule `xml:"Rule"`
}

// ReplicationRule is one Rule of a ReplicationConfiguration.
type ReplicationRule struct {
	ID       string `xml:"ID,omitempty"`
	Priority *int   `xml:"Priority,omitempty"`
	Status   string `xml:"Status"`
	// Prefix is a V1 rule's prefix (no Filter).
	Prefix *string `xml:"Prefix,omitempty"`
	Filter *struct {
		Prefix *string `xml:"Prefix,omitempty"`
		And    *struct {
			Prefix *string `xml:"Prefix,omitempty"`
		} `xml:"And,omitempty"`
	} `xml:"Filter,omitempty"`
	DeleteMarkerReplication *struct {
		Status string `xml:"Status"`
	} `xml:"DeleteMarkerReplication,omitempty"`
	Destination struct {
		Bucket string `xml:"Bucket"`
	} `xml:"Destination"`
}

// v2 tells whether the rule is of the current schema (it has a Filter).
func (r ReplicationRule) v2() bool { return r.Filter != nil }

func (r ReplicationRule) prefix() string {
	switch {
	case r.Filter != nil && r.Filter.Prefix != nil:
		return *r.Filter.Prefix
	case r.Filter != nil && r.Filter.And != nil && r.Filter.And.Prefix != nil:
		return *r.Filter.And.Prefix
	case r.Prefix != nil:
		return *r.Prefix
	}
	return ""
}

func (r ReplicationRule) priority() int {
	if r.Priority == nil {
		return 0
	}
	return *r.Priority
}

// destinationBucket is the bucket name of the rule's destination ARN
// (arn:<partition>:s3:::<bucket>).
func (r ReplicationRule) destinationBucket() string {
	b := r.Destination.Bucket
	if i := strings.LastIndex(b, ":"); i >= 0 {
		b = b[i+1:]
	}
	return b
}

// replicatesDeleteMarkers: V2 rules only with DeleteMarkerReplication
// Enabled, V1 rules always (S3 User Guide, "How delete operations affect
// replication").
func (r ReplicationRule) replicatesDeleteMarkers() bool {
	if !r.v2() {
		return true
	}
	return r.DeleteMarkerReplication != nil && r.DeleteMarkerReplication.Status == "Enabled"
}

// ParseReplicationConfiguration reads a PutBucketReplication body and checks
// what S3 checks of the document itself (Amazon S3 API Reference,
// PutBucketReplication and ReplicationRule): a role, at least one rule,
// Status Enabled or Disabled, a destination bucket ARN, V1 and V2 rules not
// mixed, DeleteMarkerReplication given with every Filter, and distinct
// priorities among V2 rules.
func ParseReplicationConfiguration(body []byte) (ReplicationConfiguration, error) {
	var c ReplicationConfiguration
	if err := xml.Unmarshal(body, &c); err != nil {
		return c, fmt.Errorf("MalformedXML: %v", err)
	}
	if c.Role == "" {
		return c, errors.New("MalformedXML: Role is required")
	}
	if len(c.Rules) == 0 {
		return c, errors.New("MalformedXML: at least one Rule is required")
	}
	priorities := map[int]bool{}
	v2 := c.Rules[0].v2()
	for _, r := range c.Rules {
		if r.Status != "Enabled" && r.Status != "Disabled" {
			return c, fmt.Errorf("MalformedXML: rule %q: Status must be Enabled or Disabled", r.ID)
		}
		if !strings.HasPrefix(r.Destination.Bucket, "arn:") || r.destinationBucket() == "" {
			return c, fmt.Errorf("InvalidArgument: rule %q: Destination Bucket must be a bucket ARN", r.ID)
		}
		if r.v2() != v2 {
			return c, errors.New("InvalidRequest: rules with and without Filter cannot be mixed")
		}
		if r.v2() {
			if r.DeleteMarkerReplication == nil {
				return c, errors.New("InvalidRequest: DeleteMarkerReplication must be specified for this version of Cross Region Replication configuration schema")
			}
			if priorities[r.priority()] {
				return c, errors.New("InvalidRequest: Found duplicate priority " + strconv.Itoa(r.priority()) + " in replication configuration")
			}
			priorities[r.priority()] = true
		}
	}
	return c, nil
}

// ReplicationTarget is where one write goes under a configuration.
type ReplicationTarget struct {
	Destination string
	RuleID      string
}

// Targets are the destinations a write of key replicates to: for each
// destination, the enabled matching rule of highest priority. deleteMarker
// asks for a delete marker's targets (only rules that replicate them).
func (c ReplicationConfiguration) Targets(key string, deleteMarker bool) []ReplicationTarget {
	best := map[string]ReplicationRule{}
	for _, r := range c.Rules {
		if r.Status != "Enabled" || !strings.HasPrefix(key, r.prefix()) {
			continue
		}
		d := r.destinationBucket()
		if cur, ok := best[d]; !ok || r.priority() > cur.priority() {
			best[d] = r
		}
	}
	var out []ReplicationTarget
	for d, r := range best {
		if deleteMarker && !r.replicatesDeleteMarkers() {
			continue
		}
		out = append(out, ReplicationTarget{Destination: d, RuleID: r.ID})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Destination < out[j].Destination })
	return out
}

// PendingReplication is one object (or delete marker) waiting to be copied.
type PendingReplication struct {
	Bucket      string    `json:"bucket"`
	Key         string    `json:"key"`
	VersionID   string    `json:"version_id,omitempty"`
	Destination string    `json:"destination"`
	Operation   string    `json:"operation"` // "put" or "delete-marker"
	Written     time.Time `json:"written"`
	Due         time.Time `json:"due"`
	Held        bool      `json:"held,omitempty"`

	emuKey string // the key as the emulator stores it (s3markers.go)
}

// ReplicationStatus is what the control endpoint answers.
type ReplicationStatus struct {
	Lag        string               `json:"lag"`
	Paused     bool                 `json:"paused"`
	Holds      []string             `json:"holds,omitempty"`
	Pending    []PendingReplication `json:"pending"`
	Replicated int                  `json:"replicated"`
	Failed     []string             `json:"failed,omitempty"`
}

// DefaultReplicationLag is the lag of a test bed nobody set one for.
const DefaultReplicationLag = 200 * time.Millisecond

// frontData is what the front keeps in its data file.
type frontData struct {
	Regions     map[string]string `json:"regions"`     // bucket -> region
	Replication map[string]string `json:"replication"` // bucket -> PutBucketReplication body
}

// replicator holds the configurations and the queue.
type replicator struct {
	target   *url.URL
	client   *http.Client
	dataFile string
	region   string // the test bed's own region (buckets the front never saw created)

	mu         sync.Mutex
	data       frontData
	configs    map[string]ReplicationConfiguration
	lag        time.Duration
	paused     bool
	holds      []*regexp.Regexp
	queue      []*PendingReplication
	replicated int
	failed     []string
}

func newReplicator(target *url.URL, dataFile, region string) (*replicator, error) {
	r := &replicator{target: target, client: &http.Client{Timeout: 30 * time.Second}, dataFile: dataFile, region: region,
		data:    frontData{Regions: map[string]string{}, Replication: map[string]string{}},
		configs: map[string]ReplicationConfiguration{}, lag: DefaultReplicationLag}
	if dataFile != "" {
		if b, err := os.ReadFile(dataFile); err == nil {
			if err := json.Unmarshal(b, &r.data); err != nil {
				return nil, fmt.Errorf("%s: %w", dataFile, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if r.data.Regions == nil {
		r.data.Regions = map[string]string{}
	}
	if r.data.Replication == nil {
		r.data.Replication = map[string]string{}
	}
	for b, body := range r.data.Replication {
		c, err := ParseReplicationConfiguration([]byte(body))
		if err != nil {
			return nil, fmt.Errorf("%s: bucket %s: %w", dataFile, b, err)
		}
		r.configs[b] = c
	}
	return r, nil
}

// save writes the data file (r.mu held).
func (r *replicator) save() {
	if r.dataFile == "" {
		return
	}
	b, _ := json.MarshalIndent(r.data, "", "  ")
	tmp := r.dataFile + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, r.dataFile)
	}
}

func (r *replicator) bucketRegion(bucket string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.data.Regions[bucket]
	return reg, ok
}

func (r *replicator) setBucketRegion(bucket, region string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data.Regions[bucket] = region
	r.save()
}

// bucketDeleted forgets a deleted bucket's region and replication
// configuration (a bucket created again with the name starts afresh).
func (r *replicator) bucketDeleted(bucket string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.data.Regions, bucket)
	delete(r.data.Replication, bucket)
	delete(r.configs, bucket)
	r.save()
}

// emulatorRequest sends a request straight to the emulator (never through
// the front). kumo routes by the SigV4 scope's service name, so the request
// carries one; neither emulator checks the signature. The access key is
// the test bed's own ("test"), which LocalStack maps to its default account
// as it does for every other client here.
func (r *replicator) emulatorRequest(method, bucket, emuKey, rawQuery string, body io.Reader, h http.Header) (*http.Response, error) {
	u := *r.target
	u.Path = "/" + bucket
	if emuKey != "" {
		u.Path += "/" + emuKey
	}
	u.RawQuery = rawQuery
	req, err := http.NewRequest(method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/"+r.region+"/s3/aws4_request, SignedHeaders=host, Signature=0")
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	return r.client.Do(req)
}

// versioningEnabled asks the emulator for a bucket's versioning status;
// exists is false when the bucket does not exist.
func (r *replicator) versioningEnabled(bucket string) (enabled, exists bool, err error) {
	resp, err := r.emulatorRequest(http.MethodGet, bucket, "", "versioning", nil, nil)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return false, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, true, fmt.Errorf("GetBucketVersioning %s: %d %s", bucket, resp.StatusCode, b)
	}
	var v struct {
		Status string `xml:"Status"`
	}
	_ = xml.Unmarshal(b, &v)
	return v.Status == "Enabled", true, nil
}

// serveReplicationConfig answers Put/Get/DeleteBucketReplication for bucket.
func (r *replicator) serveReplicationConfig(w http.ResponseWriter, req *http.Request, bucket string) {
	switch req.Method {
	case http.MethodGet:
		r.mu.Lock()
		body, ok := r.data.Replication[bucket]
		r.mu.Unlock()
		if !ok {
			if _, exists, _ := r.versioningEnabled(bucket); !exists {
				writeS3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", "/"+bucket)
				return
			}
			// Amazon S3 API Reference, GetBucketReplication: "ReplicationConfigurationNotFoundError".
			writeS3Error(w, http.StatusNotFound, "ReplicationConfigurationNotFoundError", "The replication configuration was not found", "/"+bucket)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(body))
	case http.MethodDelete:
		if _, exists, _ := r.versioningEnabled(bucket); !exists {
			writeS3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", "/"+bucket)
			return
		}
		r.mu.Lock()
		delete(r.data.Replication, bucket)
		delete(r.configs, bucket)
		r.save()
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			writeS3Error(w, http.StatusBadRequest, "IncompleteBody", err.Error(), "/"+bucket)
			return
		}
		c, err := ParseReplicationConfiguration(body)
		if err != nil {
			code, msg, _ := strings.Cut(err.Error(), ": ")
			writeS3Error(w, http.StatusBadRequest, code, msg, "/"+bucket)
			return
		}
		on, exists, err := r.versioningEnabled(bucket)
		if err != nil {
			writeS3Error(w, http.StatusInternalServerError, "InternalError", err.Error(), "/"+bucket)
			return
		}
		if !exists {
			writeS3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", "/"+bucket)
			return
		}
		// S3 User Guide, "Requirements and considerations for
		// replication": both source and destination buckets must have
		// versioning enabled.
		if !on {
			writeS3Error(w, http.StatusBadRequest, "InvalidRequest", "Versioning must be 'Enabled' on the bucket to apply a replication configuration", "/"+bucket)
			return
		}
		for _, rule := range c.Rules {
			d := rule.destinationBucket()
			on, exists, err := r.versioningEnabled(d)
			switch {
			case err != nil:
				writeS3Error(w, http.StatusInternalServerError, "InternalError", err.Error(), "/"+bucket)
				return
			case !exists:
				writeS3Error(w, http.StatusBadRequest, "InvalidRequest", "Destination bucket must exist: "+d, "/"+bucket)
				return
			case !on:
				writeS3Error(w, http.StatusBadRequest, "InvalidRequest", "Destination bucket must have versioning enabled: "+d, "/"+bucket)
				return
			}
		}
		r.mu.Lock()
		r.data.Replication[bucket] = string(body)
		r.configs[bucket] = c
		r.save()
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	default:
		writeS3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", "/"+bucket)
	}
}

// written records a successful write through the front: an object version
// (put) or a delete marker. It is queued for every destination a rule of
// the bucket's configuration, as it stands now, sends it to.
func (r *replicator) written(bucket, key, emuKey, versionID string, deleteMarker bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.configs[bucket]
	if !ok {
		return
	}
	op := "put"
	if deleteMarker {
		op = "delete-marker"
	}
	now := time.Now()
	for _, t := range c.Targets(key, deleteMarker) {
		// Asynchronous, in no guaranteed order: each object arrives after
		// the lag plus up to half of it again.
		due := now.Add(r.lag)
		if r.lag > 0 {
			due = due.Add(time.Duration(rand.Int64N(int64(r.lag)/2 + 1)))
		}
		r.queue = append(r.queue, &PendingReplication{Bucket: bucket, Key: key, emuKey: emuKey, VersionID: versionID,
			Destination: t.Destination, Operation: op, Written: now, Due: due})
	}
}

func (r *replicator) held(key string) bool {
	for _, h := range r.holds {
		if h.MatchString(key) {
			return true
		}
	}
	return false
}

// run copies due objects until stop closes.
func (r *replicator) run(stop <-chan struct{}) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		var due []*PendingReplication
		if !r.paused {
			now := time.Now()
			for _, p := range r.queue {
				if !p.Due.After(now) && !r.held(p.Key) {
					due = append(due, p)
				}
			}
		}
		r.mu.Unlock()
		rand.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		for _, p := range due {
			err := r.copy(p)
			r.mu.Lock()
			for i, q := range r.queue {
				if q == p {
					r.queue = append(r.queue[:i], r.queue[i+1:]...)
					break
				}
			}
			if err != nil {
				r.failed = append(r.failed, fmt.Sprintf("%s/%s -> %s: %v", p.Bucket, p.Key, p.Destination, err))
			} else {
				r.replicated++
			}
			r.mu.Unlock()
		}
	}
}

// copy replicates one version (or delete marker) to its destination. A
// destination whose versioning is not Enabled (suspended since the rule was
// written) fails it: S3 User Guide, "Amazon S3 replication failure
// reasons", DstBucketUnversioned.
func (r *replicator) copy(p *PendingReplication) error {
	on, exists, err := r.versioningEnabled(p.Destination)
	switch {
	case err != nil:
		return err
	case !exists:
		return errors.New("DstBucketNotFound")
	case !on:
		return errors.New("DstBucketUnversioned")
	}
	if p.Operation == "delete-marker" {
		// A DELETE without a version in the (versioned) destination adds a
		// delete marker there.
		resp, err := r.emulatorRequest(http.MethodDelete, p.Destination, p.emuKey, "", nil, nil)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("delete marker: status %d", resp.StatusCode)
		}
		return nil
	}
	q := ""
	if p.VersionID != "" {
		q = "versionId=" + url.QueryEscape(p.VersionID)
	}
	src, err := r.emulatorRequest(http.MethodGet, p.Bucket, p.emuKey, q, nil, nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(src.Body)
	_ = src.Body.Close()
	if err != nil {
		return err
	}
	if src.StatusCode != http.StatusOK {
		return fmt.Errorf("reading the source version: status %d", src.StatusCode)
	}
	h := http.Header{}
	for k, v := range src.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-meta-") || lk == "content-type" || lk == "content-encoding" ||
			lk == "cache-control" || lk == "content-disposition" || lk == "content-language" {
			h[k] = v
		}
	}
	dst, err := r.emulatorRequest(http.MethodPut, p.Destination, p.emuKey, "", bytes.NewReader(body), h)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, dst.Body)
	_ = dst.Body.Close()
	if dst.StatusCode/100 != 2 {
		return fmt.Errorf("writing the replica: status %d", dst.StatusCode)
	}
	return nil
}

func (r *replicator) status() ReplicationStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ReplicationStatus{Lag: r.lag.String(), Paused: r.paused, Pending: []PendingReplication{},
		Replicated: r.replicated, Failed: append([]string(nil), r.failed...)}
	for _, h := range r.holds {
		s.Holds = append(s.Holds, h.String())
	}
	for _, p := range r.queue {
		c := *p
		c.Held = r.held(p.Key)
		s.Pending = append(s.Pending, c)
	}
	return s
}

// ReplicationCommand is the body of a POST to the control endpoint; every
// field given applies, in the order listed.
type ReplicationCommand struct {
	Lag     string `json:"lag,omitempty"`     // a Go duration: the lag of objects written from now on
	Release bool   `json:"release,omitempty"` // drop every hold
	Hold    string `json:"hold,omitempty"`    // a regular expression (RE2) on object keys: matching keys do not arrive until Release
	Pause   bool   `json:"pause,omitempty"`
	Resume  bool   `json:"resume,omitempty"`
}

// ReplicationControlPath is the control endpoint's path on the front.
const ReplicationControlPath = "/_testbed/replication"

// serveControl answers the control endpoint: GET for the status, POST a
// ReplicationCommand.
func (r *replicator) serveControl(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		var cmd ReplicationCommand
		if err := json.NewDecoder(io.LimitReader(req.Body, 1<<16)).Decode(&cmd); err != nil {
			http.Error(w, "replication control: "+err.Error(), http.StatusBadRequest)
			return
		}
		var lag time.Duration
		var hold *regexp.Regexp
		var err error
		if cmd.Lag != "" {
			if lag, err = time.ParseDuration(cmd.Lag); err != nil || lag < 0 {
				http.Error(w, fmt.Sprintf("replication control: lag %q: want a duration such as 200ms", cmd.Lag), http.StatusBadRequest)
				return
			}
		}
		if cmd.Hold != "" {
			if hold, err = regexp.Compile(cmd.Hold); err != nil {
				http.Error(w, "replication control: hold: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		r.mu.Lock()
		if cmd.Lag != "" {
			r.lag = lag
		}
		if cmd.Release {
			r.holds = nil
		}
		if hold != nil {
			r.holds = append(r.holds, hold)
		}
		if cmd.Pause {
			r.paused = true
		}
		if cmd.Resume {
			r.paused = false
		}
		r.mu.Unlock()
	} else if req.Method != http.MethodGet {
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(r.status())
}
