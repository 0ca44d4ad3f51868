// A Java KafkaShareConsumer member of a share group (KIP-932), for tests where Java and
// ferrokafka members share one group, and for the share-group benchmark. It subscribes to
// <topic>, polls with implicit acknowledgement and commitSync() after every poll that returned
// records, and stops once <count> records were received (0: no count) or no record came for
// <idle-ms>. Each record is printed as a line "partition offset deliveryCount" unless <quiet>
// is "quiet"; the last line is a JSON summary:
//   {"records": N, "first_ms": T0, "last_ms": T1}
// (wall-clock milliseconds of the first and the last record received).
// Run as a single-file source program: java -cp <kafka jars> ShareMember.java
//     <bootstrap> <group> <topic> <count> <idle-ms> [quiet] [nocommit]
import java.time.Duration;
import java.util.Collections;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class ShareMember {
    public static void main(String[] args) {
        String bootstrap = args[0], group = args[1], topic = args[2];
        long count = Long.parseLong(args[3]);
        long idleMs = Long.parseLong(args[4]);
        java.util.List<String> flags = java.util.Arrays.asList(args).subList(5, args.length);
        boolean quiet = flags.contains("quiet");
        boolean commit = !flags.contains("nocommit");
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        long received = 0, first = 0, last = 0;
        long lastSeen = System.currentTimeMillis();
        StringBuilder out = new StringBuilder();
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(Collections.singletonList(topic));
            while ((count == 0 || received < count)
                    && System.currentTimeMillis() - lastSeen < idleMs) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                long now = System.currentTimeMillis();
                if (first == 0) {
                    first = now;
                }
                last = lastSeen = now;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    received++;
                    if (!quiet) {
                        out.setLength(0);
                        out.append(r.partition()).append(' ').append(r.offset()).append(' ')
                            .append(r.deliveryCount().orElse((short) 0));
                        System.out.println(out);
                    }
                }
                if (commit) {
                    consumer.commitSync();
                }
            }
        }
        System.out.println("{\"records\": " + received + ", \"first_ms\": " + first
            + ", \"last_ms\": " + last + "}");
    }
}
