// A Java KafkaConsumer member of a consumer group, for tests where Java and ferrokafka consumers
// share one group. It subscribes to <topic> with the given group protocol and assignor: with
// "classic" a client-side assignor (range, roundrobin, sticky, cooperative-sticky), with
// "consumer" (KIP-848) a server-side one named by group.remote.assignor (uniform, range).
// It polls until <seconds> have passed, and prints its assignment as a JSON line every time it
// changes:
//   {"assignment": [[topic, partition], ...]}
// then closes (leaving the group).
// Run as a single-file source program: java -cp <kafka jars> GroupMember.java
//     <bootstrap> <group> <topic> <assignor> <protocol> <seconds>
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupMember {
    static String assignorClass(String name) {
        switch (name) {
            case "range": return "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin": return "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            case "sticky": return "org.apache.kafka.clients.consumer.StickyAssignor";
            case "cooperative-sticky":
                return "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    public static void main(String[] args) {
        String bootstrap = args[0], group = args[1], topic = args[2];
        String assignor = args[3], protocol = args[4];
        long seconds = Long.parseLong(args[5]);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass(assignor));
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        } else {
            p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor);
        }
        long deadline = System.currentTimeMillis() + seconds * 1000;
        String last = null;
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(Collections.singletonList(topic));
            while (System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(100));
                Set<TopicPartition> assigned = consumer.assignment();
                List<String> items = new ArrayList<>();
                for (TopicPartition tp : assigned) {
                    items.add("[\"" + tp.topic() + "\", " + tp.partition() + "]");
                }
                Collections.sort(items);
                String line = "{\"assignment\": [" + String.join(", ", items) + "]}";
                if (!line.equals(last)) {
                    System.out.println(line);
                    System.out.flush();
                    last = line;
                }
            }
        }
    }
}
