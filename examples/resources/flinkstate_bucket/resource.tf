resource "flinkstate_bucket" "state" {
  bucket = "acme-flink-state"

  # Optional: SSE-KMS with an S3 bucket key instead of SSE-S3.
  # kms_key_arn = aws_kms_key.flink.arn

  versioning                         = true
  noncurrent_version_expiration_days = 7

  tags = {
    team = "data-platform"
  }
}
