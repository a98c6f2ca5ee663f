package io.talos.bench.reliability;

/**
 * One row of a reliability table: what a scenario variant did and what it found.
 *
 * @param scenario e.g. "1 crash cycles"
 * @param variant e.g. "local, sync, Talos SDK"
 * @param runs cycles or cases run
 * @param acknowledged messages the server acknowledged
 * @param readBack acknowledged messages read back at their acknowledged offset with their payload
 * @param lost acknowledged messages missing or with other bytes at their offset (and not refused)
 * @param duplicated acknowledged payloads read at more than one offset
 * @param reordered acknowledged messages read after a message acknowledged later in its partition
 * @param refused acknowledged messages the server refused to serve with a clear error (damage)
 * @param notes anything else measured (free text)
 */
public record Tally(String scenario, String variant, long runs, long acknowledged, long readBack, long lost,
    long duplicated, long reordered, long refused, String notes) {

  /** No acknowledged message lost, duplicated or reordered. */
  public boolean clean() {
    return lost == 0 && duplicated == 0 && reordered == 0;
  }

  static String header() {
    return "| scenario | variant | cycles / cases | acknowledged | read back | lost | duplicated | reordered"
        + " | refused (clear error) | notes |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|";
  }

  String row() {
    return "| " + scenario + " | " + variant + " | " + runs + " | " + acknowledged + " | " + readBack + " | "
        + lost + " | " + duplicated + " | " + reordered + " | " + refused + " | " + notes + " |";
  }

  @Override
  public String toString() {
    return header() + "\n" + row();
  }
}
