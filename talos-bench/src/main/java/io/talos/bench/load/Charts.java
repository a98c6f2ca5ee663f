package io.talos.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Charts rendered from measured results with XChart (PNG). */
final class Charts {
  private Charts() {}

  /**
   * Scenario 1, write only: QPS vs partitions and P50/P99 latency vs partitions, one line per batch
   * size; two charts side by side in one PNG.
   */
  static void scenario1(List<SyncScenario.Cell> cells, Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    TreeMap<Integer, List<SyncScenario.Cell>> byBatch = new TreeMap<>();
    for (SyncScenario.Cell c : cells) {
      if (c.mode().equals("write")) byBatch.computeIfAbsent(c.batch(), b -> new ArrayList<>()).add(c);
    }
    if (byBatch.isEmpty()) return;
    XYChart qps = new XYChartBuilder().width(640).height(420).title("Scenario 1, write only: QPS vs partitions")
        .xAxisTitle("partitions (one synchronous producer thread each)").yAxisTitle("requests/s").build();
    XYChart latency = new XYChartBuilder().width(640).height(420).title("Latency vs partitions (P50 solid, P99 dashed)")
        .xAxisTitle("partitions").yAxisTitle("ms per request").build();
    qps.getStyler().setYAxisLogarithmic(true);
    latency.getStyler().setYAxisLogarithmic(true);
    java.awt.Color[] palette = {new java.awt.Color(0x1f77b4), new java.awt.Color(0xff7f0e),
        new java.awt.Color(0x2ca02c), new java.awt.Color(0xd62728), new java.awt.Color(0x9467bd),
        new java.awt.Color(0x8c564b)};
    int colour = 0;
    for (var e : byBatch.entrySet()) {
      java.awt.Color col = palette[colour++ % palette.length];
      List<SyncScenario.Cell> l = e.getValue();
      double[] x = l.stream().mapToDouble(SyncScenario.Cell::partitions).toArray();
      double[] q = l.stream().mapToDouble(c -> c.put().qps()).toArray();
      double[] p50 = l.stream().mapToDouble(c -> c.put().latencyNanos.getValueAtPercentile(50) / 1e6).toArray();
      double[] p99 = l.stream().mapToDouble(c -> c.put().latencyNanos.getValueAtPercentile(99) / 1e6).toArray();
      var sq = qps.addSeries("batch " + e.getKey(), x, q);
      sq.setMarker(SeriesMarkers.CIRCLE);
      sq.setLineColor(col);
      sq.setMarkerColor(col);
      var s50 = latency.addSeries("P50 batch " + e.getKey(), x, p50);
      s50.setMarker(SeriesMarkers.CIRCLE);
      s50.setLineColor(col);
      s50.setMarkerColor(col);
      var s99 = latency.addSeries("P99 batch " + e.getKey(), x, p99);
      s99.setMarker(SeriesMarkers.NONE);
      s99.setLineColor(col);
      s99.setLineStyle(new java.awt.BasicStroke(1.5f, java.awt.BasicStroke.CAP_BUTT, java.awt.BasicStroke.JOIN_ROUND,
          10f, new float[] {6f, 4f}, 0f));
    }
    Files.createDirectories(png.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(List.of(qps, latency), 1, 2, png.toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
