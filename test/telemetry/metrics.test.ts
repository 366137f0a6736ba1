import { expect, test } from "bun:test";
import type { FramingErrorCode } from "../../src/stdio/validate-line.ts";
import { KNOWN_FRAMING_ERRORS } from "../../src/telemetry/metrics.ts";

test("every framing error code a shim reports is a known label (a new code fails to compile here until listed)", () => {
  const codes: Record<FramingErrorCode, true> = {
    MessageTooLarge: true,
    InvalidUtf8: true,
    ByteOrderMark: true,
    BareCarriageReturn: true,
    InvalidJson: true,
    UnsupportedBatch: true,
    NotAnObject: true,
    MissingJsonRpcVersion: true,
    NotJsonRpc: true,
    InvalidId: true,
    SmugglingAttempt: true,
    TruncatedLine: true,
    DuplicateKey: true,
    NestingTooDeep: true,
    DuplicateRequestId: true,
  };
  expect(Object.keys(codes).filter((code) => !KNOWN_FRAMING_ERRORS.has(code))).toEqual([]);
});
