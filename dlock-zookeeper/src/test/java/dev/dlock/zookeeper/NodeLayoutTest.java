package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class NodeLayoutTest {
    private static final List<String> NAMES = List.of(
            "a",
            "a:b",
            "a/b",
            "a%2Fb",
            ".",
            "..",
            "...",
            ".a",
            "a.",
            "/",
            "%",
            "~",
            "with space",
            "ünï-名前-🔒",
            "\n\t",
            "A",
            "_",
            "-");

    @Test
    void everyNameBecomesOneValidDistinctSegment() {
        Set<String> segments = new HashSet<>();
        for (String name : NAMES) {
            String segment = NodeLayout.segment(name);
            assertThat(segment).doesNotContain("/").isNotIn(".", "..");
            PathUtils.validatePath("/" + segment);
            assertThat(segments.add(segment))
                    .as("'%s' maps to a segment of its own", name)
                    .isTrue();
            assertThat(NodeLayout.isComplete(segment)).isTrue();
            assertThat(NodeLayout.readablePart(segment)).isEqualTo(name);
        }
    }

    @Test
    void longNamesAreCutAndHashedWithoutCollisions() {
        String a = "é".repeat(512);
        String b = "é".repeat(511) + "e";
        String sa = NodeLayout.segment(a);
        String sb = NodeLayout.segment(b);
        assertThat(sa.length()).isLessThanOrEqualTo(NodeLayout.MAX_SEGMENT);
        assertThat(sa).isNotEqualTo(sb).contains("~");
        assertThat(NodeLayout.isComplete(sa)).isFalse();
        PathUtils.validatePath("/" + sa);
        assertThat(a).startsWith(NodeLayout.readablePart(sa).replace("\uFFFD", ""));
    }

    @Test
    void entryNamesCarryModeOwnerAndSequence() {
        LockKey key = new LockKey("ns", "x", Mode.WRITE);
        String owner = "123@host#abcdef0123";
        String created = NodeLayout.entryPathPrefix(key, owner) + "0000000042";
        String node = created.substring(created.lastIndexOf('/') + 1);
        NodeLayout.Entry e = NodeLayout.Entry.parse(node);
        assertThat(e.mode()).isEqualTo(Mode.WRITE);
        assertThat(e.owner()).isEqualTo(owner);
        assertThat(e.sequence()).isEqualTo(42);
        assertThat(NodeLayout.Entry.parse("holder")).isNull();
        assertThat(NodeLayout.Data.parse(NodeLayout.data(owner, 3, "a\nb")))
                .isEqualTo(new NodeLayout.Data(owner, 3, "a\nb", 0));
        assertThat(NodeLayout.resourcePath(key)).isEqualTo("/ns/rw/x");
        assertThat(NodeLayout.kindDir("..", LockKind.LOCK)).isEqualTo("/%2E./lock");
    }

    @Test
    void downgradeEntriesNameTheWriteEntryTheyCameFrom() {
        LockKey key = new LockKey("ns", "x", Mode.READ);
        String owner = "123@host-a#abcdef0123";
        String created = NodeLayout.downgradePathPrefix(key, owner, 7) + "0000000042";
        NodeLayout.Entry e = NodeLayout.Entry.parse(created.substring(created.lastIndexOf('/') + 1));
        assertThat(e.mode()).isEqualTo(Mode.READ);
        assertThat(e.owner()).isEqualTo(owner);
        assertThat(e.sequence()).isEqualTo(42);
        assertThat(e.downgrade()).isTrue();
        assertThat(e.downgradeOf()).isEqualTo(7);
        String plain = NodeLayout.entryPathPrefix(key, owner) + "0000000043";
        assertThat(NodeLayout.Entry.parse(plain.substring(plain.lastIndexOf('/') + 1))
                        .downgrade())
                .isFalse();
        assertThat(NodeLayout.Entry.parse("d-12-owner-0000000001")).isNull();
    }

    @Test
    void aDowngradesReadEntryKeepsItsWriteEntrysCzxidInItsData() {
        String owner = "123@host-a#abcdef0123";
        assertThat(NodeLayout.Data.parse(NodeLayout.data(owner, 1, "x\n1 2", 4711)))
                .isEqualTo(new NodeLayout.Data(owner, 1, "x\n1 2", 4711));
        assertThat(NodeLayout.Data.parse((owner + "\n1\nx").getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .as("data written before the write czxid was kept")
                .isEqualTo(new NodeLayout.Data(owner, 1, "x", 0));
        assertThat(NodeLayout.Data.parse((owner + "\n1 w\nx").getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isNull();
        assertThat(dev.dlock.spi.OrderTokens.ofDowngradedRead(4711))
                .as("above the write's grant and its 14 passes, below the next czxid's token")
                .isEqualTo(dev.dlock.spi.OrderTokens.ofCreation(4711) + 15)
                .isLessThan(dev.dlock.spi.OrderTokens.ofCreation(4712));
    }

    @Test
    void guardsAreSiblingsNoNameCanBe() {
        String holder = NodeLayout.resourcePath(new LockKey("ns", "a!b", Mode.EXCLUSIVE));
        assertThat(holder).isEqualTo("/ns/lock/a%21b");
        String guard = NodeLayout.guardPath(holder, "1@h#f");
        assertThat(guard).isEqualTo("/ns/lock/a%21b!1%40h%23f");
        PathUtils.validatePath(guard);
        assertThat(NodeLayout.isGuard(guard.substring(guard.lastIndexOf('/') + 1)))
                .isTrue();
        assertThat(NodeLayout.isGuard("a%21b")).isFalse();
    }
}
