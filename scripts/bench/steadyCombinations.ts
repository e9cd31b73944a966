// What a run of minutes cannot show: the label combinations each queue's histograms and reason
// counts reach over hours, from the simulator's model itself (the world the page benchmark reads),
// per queue on average. Each combination of a histogram costs its bounds + 3 series
// (docs/metrics.md#what-a-queue-costs).
import type { ModelHours } from './modelHours.ts';

/** Per queue, how many combinations of each kind `hours` of the model reach. */
export type SteadyCombinations = Readonly<Record<string, number>>;

/** The combinations each queue of `model` reached; see the module comment. */
export function steadyCombinations({ world, start }: ModelHours): SteadyCombinations {
  const totals = new Map<string, number>();
  const count = (kind: string, values: Iterable<string>): void => {
    totals.set(kind, (totals.get(kind) ?? 0) + new Set(values).size);
  };
  for (const { model } of world.mergeQueues) {
    const runs = model.verificationRuns.runs.filter(
      (run) => run.status !== 'inProgress' && run.updatedAt >= start,
    );
    count(
      'run status × bisection',
      runs.map((run) => `${run.status}/${String(run.isBisection)}`),
    );
    count(
      'batch-size bisection',
      runs.map((run) => String(run.isBisection)),
    );
    count(
      'failing required checks',
      runs.flatMap((run) => run.failing.map(({ name }) => name)),
    );
    count(
      'testing outcome × bisection',
      model.testing.attempts
        .filter((attempt) => attempt.endedAt >= start)
        .map((attempt) => `${attempt.outcome}/${String(attempt.isBisection)}`),
    );
    // Transitions as (from, to, reason) of every entry the queue remembers.
    const transitions = [...model.active, ...model.concluded].flatMap((pr) => {
      const timeline = model.entries.timeline(pr.id)?.transitions ?? [];
      return timeline.flatMap((transition, index) =>
        index === 0 || transition.at < start
          ? []
          : [{ from: timeline[index - 1]?.state, to: transition.state, reason: transition.reason }],
      );
    });
    count(
      'states left',
      transitions.map(({ from }) => String(from)),
    );
    count(
      'state transitions (from, to)',
      transitions.map(({ from, to }) => `${String(from)}/${to}`),
    );
    count(
      'restart causes',
      transitions
        .filter(({ from, to }) => to === 'pending' && from !== 'not_ready')
        .map(({ reason }) => String(reason)),
    );
    for (const [kind, to] of [
      ['cancellation reasons', 'cancelled'],
      ['failure reasons', 'failed'],
    ] as const) {
      count(
        kind,
        transitions
          .filter((transition) => transition.to === to)
          .map(({ reason }) => String(reason)),
      );
    }
  }
  return Object.fromEntries(
    Array.from(totals, ([kind, total]) => [kind, total / world.mergeQueues.length]),
  );
}
