package org.flinkstate.testjob;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;

/**
 * Reads a snapshot's _metadata as the Flink on the class path does when a
 * job restores it ({@link Checkpoints#loadCheckpointMetadata}, the call
 * {@code Checkpoints.loadAndValidateCheckpoint} makes: the magic number,
 * then {@code MetadataSerializers.getSerializer(version)}), for the test
 * bed's check that the provider refuses exactly the snapshots a Flink
 * version cannot read. The same class runs over the jars of every Flink
 * version the provider accepts (the method's signature is the same in
 * 1.20 and 2.x).
 *
 * <p>Usage: ReadMetadata FILE...; prints one line per file: "read FILE
 * checkpoint=ID operators=N" or "refused FILE CLASS: MESSAGE" (the
 * innermost cause).
 */
public final class ReadMetadata {
    public static void main(String[] args) {
        for (String file : args) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(file)))) {
                CheckpointMetadata m = Checkpoints.loadCheckpointMetadata(in, ReadMetadata.class.getClassLoader(), file);
                System.out.println("read " + file + " checkpoint=" + m.getCheckpointId() + " operators=" + m.getOperatorStates().size());
            } catch (Throwable e) {
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                System.out.println("refused " + file + " " + root.getClass().getName() + ": " + root.getMessage());
            }
        }
    }
}
