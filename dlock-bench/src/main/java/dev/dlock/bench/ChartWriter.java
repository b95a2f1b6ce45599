package dev.dlock.bench;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler;

/**
 * Draws ops/s per scenario and system as one PNG: a bar panel per lock scenario (log scale, bars coloured
 * by backend), arranged in a grid. Rendered off-screen with XChart; needs no display ({@code
 * java.awt.headless=true} is set by {@link Main}).
 */
final class ChartWriter {
    private static final int PANEL_WIDTH = 900;
    private static final int PANEL_HEIGHT = 520;
    private static final Map<String, Color> BACKEND_COLORS = Map.of(
            "redis", new Color(0xD8, 0x2C, 0x20),
            "zookeeper", new Color(0x3A, 0x7C, 0xA5),
            "postgresql", new Color(0x33, 0x67, 0x91),
            "mariadb", new Color(0xC0, 0x76, 0x5A),
            "mem", new Color(0x6A, 0x9E, 0x3F),
            "redlock", new Color(0x8E, 0x1B, 0x14),
            "etcd", new Color(0x41, 0x9E, 0xDA));
    private static final List<String> BACKEND_ORDER =
            List.of("redis", "zookeeper", "postgresql", "mariadb", "etcd", "mem", "redlock");

    private ChartWriter() {}

    static void write(List<Row> rows, Path png) throws IOException {
        List<BufferedImage> panels = new ArrayList<>();
        for (Scenario scenario : Scenario.values()) {
            if (scenario == Scenario.HELD) {
                continue;
            }
            List<Row> of = rows.stream()
                    .filter(r -> r.scenario().equals(scenario.label()) && r.opsPerS() > 0)
                    .toList();
            if (!of.isEmpty()) {
                panels.add(BitmapEncoder.getBufferedImage(panel(scenario, of)));
            }
        }
        if (panels.isEmpty()) {
            return;
        }
        int columns = panels.size() == 1 ? 1 : 2;
        int lines = (panels.size() + columns - 1) / columns;
        BufferedImage sheet =
                new BufferedImage(columns * PANEL_WIDTH, lines * PANEL_HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = sheet.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, sheet.getWidth(), sheet.getHeight());
            for (int i = 0; i < panels.size(); i++) {
                g.drawImage(panels.get(i), (i % columns) * PANEL_WIDTH, (i / columns) * PANEL_HEIGHT, null);
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(sheet, "png", png.toFile());
    }

    private static CategoryChart panel(Scenario scenario, List<Row> rows) {
        CategoryChart chart = new CategoryChartBuilder()
                .width(PANEL_WIDTH)
                .height(PANEL_HEIGHT)
                .title(scenario.label() + " (" + scenario.description + ")")
                .yAxisTitle(scenario == Scenario.HANDOFF ? "hand-offs/s (log)" : "ops/s (log)")
                .build();
        CategoryStyler styler = chart.getStyler();
        styler.setYAxisLogarithmic(true);
        styler.setOverlapped(true);
        styler.setXAxisLabelRotation(35);
        double min = rows.stream().mapToDouble(Row::opsPerS).min().orElse(1);
        double max = rows.stream().mapToDouble(Row::opsPerS).max().orElse(10);
        styler.setYAxisMin(Math.pow(10, Math.floor(Math.log10(min))));
        styler.setYAxisMax(Math.pow(10, Math.ceil(Math.log10(max * 1.01))));
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Horizontal);
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotGridVerticalLinesVisible(false);
        styler.setChartTitleFont(styler.getChartTitleFont().deriveFont(14f));
        List<String> labels = new ArrayList<>();
        for (Row r : rows) {
            labels.add(r.system() + "@" + r.backend());
        }
        for (String backend : BACKEND_ORDER) {
            if (rows.stream().noneMatch(r -> r.backend().equals(backend))) {
                continue;
            }
            List<Double> values = new ArrayList<>();
            for (Row r : rows) {
                values.add(r.backend().equals(backend) ? r.opsPerS() : null);
            }
            chart.addSeries(backend, labels, values).setFillColor(BACKEND_COLORS.get(backend));
        }
        return chart;
    }
}
