package dev.dlock.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Quick reachability checks, so that a missing server is reported by name instead of as a stack trace. */
final class Probes {
    private Probes() {}

    /** Null when something accepts TCP connections at the address, else why not. */
    static String tcp(Endpoints.HostPort address) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.host(), address.port()), 2000);
            return null;
        } catch (IOException e) {
            return "nothing answers at " + address + " (" + e.getMessage() + ")";
        }
    }
}
