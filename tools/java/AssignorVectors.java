// Runs the Java client's partition assignors and ConsumerProtocol serializers (kafka-clients) over
// the cases in a JSON file and prints the results as JSON, for tests/integration/test_assignor_interop.py.
// Run as a single-file source program: java -cp <kafka jars> AssignorVectors.java <cases.json>
//
// Input: {"assign": [{"assignor": "range" | "roundrobin" | "sticky" | "cooperative-sticky",
//                     "topics": {"<topic>": <partition count>, ...},
//                     "members": [{"id": "<member id>", "instance": "<group.instance.id>" | null,
//                                  "subscription": "<hex of the encoded Subscription>"}, ...]}],
//         "subscriptions": [{"topics": [...], "user_data": "<hex>" | null, "owned": [["t", 0], ...],
//                            "generation": <int>, "rack": "<rack>" | null, "version": <int>}],
//         "assignments": [{"partitions": [["t", 0], ...], "user_data": "<hex>" | null,
//                          "version": <int>}],
//         "decode": ["<hex of a Subscription>", ...]}
// Output: {"assign": [{"<member id>": [["t", 0], ...]} | {"error": "..."}],
//          "subscriptions": ["<hex>", ...], "assignments": ["<hex>", ...],
//          "decode": [{"topics": [...], "user_data": ..., "owned": [...], "generation": ..., "rack": ...}
//                     | {"error": "..."}]}
// Members go into a HashMap in the order given, as the Java ConsumerCoordinator builds it from
// the JoinGroup response.
import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class AssignorVectors {
    static final ObjectMapper JSON = new ObjectMapper();

    static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String hex(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate();
        StringBuilder sb = new StringBuilder();
        while (b.hasRemaining()) {
            sb.append(String.format("%02x", b.get() & 0xff));
        }
        return sb.toString();
    }

    static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException(name);
        }
    }

    static List<TopicPartition> partitions(JsonNode pairs) {
        List<TopicPartition> out = new ArrayList<>();
        for (JsonNode pair : pairs) {
            out.add(new TopicPartition(pair.get(0).asText(), pair.get(1).asInt()));
        }
        return out;
    }

    static ArrayNode pairs(List<TopicPartition> tps) {
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition tp : tps) {
            out.add(JSON.createArrayNode().add(tp.topic()).add(tp.partition()));
        }
        return out;
    }

    static ByteBuffer bytesOrNull(JsonNode node) {
        return node == null || node.isNull() ? null : ByteBuffer.wrap(unhex(node.asText()));
    }

    static JsonNode assign(JsonNode c) {
        Node node = new Node(0, "localhost", 9092);
        Node[] replicas = new Node[] {node};
        List<PartitionInfo> infos = new ArrayList<>();
        c.get("topics").fields().forEachRemaining(e -> {
            for (int p = 0; p < e.getValue().asInt(); p++) {
                infos.add(new PartitionInfo(e.getKey(), p, node, replicas, replicas));
            }
        });
        Cluster cluster = new Cluster("cluster", List.of(node), infos, new HashSet<>(), new HashSet<>());
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (JsonNode m : c.get("members")) {
            Subscription s = ConsumerProtocol.deserializeSubscription(
                ByteBuffer.wrap(unhex(m.get("subscription").asText())));
            JsonNode instance = m.get("instance");
            s.setGroupInstanceId(instance == null || instance.isNull()
                ? Optional.empty() : Optional.of(instance.asText()));
            subscriptions.put(m.get("id").asText(), s);
        }
        ObjectNode out = JSON.createObjectNode();
        try {
            Map<String, Assignment> result = assignor(c.get("assignor").asText())
                .assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
            for (Map.Entry<String, Assignment> e : result.entrySet()) {
                out.set(e.getKey(), pairs(e.getValue().partitions()));
            }
        } catch (RuntimeException e) {
            out.removeAll();
            out.put("error", e.toString());
        }
        return out;
    }

    static String subscription(JsonNode c) {
        List<String> topics = new ArrayList<>();
        c.get("topics").forEach(t -> topics.add(t.asText()));
        JsonNode rack = c.get("rack");
        Subscription s = new Subscription(topics, bytesOrNull(c.get("user_data")),
            partitions(c.get("owned")), c.get("generation").asInt(),
            rack == null || rack.isNull() ? Optional.empty() : Optional.of(rack.asText()));
        return hex(ConsumerProtocol.serializeSubscription(s, (short) c.get("version").asInt()));
    }

    static String assignment(JsonNode c) {
        Assignment a = new Assignment(partitions(c.get("partitions")), bytesOrNull(c.get("user_data")));
        return hex(ConsumerProtocol.serializeAssignment(a, (short) c.get("version").asInt()));
    }

    static JsonNode decode(String hexBytes) {
        ObjectNode out = JSON.createObjectNode();
        try {
            Subscription s = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(unhex(hexBytes)));
            ArrayNode topics = out.putArray("topics");
            s.topics().forEach(topics::add);
            if (s.userData() == null) {
                out.putNull("user_data");
            } else {
                out.put("user_data", hex(s.userData()));
            }
            out.set("owned", pairs(s.ownedPartitions()));
            out.put("generation", s.generationId().orElse(-1));
            if (s.rackId().isPresent()) {
                out.put("rack", s.rackId().get());
            } else {
                out.putNull("rack");
            }
        } catch (RuntimeException e) {
            out.removeAll();
            out.put("error", e.toString());
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        JsonNode in = JSON.readTree(new File(args[0]));
        ObjectNode out = JSON.createObjectNode();
        ArrayNode assigned = out.putArray("assign");
        for (JsonNode c : in.path("assign")) {
            assigned.add(assign(c));
        }
        ArrayNode subs = out.putArray("subscriptions");
        for (JsonNode c : in.path("subscriptions")) {
            subs.add(subscription(c));
        }
        ArrayNode assignments = out.putArray("assignments");
        for (JsonNode c : in.path("assignments")) {
            assignments.add(assignment(c));
        }
        ArrayNode decoded = out.putArray("decode");
        for (JsonNode c : in.path("decode")) {
            decoded.add(decode(c.asText()));
        }
        System.out.println(JSON.writeValueAsString(out));
    }
}
