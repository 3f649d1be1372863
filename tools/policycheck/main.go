// Command policycheck reads {"policy": <IAM policy JSON>, "requests": [...]}
// on stdin and prints one JSON boolean per request: whether the policy
// allows it. A request is {"action", "bucket", "object", "conditions"},
// conditions keyed as MinIO names them (e.g. "prefix" for s3:prefix).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/minio/pkg/v3/policy"
)

type request struct {
	Action     string              `json:"action"`
	Bucket     string              `json:"bucket"`
	Object     string              `json:"object"`
	Conditions map[string][]string `json:"conditions"`
}

func main() {
	var in struct {
		Policy   json.RawMessage `json:"policy"`
		Requests []request       `json:"requests"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail(err)
	}
	p, err := policy.ParseConfig(bytes.NewReader(in.Policy))
	if err != nil {
		fail(fmt.Errorf("parsing policy: %w", err))
	}
	out := make([]bool, len(in.Requests))
	for i, r := range in.Requests {
		cond := r.Conditions
		if cond == nil {
			cond = map[string][]string{}
		}
		out[i] = p.IsAllowed(policy.Args{
			AccountName:     "flink",
			Action:          policy.Action(r.Action),
			BucketName:      r.Bucket,
			ObjectName:      r.Object,
			ConditionValues: cond,
		})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "policycheck:", err)
	os.Exit(1)
}
