/**
 * The environment variables that connect shims and commands to a governance service. Kept apart
 * from the wire schemas so a shim that never talks to a service does not load valibot.
 */
export const SESSION_SECRET_ENV = "THOUGHTGATE_GOVERNANCE_SECRET";
export const ENDPOINT_ENV = "THOUGHTGATE_GOVERNANCE_ENDPOINT";
export const APPROVAL_KEY_ENV = "THOUGHTGATE_APPROVAL_KEY";
