import type { Stage } from "../../pipeline/stages.ts";
import type { ResultScanner } from "../result-scanner.ts";
import type { Answer } from "./answer.ts";

/**
 * secrets, first on the way back: what reaches the agent, and what the audit counts as
 * `bytes_out`, is the result with its credentials redacted (docs/governance.md, Secret scanning).
 */
export function secretsStage(scanner: Pick<ResultScanner, "scanResult">): Stage<Answer> {
  return {
    name: "secrets",
    response(answer, next) {
      answer.bytes = scanner.scanResult(answer.bytes, answer.entry).bytes;
      return next(answer);
    },
  };
}
