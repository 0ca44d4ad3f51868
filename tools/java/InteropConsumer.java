// Reads a topic from the beginning with the Java consumer (kafka-clients) and prints every record
// as one JSON line, for tests that check what ferrokafka's producer wrote:
//   {"partition": p, "offset": o, "timestamp": t, "timestamp_type": 0|1,
//    "key": base64|null, "value": base64|null, "headers": [[base64(utf8 key), base64|null], ...]}
// Lines are sorted by (partition, offset). Exits non-zero if fewer than <count> records arrive
// within <timeout-ms> (default 30000).
// Run as a single-file source program: java -cp <kafka jars> InteropConsumer.java
//     <bootstrap> <topic> <count> [timeout-ms]
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class InteropConsumer {
    static String b64(byte[] data) {
        return data == null ? "null" : "\"" + Base64.getEncoder().encodeToString(data) + "\"";
    }

    static String line(ConsumerRecord<byte[], byte[]> r) {
        StringBuilder headers = new StringBuilder("[");
        for (Header h : r.headers()) {
            if (headers.length() > 1) {
                headers.append(", ");
            }
            headers.append("[").append(b64(h.key().getBytes(StandardCharsets.UTF_8)))
                    .append(", ").append(b64(h.value())).append("]");
        }
        headers.append("]");
        return "{\"partition\": " + r.partition() + ", \"offset\": " + r.offset()
                + ", \"timestamp\": " + r.timestamp()
                + ", \"timestamp_type\": " + r.timestampType().id
                + ", \"key\": " + b64(r.key()) + ", \"value\": " + b64(r.value())
                + ", \"headers\": " + headers + "}";
    }

    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1];
        int count = Integer.parseInt(args[2]);
        long timeoutMs = args.length > 3 ? Long.parseLong(args[3]) : 30000L;
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofMillis(timeoutMs))) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (records.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    records.add(r);
                }
            }
        }
        records.sort(Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        StringBuilder out = new StringBuilder();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            out.append(line(r)).append('\n');
        }
        System.out.print(out);
        System.out.flush();
        if (records.size() < count) {
            System.err.println("InteropConsumer: read " + records.size() + " of " + count + " records");
            System.exit(1);
        }
    }
}
