package dev.dlock.chaos;

import dev.dlock.chaos.History.Event;
import dev.dlock.chaos.History.FaultRecord;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Draws one store's run as a PNG with Java2D: one lane per client with its holds of {@code x}, {@code rw}
 * and {@code sem} as bars, lost signals (red) and told checks (magenta) as ticks, rejected fenced steps
 * as black crosses; faults shaded on the lane of the client they hit, store faults across every lane.
 */
final class Timeline {
    private static final int WIDTH = 1800;
    private static final int LEFT = 90;
    private static final int LANE = 66;
    private static final int TOP = 50;
    private static final List<String> LOCKS = List.of("x", "rw", "sem");
    private static final Color[] LOCK_COLORS = {new Color(0x3b6fb6), new Color(0x3a9b5c), new Color(0xe08a1e)};

    private Timeline() {}

    static void draw(StoreRun.Result result, Path file) throws IOException {
        List<Event> events = result.history().events();
        List<FaultRecord> faults = result.history().faults();
        int clients = events.stream().mapToInt(Event::client).max().orElse(1);
        long end = Math.max(1, events.stream().mapToLong(Event::at).max().orElse(1));
        int height = TOP + clients * LANE + 84;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            double scale = (WIDTH - LEFT - 20) / (double) end;
            for (FaultRecord f : faults) {
                int x0 = LEFT + (int) (f.start() * scale);
                int x1 = LEFT + (int) ((f.end() < 0 ? end : f.end()) * scale);
                g.setColor(faultColor(f.fault()));
                if (f.client() < 0) {
                    g.fillRect(x0, TOP - 14, Math.max(2, x1 - x0), clients * LANE + 14);
                    g.setColor(Color.DARK_GRAY);
                    g.drawString(f.fault().id(), x0 + 2, TOP - 3);
                } else {
                    g.fillRect(x0, TOP + (f.client() - 1) * LANE, Math.max(2, x1 - x0), LANE - 4);
                }
            }
            for (int c = 1; c <= clients; c++) {
                int y = TOP + (c - 1) * LANE;
                g.setColor(Color.LIGHT_GRAY);
                g.drawLine(LEFT, y + LANE - 2, WIDTH - 20, y + LANE - 2);
                g.setColor(Color.BLACK);
                g.drawString("client " + c, 10, y + LANE / 2);
            }
            for (Checker.Section s : result.sections().values()) {
                int row = LOCKS.indexOf(s.lock);
                int y = TOP + (s.client - 1) * LANE + 6 + row * 17;
                int x0 = LEFT + (int) (s.grantAt * scale);
                int x1 = LEFT + (int) (Math.min(s.endAt, end) * scale);
                g.setColor(LOCK_COLORS[Math.max(0, row)]);
                g.fillRect(x0, y, Math.max(1, x1 - x0), 12);
            }
            g.setStroke(new BasicStroke(2f));
            for (Event e : events) {
                int x = LEFT + (int) (e.at() * scale);
                int y = TOP + (e.client() - 1) * LANE;
                switch (e.type()) {
                    case "lost" -> {
                        g.setColor(Color.RED);
                        g.drawLine(x, y + 2, x, y + LANE - 6);
                    }
                    case "told" -> {
                        g.setColor(Color.MAGENTA);
                        g.drawLine(x, y + 2, x, y + LANE - 6);
                    }
                    case "claim_rejected", "write_rejected" -> {
                        g.setColor(Color.BLACK);
                        int cy = y + LANE / 2;
                        g.drawLine(x - 4, cy - 4, x + 4, cy + 4);
                        g.drawLine(x - 4, cy + 4, x + 4, cy - 4);
                    }
                    default -> {}
                }
            }
            axis(g, TOP + clients * LANE, end, scale);
            legend(g, TOP + clients * LANE + 26, end, result.store());
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
    }

    /** Seconds under the lanes: a tick every 10 s, or every minute for runs over 5 minutes. */
    private static void axis(Graphics2D g, int y, long end, double scale) {
        g.setStroke(new BasicStroke(1f));
        g.setColor(Color.GRAY);
        long step = end > 300_000 ? 60_000 : 10_000;
        for (long t = 0; t <= end; t += step) {
            int x = LEFT + (int) (t * scale);
            g.drawLine(x, y - 2, x, y + 3);
            g.drawString(t / 1000 + " s", x - 8, y + 16);
        }
    }

    private static void legend(Graphics2D g, int y, long end, String store) {
        g.setStroke(new BasicStroke(1f));
        int x = LEFT;
        for (int i = 0; i < LOCKS.size(); i++) {
            g.setColor(LOCK_COLORS[i]);
            g.fillRect(x, y, 20, 10);
            g.setColor(Color.BLACK);
            g.drawString("holds " + LOCKS.get(i), x + 24, y + 10);
            x += 100;
        }
        for (Map.Entry<String, Color> e : Map.of(
                        "lost signal",
                        Color.RED,
                        "told (checkValid)",
                        Color.MAGENTA,
                        "fenced step rejected",
                        Color.BLACK)
                .entrySet()) {
            g.setColor(e.getValue());
            g.fillRect(x, y, 4, 10);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), x + 8, y + 10);
            x += 150;
        }
        for (Fault f : Fault.values()) {
            if (x > WIDTH - 120) {
                x = LEFT;
                y += 18;
            }
            g.setColor(faultColor(f));
            g.fillRect(x, y, 20, 10);
            g.setColor(Color.BLACK);
            g.drawString(f.id(), x + 24, y + 10);
            x += 120;
        }
        g.drawString(store + ": " + end / 1000 + " s, time from left to right", LEFT, y + 32);
    }

    private static Color faultColor(Fault f) {
        return switch (f) {
            case PAUSE_CLIENT -> new Color(120, 120, 120, 70);
            case KILL_CLIENT -> new Color(160, 0, 0, 70);
            case PARTITION -> new Color(120, 0, 160, 60);
            case CLOCK_CLIENT, CLOCK_STORE -> new Color(220, 200, 0, 80);
            default -> new Color(255, 80, 80, 45);
        };
    }
}
