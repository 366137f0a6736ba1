import type { Clock } from "../../src/governance/approval/tasks.ts";

/** A clock tests move by hand: `advance(ms)` runs every timer that falls due, in order. */
export class FakeClock implements Clock {
  private time = Date.UTC(2026, 10, 22, 12, 0, 0);
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];

  now(): number {
    return this.time;
  }

  schedule(ms: number, fn: () => void): () => void {
    const timer = { at: this.time + ms, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      this.time = due.at;
      due.fn();
    }
    this.timers = this.timers.filter((t) => t.live);
    this.time = until;
  }
}
