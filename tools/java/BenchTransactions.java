// The Java clients of benches/harness's W12, transactions (acks=all, other settings the
// clients' defaults):
//   small: <n> transactions of <per> keyless records of <size> random bytes (a pool of 1,024
//     made before the clock starts), one after the other: beginTransaction(), send() each
//     (futures dropped: commitTransaction() flushes and throws if a record failed),
//     commitTransaction();
//   ctp: consume-transform-produce: a read_committed KafkaConsumer in group <group> reads
//     <input> from the earliest offsets, poll() returning up to <batch> records
//     (max.poll.records); each batch goes to <output> with the value upper-cased and the key
//     kept, in one transaction with sendOffsetsToTransaction(next offsets,
//     consumer.groupMetadata()), until <expected> records are through.
// The clock runs from the first beginTransaction() (small) or the first batch's arrival (ctp)
// to the last commit; setup_s is the time from construction to then. Prints {"progress": n}
// lines (transactions committed) and last
//   {"result": {"wall", "cpu", "count", "transactions", "setup_s", "rss_mb"}}
//   java -cp <classes>:<kafka jars> BenchTransactions small <bootstrap> <txn id> <topic> <n>
//       <per> <size>
//   java -cp <classes>:<kafka jars> BenchTransactions ctp <bootstrap> <txn id> <input>
//       <output> <group> <expected> <batch>
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class BenchTransactions {
    private final long made = System.nanoTime();
    private long t0 = -1, transactions = 0, count = 0, lastProgress = 0;
    private double cpu0;

    private void start() {
        if (t0 < 0) {
            t0 = System.nanoTime();
            cpu0 = BenchTool.cpuSeconds();
        }
    }

    private void committed(long records) {
        transactions++;
        count += records;
        long ms = System.nanoTime() / 1_000_000;
        if (ms - lastProgress >= 500) {
            BenchTool.emit("{\"progress\": " + transactions + "}");
            lastProgress = ms;
        }
    }

    private String result() {
        return String.format(
                "{\"result\": {\"wall\": %.6f, \"cpu\": %.6f, \"count\": %d, \"transactions\": %d,"
                        + " \"setup_s\": %.6f, \"rss_mb\": %.1f}}",
                (System.nanoTime() - t0) / 1e9, BenchTool.cpuSeconds() - cpu0, count,
                transactions, (t0 - made) / 1e9, BenchTool.peakRssMb());
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", txnId);
        p.put("acks", "all");
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private void small(String[] args) {
        String topic = args[3];
        long n = Long.parseLong(args[4]);
        int per = Integer.parseInt(args[5]), size = Integer.parseInt(args[6]);
        byte[][] pool = new byte[1024][];
        Random random = new Random(7);
        for (int i = 0; i < pool.length; i++) {
            pool[i] = new byte[size];
            random.nextBytes(pool[i]);
        }
        String out;
        try (KafkaProducer<byte[], byte[]> producer = producer(args[1], args[2])) {
            producer.initTransactions();
            start();
            for (long t = 0; t < n; t++) {
                producer.beginTransaction();
                for (int i = 0; i < per; i++) {
                    byte[] value = pool[(int) ((t * per + i) % pool.length)];
                    producer.send(new ProducerRecord<>(topic, null, value));
                }
                producer.commitTransaction();
                committed(per);
            }
            out = result();
        }
        BenchTool.emit(out);
    }

    private static byte[] upper(byte[] value) {
        byte[] out = value.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] >= 'a' && out[i] <= 'z') {
                out[i] -= 'a' - 'A';
            }
        }
        return out;
    }

    private void ctp(String[] args) {
        String input = args[3], output = args[4], group = args[5];
        long expected = Long.parseLong(args[6]);
        Properties c = new Properties();
        c.put("bootstrap.servers", args[1]);
        c.put("group.id", group);
        c.put("isolation.level", "read_committed");
        c.put("enable.auto.commit", "false");
        c.put("auto.offset.reset", "earliest");
        c.put("max.poll.records", args[7]);
        String out;
        try (KafkaProducer<byte[], byte[]> producer = producer(args[1], args[2]);
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                        c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            producer.initTransactions();
            consumer.subscribe(Collections.singletonList(input));
            while (count < expected) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                start();
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (TopicPartition tp : records.partitions()) {
                    List<ConsumerRecord<byte[], byte[]>> part = records.records(tp);
                    for (ConsumerRecord<byte[], byte[]> r : part) {
                        producer.send(new ProducerRecord<>(output, r.key(), upper(r.value())));
                    }
                    offsets.put(tp, new OffsetAndMetadata(part.get(part.size() - 1).offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
                committed(records.count());
            }
            out = result();
        }
        BenchTool.emit(out);
    }

    public static void main(String[] args) {
        BenchTransactions bench = new BenchTransactions();
        if (args[0].equals("small")) {
            bench.small(args);
        } else if (args[0].equals("ctp")) {
            bench.ctp(args);
        } else {
            throw new IllegalArgumentException("mode small or ctp, not " + args[0]);
        }
    }
}
