/**
 * A small Prometheus registry rendering the text exposition format 0.0.4: counters, gauges and
 * histograms with labels. Label values come from shims and servers (server ids, method names), so
 * they are escaped as the format requires (backslash, double quote and newline) and cut to
 * `MAX_LABEL_CHARS` before a series is made of them (how many there may be is metrics.ts's concern).
 */
export type Labels = Record<string, string>;

const MAX_LABEL_CHARS = 128;

/** A label value of at most `MAX_LABEL_CHARS` characters; a longer one keeps its start and ends in `…`. */
export function capLabelValue(value: string): string {
  return value.length > MAX_LABEL_CHARS ? `${value.slice(0, MAX_LABEL_CHARS - 1)}…` : value;
}

function capLabels(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).map(([key, value]) => [key, capLabelValue(value)]));
}

type Series<T> = Map<string, { labels: Labels; value: T }>;

/**
 * A series' key: its labels as capped, in JSON (a count per decision must not pay for the
 * exposition format's escaping, which happens when a scrape renders; JSON keeps any two label sets
 * apart, whatever characters their values hold).
 */
function seriesKey(labels: Labels): string {
  for (const name in labels) if ((labels[name] ?? "").length > MAX_LABEL_CHARS) return JSON.stringify(capLabels(labels));
  return JSON.stringify(labels);
}

abstract class Metric<T> {
  protected readonly series: Series<T> = new Map();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" | "histogram",
  ) {}

  protected entry(given: Labels, initial: () => T): { labels: Labels; value: T } {
    const key = seriesKey(given);
    let found = this.series.get(key);
    if (!found) {
      found = { labels: capLabels(given), value: initial() };
      this.series.set(key, found);
    }
    return found;
  }

  abstract samples(): string[];

  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`, ...this.samples()].join("\n");
  }
}

export class Counter extends Metric<number> {
  constructor(
    name: string,
    help: string,
    /** Read at scrape time from a count kept elsewhere (it must only grow), instead of incremented. */
    private readonly collect?: () => Array<{ labels: Labels; value: number }>,
  ) {
    super(name, help, "counter");
  }

  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels, () => 0).value += by;
  }

  get(labels: Labels = {}): number {
    return this.series.get(seriesKey(labels))?.value ?? 0;
  }

  samples(): string[] {
    const values = this.collect ? this.collect() : [...this.series.values()];
    return values.map(({ labels, value }) => `${this.name}${labelText(labels)} ${value}`);
  }
}

export class Gauge extends Metric<number> {
  constructor(
    name: string,
    help: string,
    /** Computed at scrape time instead of set (e.g. servers seen recently). */
    private readonly collect?: () => Array<{ labels: Labels; value: number }>,
  ) {
    super(name, help, "gauge");
  }

  set(labels: Labels, value: number): void {
    this.entry(labels, () => 0).value = value;
  }

  samples(): string[] {
    const values = this.collect ? this.collect() : [...this.series.values()];
    return values.map(({ labels, value }) => `${this.name}${labelText(labels)} ${value}`);
  }
}

type Buckets = { counts: number[]; sum: number; count: number };

export class Histogram extends Metric<Buckets> {
  constructor(
    name: string,
    help: string,
    /** Upper bounds in the metric's unit, ascending; +Inf is implied. */
    readonly bounds: number[],
  ) {
    super(name, help, "histogram");
  }

  observe(labels: Labels, value: number): void {
    const buckets = this.entry(labels, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 })).value;
    this.bounds.forEach((bound, i) => {
      if (value <= bound) buckets.counts[i] = (buckets.counts[i] ?? 0) + 1;
    });
    buckets.sum += value;
    buckets.count += 1;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const { labels, value } of this.series.values()) {
      this.bounds.forEach((bound, i) => lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(bound) })} ${value.counts[i] ?? 0}`));
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${value.count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${value.sum}`);
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`);
    }
    return lines;
  }
}

export function renderMetrics(metrics: Array<{ render(): string }>): string {
  return `${metrics.map((m) => m.render()).join("\n")}\n`;
}

/** `{a="1",b="x\"y"}`, or "" without labels. */
function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([key, value]) => `${key}="${escapeLabelValue(value)}"`).join(",")}}`;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
