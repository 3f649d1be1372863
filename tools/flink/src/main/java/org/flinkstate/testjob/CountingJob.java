package org.flinkstate.testjob;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The test bed's stateful job. Keyed counters prove state continuity: every
 * event increments its key's counter and prints
 * {@code flinkstate-testjob key=K count=C seq=S}. A job restored from a
 * checkpoint or savepoint continues each key's count (and the source's
 * sequence) where the snapshot left it; a job that lost its state starts at
 * count=1. A bounded padding map per key makes RocksDB write SST files, so an
 * incremental checkpoint references files under shared/.
 *
 * <p>The job sets nothing about checkpoints in code: the interval, storage and
 * backend come from the configuration the provider wrote.
 */
public final class CountingJob {
    static final int KEYS = 4;
    static final int PADDED_ENTRIES = 64;
    static final int PADDING_BYTES = 1024;

    public static void main(String[] args) throws Exception {
        double rate = 20;
        // --count-uid gives the counter another uid: new code whose stateful
        // operator Flink cannot map the snapshot's state to.
        String countUid = "count";
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--rate")) {
                rate = Double.parseDouble(args[i + 1]);
            }
            if (args[i].equals("--count-uid")) {
                countUid = args[i + 1];
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        seq -> seq, Long.MAX_VALUE, RateLimiterStrategy.perSecond(rate), Types.LONG);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence")
                .uid("sequence")
                .keyBy(seq -> seq % KEYS)
                .process(new Count())
                .uid(countUid)
                .print()
                .uid("print");
        env.execute("flinkstate-testjob");
    }

    static final class Count extends KeyedProcessFunction<Long, Long, String> {
        private transient ValueState<Long> count;
        private transient MapState<Integer, String> padding;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            padding =
                    getRuntimeContext()
                            .getMapState(new MapStateDescriptor<>("padding", Types.INT, Types.STRING));
        }

        @Override
        public void processElement(Long seq, Context ctx, Collector<String> out) throws Exception {
            Long c = count.value();
            long next = (c == null ? 0 : c) + 1;
            count.update(next);
            StringBuilder pad = new StringBuilder(PADDING_BYTES);
            while (pad.length() < PADDING_BYTES) {
                pad.append(Long.toHexString(seq * 0x9E3779B97F4A7C15L + pad.length()));
            }
            padding.put((int) (next % PADDED_ENTRIES), pad.toString());
            out.collect("flinkstate-testjob key=" + ctx.getCurrentKey() + " count=" + next + " seq=" + seq);
        }
    }
}
