import type { Severity } from "../../core/severity.ts";

/**
 * Instructions aimed at the model rather than descriptions of what a tool does. Tool descriptions
 * are imperative by nature ("Read the contents of a file"), so the rules look for what no honest
 * description needs: tags that pose as system text, keeping something from the user, overriding the
 * model's instructions, steering every other tool. Weaker signals (a secret file's path, moving data
 * into a parameter, the conversation, a secret) are `medium` alone and `high` together in one
 * string (`combined-signals`): that pairing is the shape of every published poisoning example, and
 * no benign description in the corpora (test/fixtures/definitions/) has it.
 */
export type TextRule = { rule: string; severity: Severity; pattern: RegExp; message: string };

export const TEXT_RULES: readonly TextRule[] = [
  {
    rule: "instruction-tags",
    severity: "high",
    pattern: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|mandatory|override|assistant[_ -]?instructions|system[_ -]?prompt)\b[^<>]{0,40}>|\[\/?INST\]|<\|im_(?:start|end)\|>|<\|system\|>/giu,
    message: "a tag posing as system or priority text",
  },
  {
    rule: "conceal-from-user",
    severity: "high",
    pattern:
      /\b(?:do\s*n[o’']t|never|must\s*n[o’']t|should\s*n[o’']t|without)\s+(?:\w+\s+){0,3}?(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|notify(?:ing)?|alert(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|show(?:ing)?)\b[^.\n]{0,60}?\b(?:the\s+)?(?:user|human|anyone)\b|\b(?:user|human)\s+(?:must|should|will|need)\s*(?:not|never)\s+(?:know|see|notice|be\s+told|find\s+out|learn)\b|\b(?:hide|conceal)\s+(?:this|it|these|that|the\s+\w+)\b[^.\n]{0,30}\bfrom\b/giu,
    message: "tells the model to keep something from the user",
  },
  {
    rule: "override-instructions",
    severity: "high",
    pattern: /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|your\s+|any\s+)?(?:previous|prior|above|earlier|preceding|system|original|other|all)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|guidelines|directives)\b/giu,
    message: "tells the model to set aside its instructions",
  },
  {
    rule: "all-tools-instruction",
    severity: "high",
    pattern: /\b(?:before|prior\s+to|instead\s+of|after|whenever\s+you\s+use)\s+(?:using|calling|invoking|running|executing|you\s+use|you\s+call)?\s*(?:any|every|all|each)\s+(?:of\s+the\s+)?(?:other\s+)?(?:tools?|functions?)\b/giu,
    message: "steers the use of every other tool",
  },
  {
    rule: "sensitive-path",
    severity: "medium",
    pattern:
      /(?:~|\$HOME|%USERPROFILE%)?\/?\.ssh\b|id_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials|(?<!\w)\.npmrc\b|(?<!\w)\.pypirc\b|(?<!\w)\.netrc\b|\.git-credentials\b|\.docker\/config\.json|\.kube\/config|\/etc\/(?:passwd|shadow|sudoers)\b|\bmcp\.json\b|claude_desktop_config|(?<!\w)\.cursor\/|(?<![\w.])\.env\b|\bkeychain\b|wallet\.dat|\bprivate[ _-]?keys?\b|(?<!\w)\.gnupg\b|\bcookies\.sqlite\b/giu,
    message: "names a file that holds secrets",
  },
  {
    rule: "data-to-parameter",
    severity: "medium",
    pattern: /\b(?:pass|send|put|include|provide|append|insert|attach|copy|paste|embed|encode|add)\b[^.\n]{0,80}?\b(?:as|in|into|inside|within|via|through)\s+(?:(?:the|a|an|its|their|this|that|each)\s+)?[`'"]?[\w-]+[`'"]?\s+(?:parameter|argument|field|param|property)\b/giu,
    message: "asks for data to be put into a parameter",
  },
  {
    rule: "conversation-reference",
    severity: "medium",
    pattern: /\b(?:entire|full|whole|complete|previous|prior|earlier|all\s+(?:of\s+)?(?:the\s+)?)\s*(?:conversation|chat\s+history|message\s+history|(?:list\s+of\s+)?(?:chat\s+)?messages|dialog(?:ue)?|context\s+window|transcript)s?\b|\bmessages\s+(?:so\s+far|above)\b/giu,
    message: "refers to the conversation with the user",
  },
  { rule: "system-prompt", severity: "medium", pattern: /\b(?:system\s+prompt|your\s+(?:instructions|system\s+message|prompt))\b/giu, message: "refers to the model's own instructions" },
  {
    rule: "secret-reference",
    severity: "medium",
    pattern: /\b(?:api[_ -]?keys?|access[_ -]?tokens?|secret[_ -]?keys?|passwords?|credentials?|auth(?:entication)?\s+tokens?|session\s+cookies?|seed\s+phrases?|mnemonics?)\b/giu,
    message: "refers to secrets",
  },
];

/** Medium signals that, two or more in one string, make a `high` `combined-signals` finding. */
export const COMBINING: ReadonlySet<string> = new Set(["sensitive-path", "data-to-parameter", "conversation-reference", "system-prompt", "secret-reference", "other-server-tool"]);
