/**
 * "Did you mean …?": the one place a mistyped word (a command, a flag, a policy key or value) is
 * matched to what the person most likely meant. Candidates always come from the thing itself (the
 * command table, a command's flags, the policy schema's keys and choices), never from a second
 * list, so a new key or command is suggested as soon as it exists.
 *
 * A candidate is "likely" when it is a few edits away (optimal string alignment distance, case,
 * `-` and `_` ignored, at most a third of the word), or when one is the start of the other
 * (`readOnly` → `readOnlyHint`). A candidate the word is the start of wins over the others (the
 * word was cut short: `allow` → `allowlist`, not `all`), then the fewest edits. Words that mean
 * the same but are spelled nothing alike (`allow` for `forward`) come from `synonyms`, declared
 * next to the choices they map to.
 */

/** Suggest nothing for words shorter than this when only a prefix matches (`-p` is not `--profile`). */
const MIN_PREFIX_CHARS = 3;

export function closest(word: string, candidates: readonly string[], synonyms: Readonly<Record<string, string>> = {}): string | null {
  if (word === "" || candidates.includes(word)) return null;
  const key = normal(word);
  const synonym = Object.entries(synonyms).find(([alias]) => normal(alias) === key)?.[1];
  if (synonym !== undefined && candidates.includes(synonym)) return synonym;
  let best: { candidate: string; completes: boolean; distance: number } | null = null;
  const limit = Math.max(1, Math.floor(key.length / 3));
  for (const candidate of candidates) {
    const other = normal(candidate);
    const distance = editDistance(key, other);
    const completes = key.length >= MIN_PREFIX_CHARS && other.startsWith(key);
    const prefix = completes || (other.length >= MIN_PREFIX_CHARS && key.startsWith(other));
    if (distance > limit && !prefix) continue;
    const better = best === null || (completes && !best.completes) || (completes === best.completes && distance < best.distance);
    if (better) best = { candidate, completes, distance };
  }
  return best?.candidate ?? null;
}

/** ` (did you mean "match"?)`, or "" when nothing is close: to append to an error message. */
export function didYouMean(word: string, candidates: readonly string[], synonyms?: Readonly<Record<string, string>>): string {
  const match = closest(word, candidates, synonyms);
  return match === null ? "" : ` (did you mean ${JSON.stringify(match)}?)`;
}

function normal(word: string): string {
  return word.toLowerCase().replace(/[-_]/g, "");
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number) => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, at(i - 2, j - 2) + 1);
      d[i * cols + j] = value;
    }
  }
  return at(a.length, b.length);
}
