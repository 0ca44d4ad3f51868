// Runs a Kafka tool's main() (ConsumerPerformance, ProducerPerformance) in this JVM and prints
// the wall and process CPU time of that call and the JVM's peak RSS as the last line, for
// benches/harness:   {"result": {"wall": s, "cpu": s, "rss_mb": MB}}
// The tool's own output comes first, unchanged. Also holds the helpers the other Bench*
// programs share (compiled together by the harness).
//   java -cp <classes>:<kafka-tools jars> BenchTool <tool class> <tool args...>
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;

public class BenchTool {
    static double cpuSeconds() {
        return ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    }

    static long nowMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    // This process's peak RSS in MB (VmHWM of /proc/self/status).
    static double peakRssMb() {
        try {
            Path status = Paths.get("/proc/self/status");
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmHWM in /proc/self/status");
    }

    static void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String[] toolArgs = Arrays.copyOfRange(args, 1, args.length);
        double cpu0 = cpuSeconds();
        long t0 = System.nanoTime();
        Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object) toolArgs);
        double wall = (System.nanoTime() - t0) / 1e9;
        emit(String.format("{\"result\": {\"wall\": %.6f, \"cpu\": %.6f, \"rss_mb\": %.1f}}",
                wall, cpuSeconds() - cpu0, peakRssMb()));
    }
}
