/**
 * Pinning's words, apart from the policy schema so the engine and the shim can use them without
 * loading it (the schema pulls in valibot, which a shim under the embedded default never needs).
 */
export const PIN_MODES = ["strict", "warn", "off"] as const;
export type PinMode = (typeof PIN_MODES)[number];
/** How bad a poisoning finding is, from least to worst. */
export const SEVERITIES = ["low", "medium", "high"] as const;
export type Severity = (typeof SEVERITIES)[number];
