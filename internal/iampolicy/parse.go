package iampolicy

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Decode turns a policy document as IAM returns it (URL-encoded JSON) into JSON.
func Decode(doc string) string {
	if strings.HasPrefix(strings.TrimSpace(doc), "{") {
		return doc
	}
	if d, err := url.QueryUnescape(doc); err == nil {
		return d
	}
	return doc
}

// Trust is what a trust policy written by this package grants.
type Trust struct {
	Kind            string // "irsa" or "pod_identity"; "" when not recognised
	OIDCProviderARN string
	Namespace       string
	ServiceAccount  string
	ClusterName     string
}

// looseStatement accepts IAM's single-string or array spellings.
type looseStatement struct {
	Sid       string                    `json:"Sid"`
	Effect    string                    `json:"Effect"`
	Principal map[string]any            `json:"Principal"`
	Action    any                       `json:"Action"`
	Resource  any                       `json:"Resource"`
	Condition map[string]map[string]any `json:"Condition"`
}

func parseStatements(doc string) []looseStatement {
	var d struct {
		Statement json.RawMessage `json:"Statement"`
	}
	if json.Unmarshal([]byte(Decode(doc)), &d) != nil {
		return nil
	}
	var many []looseStatement
	if json.Unmarshal(d.Statement, &many) == nil {
		return many
	}
	var one looseStatement
	if json.Unmarshal(d.Statement, &one) == nil {
		return []looseStatement{one}
	}
	return nil
}

func strs(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func first(v any) string {
	if s := strs(v); len(s) > 0 {
		return s[0]
	}
	return ""
}

// ParseTrust recognises the trust policies IRSATrust and PodIdentityTrust write.
func ParseTrust(doc string) Trust {
	for _, st := range parseStatements(doc) {
		if st.Effect != "Allow" {
			continue
		}
		if fed := first(st.Principal["Federated"]); fed != "" {
			if issuer, ok := oidcIssuer(fed); ok {
				sub := first(st.Condition["StringEquals"][issuer+":sub"])
				if parts := strings.Split(sub, ":"); len(parts) == 4 && parts[0] == "system" && parts[1] == "serviceaccount" {
					return Trust{Kind: "irsa", OIDCProviderARN: fed, Namespace: parts[2], ServiceAccount: parts[3]}
				}
			}
		}
		if first(st.Principal["Service"]) == PodIdentityPrincipal {
			eq := st.Condition["StringEquals"]
			return Trust{
				Kind:           "pod_identity",
				Namespace:      first(eq["aws:RequestTag/"+TagNamespace]),
				ServiceAccount: first(eq["aws:RequestTag/"+TagServiceAccount]),
				ClusterName:    first(eq["aws:RequestTag/"+TagClusterName]),
			}
		}
	}
	return Trust{}
}

// ParseGrants recovers the state stores and KMS keys from a permission
// policy written by Permissions, in the order they appear.
func ParseGrants(doc string) (stores []string, kmsKeys []string) {
	for _, st := range parseStatements(doc) {
		if st.Effect != "Allow" {
			continue
		}
		actions := strs(st.Action)
		switch {
		case len(actions) > 0 && actions[0] == "s3:ListBucket" || strings.HasPrefix(st.Sid, "ListStateStore"):
			bucket, ok := bucketOfARN(first(st.Resource))
			prefixes := strs(st.Condition["StringLike"]["s3:prefix"])
			if !ok || len(prefixes) == 0 {
				continue
			}
			sort.Strings(prefixes) // p/ sorts before p/* (and a bare p, in older policies, before both)
			stores = append(stores, bucket+"/"+strings.TrimSuffix(prefixes[0], "/"))
		case strings.HasPrefix(st.Sid, "StateKMS"):
			kmsKeys = append(kmsKeys, strs(st.Resource)...)
		}
	}
	return stores, kmsKeys
}
