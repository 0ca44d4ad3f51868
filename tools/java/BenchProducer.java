// The Java KafkaProducer of benches/harness's producer idioms (W6): <n> records of <size>
// random bytes (a pool of 1,024 made before the clock starts), the key of record i none,
// "i" (a key per record) or "i mod k" (a key space of k), each sent with a delivery callback
// that counts it (the Java client's idiom for knowing each record was delivered), then
// flush() and close(). Prints {"progress": n} lines while it sends and last
//   {"result": {"wall", "cpu", "count", "rss_mb", "errors"}}
// where count is the records whose callback saw no error.
//   java -cp <classes>:<kafka jars> BenchProducer <bootstrap> <topic> <n> <size> <acks>
//       <compression> <none|unique|k> [<key=value producer config> ...]
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class BenchProducer {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1];
        long n = Long.parseLong(args[2]);
        int size = Integer.parseInt(args[3]);
        String keys = args[6];
        long space = keys.equals("none") || keys.equals("unique") ? 0 : Long.parseLong(keys);
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", args[4]);
        p.put("compression.type", args[5]);
        for (int i = 7; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            p.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        byte[][] pool = new byte[1024][];
        Random random = new Random(7);
        for (int i = 0; i < pool.length; i++) {
            pool[i] = new byte[size];
            random.nextBytes(pool[i]);
        }
        AtomicLong delivered = new AtomicLong(), errors = new AtomicLong();
        double cpu0 = BenchTool.cpuSeconds();
        long t0 = System.nanoTime(), lastProgress = 0;
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < n; i++) {
                byte[] key = null;
                if (keys.equals("unique")) {
                    key = Long.toString(i).getBytes(StandardCharsets.US_ASCII);
                } else if (space > 0) {
                    key = Long.toString(i % space).getBytes(StandardCharsets.US_ASCII);
                }
                producer.send(new ProducerRecord<>(topic, key, pool[(int) (i % pool.length)]),
                        (metadata, exception) -> {
                            if (exception == null) {
                                delivered.incrementAndGet();
                            } else {
                                errors.incrementAndGet();
                            }
                        });
                if ((i & 8191) == 0) {
                    long ms = System.nanoTime() / 1_000_000;
                    if (ms - lastProgress >= 500) {
                        BenchTool.emit("{\"progress\": " + i + "}");
                        lastProgress = ms;
                    }
                }
            }
            producer.flush();
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        BenchTool.emit(String.format(
                "{\"result\": {\"wall\": %.6f, \"cpu\": %.6f, \"count\": %d, \"rss_mb\": %.1f, "
                        + "\"errors\": %d}}",
                wall, BenchTool.cpuSeconds() - cpu0, delivered.get(), BenchTool.peakRssMb(),
                errors.get()));
    }
}
