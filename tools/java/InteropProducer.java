// Writes the interop dataset with the Java producer (kafka-clients): record i has key "key-i"
// (null when i % 5 == 4), value "value-i-" + 'x' * (i % 200) (null when i % 7 == 6), timestamp
// 1700000000000 + i, header ("idx", "i") and, when i % 3 == 0, ("nullh", null).
// Run as a single-file source program: java -cp <kafka jars> InteropProducer.java
//     <bootstrap> <topic> <compression> <count> [transactional-id]
import java.nio.charset.StandardCharsets;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class InteropProducer {
    static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], codec = args[2];
        int count = Integer.parseInt(args[3]);
        String txId = args.length > 4 ? args[4] : null;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "8192");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (txId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txId);
        }
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            if (txId != null) {
                producer.initTransactions();
                producer.beginTransaction();
            }
            for (int i = 0; i < count; i++) {
                String key = i % 5 == 4 ? null : "key-" + i;
                String value = i % 7 == 6 ? null : "value-" + i + "-" + "x".repeat(i % 200);
                ProducerRecord<byte[], byte[]> r =
                        new ProducerRecord<>(topic, 0, 1700000000000L + i, utf8(key), utf8(value));
                r.headers().add("idx", utf8(Integer.toString(i)));
                if (i % 3 == 0) {
                    r.headers().add("nullh", null);
                }
                producer.send(r);
            }
            if (txId != null) {
                producer.commitTransaction();
            }
            producer.flush();
        }
    }
}
