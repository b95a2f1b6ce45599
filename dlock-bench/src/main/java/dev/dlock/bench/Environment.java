package dev.dlock.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * What the numbers were measured on: date, machine, JDK, load, server and library versions. Every probe
 * is best effort: an unreachable server reads "unavailable" rather than failing the run.
 */
final class Environment {
    private Environment() {}

    static Map<String, String> capture(Endpoints endpoints) {
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("date", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
        facts.put("cores", String.valueOf(Runtime.getRuntime().availableProcessors()));
        facts.put("memory", Math.round(totalMemoryGiB()) + " GiB");
        facts.put(
                "jdk",
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
                        + System.getProperty("java.vendor") + ")");
        facts.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        facts.put("load average at start", loadAverage());
        facts.put("redis", redisVersion(endpoints));
        facts.put("postgresql", sqlVersion(endpoints.postgresJdbcUrl(), "SHOW server_version"));
        facts.put("mariadb", sqlVersion(endpoints.mariadbJdbcUrl(), "SELECT VERSION()"));
        facts.put("zookeeper", "in-process " + org.apache.zookeeper.Version.getFullVersion());
        facts.put("redisson", artifact("org.redisson", "redisson"));
        facts.put(
                "spring-integration",
                packageVersion(org.springframework.integration.redis.util.RedisLockRegistry.class));
        facts.put("curator", artifact("org.apache.curator", "curator-recipes"));
        facts.put("lettuce", artifact("io.lettuce", "lettuce-core"));
        return facts;
    }

    /** The 1, 5 and 15 minute load averages, or "unknown" off Linux. */
    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static double totalMemoryGiB() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024.0 * 1024 * 1024);
        }
        return 0;
    }

    private static String redisVersion(Endpoints endpoints) {
        RedisClient client = RedisClient.create(
                RedisURI.create(endpoints.redis().host(), endpoints.redis().port()));
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            for (String line : c.sync().info("server").split("\r?\n")) {
                if (line.startsWith("redis_version:")) {
                    return line.substring("redis_version:".length());
                }
            }
            return "unknown";
        } catch (RuntimeException e) {
            return "unavailable";
        } finally {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private static String sqlVersion(String url, String query) {
        try (Connection c = DriverManager.getConnection(url);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(query)) {
            return r.next() ? r.getString(1) : "unknown";
        } catch (SQLException e) {
            return "unavailable";
        }
    }

    /** For jars without Maven metadata (Spring's are built with Gradle): the manifest's version. */
    private static String packageVersion(Class<?> type) {
        String version = type.getPackage().getImplementationVersion();
        return version != null ? version : "unknown";
    }

    private static String artifact(String group, String artifact) {
        String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = Environment.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
