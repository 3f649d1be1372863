// Package awsfront is the test bed's AWS front: the proxy every client
// (terraform, the tests, real Flink) reaches the AWS emulator through (kumo,
// or LocalStack). It stands in for what the emulators do not do as AWS does:
// S3's key space for keys ending in "/" (kumo), bucket regions and requests
// signed for another region, S3 replication between buckets, delete markers
// and paged version listings (kumo), and the STS and S3 host names over TLS
// that AWS SDK for Java v1 cannot be pointed away from. It logs every S3
// request (S3Request) so tests can judge what was asked of S3 against a
// role's policy (S3Request.PolicyRequests), and serves the control of its
// replication (ReplicationControl).
//
// cmd/awsproxy links only this package; the test bed (package testbed)
// builds that command and starts it as one of its processes.
package awsfront
