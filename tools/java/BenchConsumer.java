// The Java KafkaConsumer client of benches/harness (check.crcs=true, assign mode, from the
// beginning). Reads <expected> records of <topic> and prints JSON lines: {"progress": n} while
// it reads, {"ready": true} after its first poll (latency mode), and last
//   {"result": {"wall", "cpu", "count", "bytes", "checksum", "rss_mb"[, "lat_us": [p50, p99,
//   p99.9, max]]}}
// throughput: checksum = 31 * sum(offsets) + sum(value lengths), mod 2^48.
// latency: values are [flag u8][seq i64][produced-at epoch us i64][padding] (big-endian); only
// flag 1 records count, checksum = 31 * sum(seq) + sum(value lengths), and each record's
// latency is the time its poll returned minus its produced-at time.
//   java -cp <classes>:<kafka jars> BenchConsumer <throughput|latency> <bootstrap> <topic>
//       <partitions> <expected> [<properties file>]
// The optional properties file adds client configs (a TLS listener's security.protocol and
// trust store).
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class BenchConsumer {
    public static void main(String[] args) {
        boolean latency = args[0].equals("latency");
        String bootstrap = args[1], topic = args[2];
        int partitions = Integer.parseInt(args[3]);
        long expected = Long.parseLong(args[4]);
        long mask = (1L << 48) - 1;
        long count = 0, bytes = 0, checksum = 0, lastProgress = 0;
        long[] lat = new long[latency ? (int) expected : 0];
        double cpu0 = BenchTool.cpuSeconds();
        long t0 = System.nanoTime();
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("check.crcs", "true");
        if (args.length > 5) {
            try (java.io.FileReader extra = new java.io.FileReader(args[5])) {
                p.load(extra);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            consumer.assign(tps);
            boolean first = true;
            while (count < expected) {
                Duration timeout = Duration.ofMillis(latency ? 100 : 1000);
                ConsumerRecords<byte[], byte[]> records = consumer.poll(timeout);
                long now = latency ? BenchTool.nowMicros() : 0;
                long sum = 0, nbytes = 0;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    byte[] v = r.value();
                    if (!latency) {
                        sum += r.offset();
                    } else {
                        ByteBuffer b = ByteBuffer.wrap(v);
                        if (b.get() != 1) continue;
                        sum += b.getLong();
                        if (count < expected) lat[(int) count] = now - b.getLong();
                    }
                    count++;
                    nbytes += v.length;
                }
                bytes += nbytes;
                checksum = (checksum + sum * 31 + nbytes) & mask;
                if (first && latency) BenchTool.emit("{\"ready\": true}");
                first = false;
                long ms = System.nanoTime() / 1_000_000;
                if (ms - lastProgress >= 500) {
                    BenchTool.emit("{\"progress\": " + count + "}");
                    lastProgress = ms;
                }
            }
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        String extra = "";
        if (latency) {
            Arrays.sort(lat);
            extra = String.format(", \"lat_us\": [%d, %d, %d, %d]",
                    rank(lat, 0.5), rank(lat, 0.99), rank(lat, 0.999), lat[lat.length - 1]);
        }
        BenchTool.emit(String.format(
                "{\"result\": {\"wall\": %.6f, \"cpu\": %.6f, \"count\": %d, \"bytes\": %d, "
                        + "\"checksum\": %d, \"rss_mb\": %.1f%s}}",
                wall, BenchTool.cpuSeconds() - cpu0, count, bytes, checksum,
                BenchTool.peakRssMb(), extra));
    }

    // Nearest rank: the smallest value with at least q of the samples at or below it.
    static long rank(long[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
