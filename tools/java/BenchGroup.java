// W7 of benches/harness for the Java KafkaConsumer: group timings, every member a thread
// polling every 100 ms. Member 1 starts alone in a new group: the time from its construction to
// its first record. Members 2 and 3 join and the group settles; then member 4 starts: the time
// until the four hold disjoint, balanced assignments covering every partition. Prints
//   {"result": {"first_record_s": s, "settle_s": s}}
//   java -cp <classes>:<kafka jars> BenchGroup <bootstrap> <topic> <partitions> <group>
//       <classic|consumer>
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class BenchGroup {
    static final Map<Integer, Set<Integer>> assigned = new ConcurrentHashMap<>();
    static final Map<Integer, Long> firstRecord = new ConcurrentHashMap<>();
    static volatile boolean stop = false;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[3], protocol = args[4];
        int partitions = Integer.parseInt(args[2]);
        Thread[] members = new Thread[4];
        long t0 = System.nanoTime();
        members[0] = start(0, bootstrap, topic, group, protocol);
        await(() -> firstRecord.containsKey(0), "a first record");
        double first = (firstRecord.get(0) - t0) / 1e9;
        members[1] = start(1, bootstrap, topic, group, protocol);
        members[2] = start(2, bootstrap, topic, group, protocol);
        await(() -> settled(3, partitions), "three members to settle");
        long t1 = System.nanoTime();
        members[3] = start(3, bootstrap, topic, group, protocol);
        await(() -> settled(4, partitions), "four members to settle");
        double settle = (System.nanoTime() - t1) / 1e9;
        stop = true;
        for (Thread t : members) t.join();
        BenchTool.emit(String.format(
                "{\"result\": {\"first_record_s\": %.6f, \"settle_s\": %.6f, \"rss_mb\": %.1f}}",
                first, settle, BenchTool.peakRssMb()));
    }

    static Thread start(int id, String bootstrap, String topic, String group, String protocol) {
        Thread t = new Thread(() -> {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("group.id", group);
            p.put("group.protocol", protocol);
            p.put("auto.offset.reset", "earliest");
            p.put("enable.auto.commit", "false");
            ByteArrayDeserializer d = new ByteArrayDeserializer();
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, d, d)) {
                c.subscribe(Collections.singletonList(topic));
                while (!stop) {
                    if (!c.poll(Duration.ofMillis(100)).isEmpty()) {
                        firstRecord.putIfAbsent(id, System.nanoTime());
                    }
                    Set<Integer> mine = new HashSet<>();
                    for (TopicPartition tp : c.assignment()) mine.add(tp.partition());
                    assigned.put(id, mine);
                }
            }
        });
        t.setDaemon(true); // a failed wait ends the JVM
        t.start();
        return t;
    }

    // n members, disjoint, covering every partition, sizes differing by at most one.
    static boolean settled(int n, int partitions) {
        if (assigned.size() != n) return false;
        Set<Integer> union = new HashSet<>();
        int total = 0;
        for (Set<Integer> s : assigned.values()) {
            if (s.size() < partitions / n || s.size() > (partitions + n - 1) / n) return false;
            union.addAll(s);
            total += s.size();
        }
        return total == partitions && union.size() == partitions;
    }

    static void await(java.util.function.BooleanSupplier done, String what) throws Exception {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no " + what);
            Thread.sleep(10);
        }
    }
}
