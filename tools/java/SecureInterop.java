// The Java client (kafka-clients) on a secured listener, for tests that check ferrokafka and Java
// authenticate as the same user and share a consumer group. Every client config (bootstrap,
// security.protocol, sasl.*, ssl.*) comes from a properties file, so no secret is on the command
// line.
//   produce: writes <count> records, record i with key "<prefix>-k<i>", value "<prefix>-<i>",
//            partition i % (the topic's partitions); prints "produced <count>".
//   consume: joins <group> (subscribe, no auto commit, auto.offset.reset=earliest), prints the
//            group's committed offsets once partitions are assigned as
//            {"committed": {"<partition>": offset|null, ...}}, then reads until <count> records
//            arrived and prints each as {"partition": p, "offset": o, "key": "...", "value": "..."}
//            (keys and values are ASCII here), sorted by (partition, offset); commits and exits,
//            non-zero if fewer than <count> arrived within <timeout-ms> (default 30000).
// Any failure (a refused login, a timeout) exits 2 with "SecureInterop: <class>: <message>" on
// stderr.
// Run as a single-file source program: java -cp <kafka jars> SecureInterop.java
//     <properties-file> produce <topic> <count> <prefix>
//     <properties-file> consume <topic> <group> <count> [timeout-ms]
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class SecureInterop {
    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return b == null ? "null" : "\"" + new String(b, StandardCharsets.UTF_8) + "\"";
    }

    static void produce(Properties p, String topic, int count, String prefix) throws Exception {
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            int partitions = producer.partitionsFor(topic).size();
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(
                        topic, i % partitions, utf8(prefix + "-k" + i), utf8(prefix + "-" + i))));
            }
            for (java.util.concurrent.Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
        System.out.println("produced " + count);
    }

    static int consume(Properties p, String topic, String group, int count, long timeoutMs) {
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + timeoutMs;
            boolean shown = false;
            while (records.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    records.add(r);
                }
                Set<TopicPartition> assigned = consumer.assignment();
                if (!shown && !assigned.isEmpty()) {
                    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
                    Map<Integer, String> byPartition = new TreeMap<>();
                    for (TopicPartition tp : assigned) {
                        OffsetAndMetadata m = committed.get(tp);
                        byPartition.put(tp.partition(), m == null ? "null" : Long.toString(m.offset()));
                    }
                    StringBuilder line = new StringBuilder("{\"committed\": {");
                    for (Map.Entry<Integer, String> e : byPartition.entrySet()) {
                        if (line.charAt(line.length() - 1) != '{') {
                            line.append(", ");
                        }
                        line.append("\"").append(e.getKey()).append("\": ").append(e.getValue());
                    }
                    out.append(line.append("}}")).append('\n');
                    shown = true;
                }
            }
            consumer.commitSync();
        }
        records.sort(Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        for (ConsumerRecord<byte[], byte[]> r : records) {
            out.append("{\"partition\": ").append(r.partition()).append(", \"offset\": ")
                    .append(r.offset()).append(", \"key\": ").append(text(r.key()))
                    .append(", \"value\": ").append(text(r.value())).append("}\n");
        }
        System.out.print(out);
        System.out.flush();
        if (records.size() < count) {
            System.err.println("SecureInterop: read " + records.size() + " of " + count + " records");
            return 1;
        }
        return 0;
    }

    public static void main(String[] args) {
        try {
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(args[0])) {
                p.load(in);
            }
            String command = args[1], topic = args[2];
            if (command.equals("produce")) {
                produce(p, topic, Integer.parseInt(args[3]), args[4]);
                System.exit(0);
            } else if (command.equals("consume")) {
                long timeoutMs = args.length > 5 ? Long.parseLong(args[5]) : 30000L;
                System.exit(consume(p, topic, args[3], Integer.parseInt(args[4]), timeoutMs));
            }
            System.err.println("SecureInterop: unknown command " + command);
            System.exit(64);
        } catch (Exception e) {
            Throwable cause = e;
            while (cause.getCause() != null && cause instanceof java.util.concurrent.ExecutionException) {
                cause = cause.getCause();
            }
            System.err.println("SecureInterop: " + cause.getClass().getName() + ": " + cause.getMessage());
            System.exit(2);
        }
    }
}
