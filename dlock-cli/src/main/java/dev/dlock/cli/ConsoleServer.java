package dev.dlock.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

/**
 * The console's HTTP side on the JDK's built-in server: the page ({@code /}, {@code /console.js}, {@code
 * /console.css}, from the jar), {@code GET /api/locks}, {@code GET /api/events?since=N}, and {@code POST
 * /api/release?name=N}, which is refused with 403 unless the console was started with {@code
 * --allow-release}.
 *
 * <p>Security: the release call also needs the header {@code X-Dlock-Console: release}, which a page of
 * another site cannot send without a CORS preflight that this server never allows, so a web page cannot
 * release locks through a browser on the console's machine. While bound to a loopback address, requests
 * are refused (403) unless their {@code Host} is the bound address or a loopback name ({@code 127.0.0.1},
 * {@code localhost}, {@code [::1]}) with the console's port, so a DNS-rebinding page cannot read the API.
 * The page's Content-Security-Policy allows only its own scripts and styles.
 *
 * <p>Concurrency: two daemon handler threads; the watcher synchronizes itself. Failure modes: a port in
 * use fails {@link #start} with {@link java.net.BindException}; a failed release answers 502 with the
 * store's message.
 */
final class ConsoleServer implements AutoCloseable {
    static final String RELEASE_HEADER = "X-Dlock-Console";
    private static final Map<String, String> PAGES = Map.of(
            "/", "index.html",
            "/console.js", "console.js",
            "/console.css", "console.css");

    private final HttpServer server;
    private final ExecutorService handlers;
    private final LockWatcher watcher;
    private final Predicate<String> releaser;
    private final Map<String, Object> about;
    /** The {@code Host} values accepted, or null to accept any (not bound to a loopback address). */
    private final Set<String> hosts;

    private ConsoleServer(
            HttpServer server,
            LockWatcher watcher,
            Predicate<String> releaser,
            Map<String, Object> about,
            Set<String> hosts) {
        this.server = server;
        this.watcher = watcher;
        this.releaser = releaser;
        this.about = about;
        this.hosts = hosts;
        this.handlers = Executors.newFixedThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "dlock-console-http");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Binds and starts serving.
     *
     * @param releaser force-releases a name and says whether anything was removed; null for read-only
     * @param about what the page shows about the store: {@code store} (masked URI), {@code namespace},
     *     {@code pollMillis}, {@code windowMillis}
     * @throws IOException if the address cannot be bound (a {@link java.net.BindException} when in use)
     */
    static ConsoleServer start(
            InetSocketAddress address, LockWatcher watcher, Predicate<String> releaser, Map<String, Object> about)
            throws IOException {
        HttpServer http = HttpServer.create(address, 16);
        ConsoleServer console = new ConsoleServer(http, watcher, releaser, about, allowedHosts(http.getAddress()));
        http.createContext("/", console::handle);
        http.setExecutor(console.handlers);
        http.start();
        return console;
    }

    /**
     * The {@code Host} headers a console bound to {@code bound} answers: any when it is not a loopback
     * address; else the bound address and the loopback names, each with the bound port (and without a port
     * when that is 80, as browsers send it).
     */
    private static Set<String> allowedHosts(InetSocketAddress bound) {
        if (!bound.getAddress().isLoopbackAddress()) {
            return null;
        }
        Set<String> hosts = new HashSet<>();
        for (String name : List.of("127.0.0.1", "localhost", "[::1]", urlHost(bound.getAddress()))) {
            hosts.add(name + ":" + bound.getPort());
            if (bound.getPort() == 80) {
                hosts.add(name);
            }
        }
        return Set.copyOf(hosts);
    }

    /**
     * An address as the host part of a URL: IPv6 in brackets.
     *
     * @param address a numeric address
     * @return the text to put between {@code http://} and the port
     */
    static String urlHost(InetAddress address) {
        String text = address.getHostAddress();
        return text.contains(":") ? "[" + text + "]" : text;
    }

