import { describe, expect, test } from "bun:test";
import { uriTemplateMatches } from "../../src/core/uri-template.ts";

describe("URI templates (RFC 6570) matched against URIs", () => {
  test("simple expressions match one segment; reserved ones anything; literals exactly", () => {
    expect(uriTemplateMatches("note://{id}", "note://a")).toBe(true);
    expect(uriTemplateMatches("note://{id}", "note://a/b")).toBe(false);
    expect(uriTemplateMatches("file:///{+path}", "file:///etc/passwd")).toBe(true);
    expect(uriTemplateMatches("repo://{owner}/{repo}/issues", "repo://a/b/issues")).toBe(true);
    expect(uriTemplateMatches("repo://{owner}/{repo}/issues", "repo://a/b/pulls")).toBe(false);
    expect(uriTemplateMatches("a.b://{x}", "aXb://y")).toBe(false);
  });
});
