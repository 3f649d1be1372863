package awsfront

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ReplicationControl drives the AWS front's S3 replication from a test
// (s3replication.go): the lag, holds that keep some keys from arriving (so
// the newest snapshot is partly copied), pause and resume, and what is
// still pending. The front is a process of its own; this is a client of
// its control endpoint (FLINKSTATE_REPLICATION_CONTROL in .testbed/env).
type ReplicationControl struct {
	URL    string
	Client *http.Client
}

// NewReplicationControl returns a control for the endpoint at url.
func NewReplicationControl(url string) *ReplicationControl {
	return &ReplicationControl{URL: url, Client: &http.Client{Timeout: 10 * time.Second}}
}

func (c *ReplicationControl) do(ctx context.Context, cmd *ReplicationCommand) (ReplicationStatus, error) {
	var st ReplicationStatus
	method, body := http.MethodGet, io.Reader(nil)
	if cmd != nil {
		b, err := json.Marshal(cmd)
		if err != nil {
			return st, err
		}
		method, body = http.MethodPost, bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, body)
	if err != nil {
		return st, err
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return st, fmt.Errorf("replication control %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("replication control %s: %d %s", c.URL, resp.StatusCode, bytes.TrimSpace(b))
	}
	return st, json.Unmarshal(b, &st)
}

// SetLag sets the lag of objects written from now on (each arrives after
// the lag plus up to half of it again).
func (c *ReplicationControl) SetLag(ctx context.Context, lag time.Duration) error {
	_, err := c.do(ctx, &ReplicationCommand{Lag: lag.String()})
	return err
}

// Hold keeps the keys matching keyPattern (a regular expression, RE2, on
// the object key) from arriving until Release, those pending now and those
// written later.
func (c *ReplicationControl) Hold(ctx context.Context, keyPattern string) error {
	_, err := c.do(ctx, &ReplicationCommand{Hold: keyPattern})
	return err
}

// Release drops every hold: held objects arrive as soon as their lag has
// passed.
func (c *ReplicationControl) Release(ctx context.Context) error {
	_, err := c.do(ctx, &ReplicationCommand{Release: true})
	return err
}

// Pause stops all copying (objects keep being queued); Resume restarts it.
func (c *ReplicationControl) Pause(ctx context.Context) error {
	_, err := c.do(ctx, &ReplicationCommand{Pause: true})
	return err
}

// Resume restarts copying after Pause.
func (c *ReplicationControl) Resume(ctx context.Context) error {
	_, err := c.do(ctx, &ReplicationCommand{Resume: true})
	return err
}

// Status reads the lag, holds, pause, pending objects and counts.
func (c *ReplicationControl) Status(ctx context.Context) (ReplicationStatus, error) {
	return c.do(ctx, nil)
}

// Pending lists the objects not yet replicated (held ones marked Held).
func (c *ReplicationControl) Pending(ctx context.Context) ([]PendingReplication, error) {
	st, err := c.do(ctx, nil)
	return st.Pending, err
}

// WaitIdle waits until nothing but held objects is pending (while paused,
// it waits for Resume or ctx).
func (c *ReplicationControl) WaitIdle(ctx context.Context) error {
	for {
		st, err := c.do(ctx, nil)
		if err != nil {
			return err
		}
		busy := 0
		for _, p := range st.Pending {
			if !p.Held {
				busy++
			}
		}
		if busy == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replication not idle (%d objects pending, paused %v): %w", busy, st.Paused, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
