package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MetadataMagic starts every checkpoint and savepoint _metadata file:
// Checkpoints.HEADER_MAGIC_NUMBER (flink-runtime
// org.apache.flink.runtime.checkpoint.Checkpoints, 0x4960672d), written
// by Checkpoints.storeCheckpointMetadata as a big-endian int
// (DataOutputStream.writeInt), followed by the serializer's version.
const MetadataMagic = 0x4960672d

// MetadataVersions are the metadata format versions Flink 2.2 can read
// (MetadataSerializers registers MetadataV1Serializer to
// MetadataV6Serializer); Flink 2.2 writes version 6
// (Checkpoints.storeCheckpointMetadata uses MetadataV6Serializer).
var MetadataVersions = []int32{1, 2, 3, 4, 5, 6}

// MetadataHeader is the fixed start of a _metadata file.
type MetadataHeader struct {
	Version int32
}

// ReadMetadataHeader reads and checks the start of a _metadata file: the
// magic number, then a version Flink knows. It fails closed: anything else
// is an error naming what was found.
func ReadMetadataHeader(r io.Reader) (MetadataHeader, error) {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return MetadataHeader{}, fmt.Errorf("not checkpoint metadata: shorter than its 8-byte header (magic number and version)")
		}
		return MetadataHeader{}, err
	}
	if magic := binary.BigEndian.Uint32(head[:4]); magic != MetadataMagic {
		return MetadataHeader{}, fmt.Errorf("not checkpoint metadata: it starts with 0x%08x, not Flink's magic number 0x%08x", magic, uint32(MetadataMagic))
	}
	v := int32(binary.BigEndian.Uint32(head[4:]))
	for _, known := range MetadataVersions {
		if v == known {
			return MetadataHeader{Version: v}, nil
		}
	}
	return MetadataHeader{}, fmt.Errorf("checkpoint metadata version %d is unknown (Flink 2.2 reads versions 1 to 6)", v)
}
