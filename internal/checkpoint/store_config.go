package checkpoint

// StoreOf is the checkpoint directory of a Flink configuration as bucket
// and key prefix: execution.checkpointing.dir, or its deprecated key
// state.checkpoints.dir (CheckpointingOptions.CHECKPOINTS_DIRECTORY, Flink
// 2.2.1, with its deprecated key). ok is false without an s3:// one.
func StoreOf(cfg map[string]string) (bucket, dir string, ok bool) {
	uri := cfg["execution.checkpointing.dir"]
	if uri == "" {
		uri = cfg["state.checkpoints.dir"]
	}
	if uri == "" {
		return "", "", false
	}
	bucket, dir, err := ParseS3URI(uri)
	return bucket, dir, err == nil
}
