/**
 * A sub-agent's answer as Claude Code hands it to the parent, without the harness's wrapping. In
 * 2.1.331 (not in 2.1.197; the releases between were not measured) a foreground child's answer starts with a
 * `<tools-used-before-summary>…</tools-used-before-summary>` note, and the tool result the parent's
 * model reads frames it: "[Subagent hand-back] … The report follows:", the report indented by two
 * spaces, then `agentId: …` and `<usage>…</usage>` lines. 2.1.197's answers have neither and pass
 * through unchanged (but trimmed).
 */

const TOOLS_USED = /<tools-used-before-summary>[\s\S]*?<\/tools-used-before-summary>/g;
const HAND_BACK = '[Subagent hand-back]';
const REPORT_FOLLOWS = 'The report follows:';

/** The lines' common indent removed (the harness indents every line of the report). */
function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines.filter((l) => l.trim()).map((l) => /^[ \t]*/.exec(l)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)![0].length))).join('\n');
}

export function childAnswerText(text: string): string {
  let t = text.replace(TOOLS_USED, '');
  const frame = t.indexOf(HAND_BACK);
  if (frame >= 0) {
    const follows = t.indexOf(REPORT_FOLLOWS, frame);
    const start = follows >= 0 ? t.indexOf('\n', follows) : t.indexOf('\n', frame);
    t = start >= 0 ? t.slice(start + 1) : '';
    // The trailer the harness adds for the parent's model: the agentId line and what follows it.
    const trailer = t.search(/\nagentId: [A-Za-z0-9_-]+ \(/);
    if (trailer >= 0) t = t.slice(0, trailer);
    t = dedent(t);
  }
  return t.trim();
}