    /** The port bound (useful with port 0). */
    int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            String host = exchange.getRequestHeaders().getFirst("Host");
            if (hosts != null && (host == null || !hosts.contains(host.toLowerCase(Locale.ROOT)))) {
                send(
                        exchange,
                        403,
                        "text/plain",
                        "this console answers only to the address it listens on, 127.0.0.1 and localhost, at port "
                                + port());
                return;
            }
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (path.equals("/api/release")) {
                if (!method.equals("POST")) {
                    sendJson(exchange, 405, Map.of("error", "use POST"));
                } else {
                    release(exchange);
                }
                return;
            }
            if (!method.equals("GET") && !method.equals("HEAD")) {
                sendJson(exchange, 405, Map.of("error", "read-only endpoint: use GET"));
                return;
            }
            switch (path) {
                case "/api/locks" -> sendJson(exchange, 200, locks());
                case "/api/events" ->
                    sendJson(exchange, 200, events(query(exchange).get("since")));
                default -> page(exchange, path);
            }
        } catch (RuntimeException e) {
            // Nothing else may reach the client: the JDK server would drop the connection without an answer.
            sendJson(exchange, 500, Map.of("error", e.getClass().getSimpleName()));
        }
    }

    private void page(HttpExchange exchange, String path) throws IOException {
        String resource = PAGES.get(path);
        if (resource == null) {
            send(exchange, 404, "text/plain", "not found");
            return;
        }
        byte[] body;
        try (InputStream in = ConsoleServer.class.getResourceAsStream("console/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("console resource missing from the jar: " + resource);
            }
            body = in.readAllBytes();
        }
        String type = resource.endsWith(".html")
                ? "text/html; charset=utf-8"
                : resource.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
        exchange.getResponseHeaders()
                .set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'none'");
        send(exchange, 200, type, body);
    }

    private Map<String, Object> locks() {
        LockWatcher.View view = watcher.view();
        Map<String, Object> out = new LinkedHashMap<>(about);
        out.put("allowRelease", releaser != null);
        out.put("polledAt", view.polledAtMillis());
        out.put("error", view.error());
        out.put("heldBackMillis", view.heldBackMillis());
        out.put("locks", view.locks().stream().map(ConsoleServer::lock).toList());
        return out;
    }

    private static Map<String, Object> lock(LockWatcher.LockView lock) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", lock.name());
        out.put("kind", lock.kind());
        out.put("waiters", lock.waiters());
        out.put("holders", lock.holders().stream().map(ConsoleServer::holder).toList());
        return out;
    }

    private static Map<String, Object> holder(LockWatcher.HolderView holder) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("owner", holder.owner());
        out.put("process", Holders.process(holder.owner()));
        out.put("mode", holder.mode());
        out.put("token", holder.token());
        out.put("heldForMillis", holder.heldForMillis());
        out.put("heldBeforeConsole", holder.seenAtStart());
        out.put("leaseLeftMillis", holder.leaseLeftMillis());
        return out;
    }

    private Map<String, Object> events(String since) {
        long after;
        try {
            after = since == null ? 0 : Long.parseLong(since);
        } catch (NumberFormatException e) {
            after = 0;
        }
        List<Map<String, Object>> list = watcher.eventsSince(after).stream()
                .map(event -> {
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("seq", event.seq());
                    out.put("at", event.atMillis());
                    out.put("type", event.type());
                    out.put("name", event.name());
                    out.put("kind", event.kind());
                    out.put("process", Holders.process(event.owner()));
                    out.put("owner", event.owner());
                    out.put("token", event.token());
                    return out;
                })
                .toList();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("now", System.currentTimeMillis());
        out.put("windowMillis", about.get("windowMillis"));
        out.put("events", list);
        return out;
    }

    private void release(HttpExchange exchange) throws IOException {
        if (releaser == null) {
            sendJson(exchange, 403, Map.of("error", "read-only console: start it with --allow-release"));
            return;
        }
        if (!"release".equals(exchange.getRequestHeaders().getFirst(RELEASE_HEADER))) {
            sendJson(exchange, 403, Map.of("error", "missing header " + RELEASE_HEADER + ": release"));
            return;
        }
        String name = query(exchange).get("name");
        if (name == null || name.isEmpty()) {
            sendJson(exchange, 400, Map.of("error", "give the lock name: /api/release?name=NAME"));
            return;
        }
        boolean removed;
        try {
            watcher.forceReleasing(name);
            removed = releaser.test(name);
            watcher.forceReleaseDone(name, removed);
        } catch (IllegalArgumentException e) {
            watcher.forceReleaseDone(name, false);
            sendJson(exchange, 400, Map.of("error", String.valueOf(e.getMessage())));
            return;
        } catch (RuntimeException e) {
            watcher.forceReleaseDone(name, false);
            sendJson(exchange, 502, Map.of("error", "the store failed: " + e.getMessage()));
            return;
        }
        watcher.poll();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", name);
        out.put("released", removed);
        sendJson(exchange, 200, out);
    }

    private static Map<String, String> query(HttpExchange exchange) {
        Map<String, String> out = new LinkedHashMap<>();
        String raw = exchange.getRequestURI().getRawQuery();
        if (raw == null) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.putIfAbsent(
                        URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static void sendJson(HttpExchange exchange, int status, Map<String, ?> body) throws IOException {
        send(exchange, status, "application/json", Json.write(body));
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        send(exchange, status, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** Stops serving at once and ends the handler threads. */
    @Override
    public void close() {
        server.stop(0);
        handlers.shutdownNow();
    }
}
