/**
 * The keys of a terminal in raw mode, from the bytes it sends: the few escape sequences the dashboard
 * acts on (arrows, Page Up/Down, Home/End, in both the normal and the application cursor form), control
 * keys, and printable characters. Any other escape sequence is read whole and dropped, so that a key
 * the dashboard does not know never reaches it as stray characters.
 */
export type Key =
  | { name: 'up' | 'down' | 'left' | 'right' | 'pageup' | 'pagedown' | 'home' | 'end' }
  | { name: 'enter' | 'escape' | 'backspace' | 'tab' | 'ctrl-c' | 'ctrl-d' | 'ctrl-u' }
  | { name: 'char'; ch: string };

const CSI: Record<string, Key['name']> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
  '1~': 'home',
  '7~': 'home',
  '4~': 'end',
  '8~': 'end',
  '5~': 'pageup',
  '6~': 'pagedown',
};

const CONTROL: Record<string, Key['name']> = {
  '\r': 'enter',
  '\n': 'enter',
  '\t': 'tab',
  '\x7f': 'backspace',
  '\b': 'backspace',
  '\x03': 'ctrl-c',
  '\x04': 'ctrl-d',
  '\x15': 'ctrl-u',
};

/**
 * The keys in one read of the terminal. An ESC at the end of a read is the Escape key: terminals send a
 * sequence in one write, so a lone ESC is a key press (the dashboard does not wait to see more).
 */
export function decodeKeys(text: string): Key[] {
  const keys: Key[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\x1b') {
      const next = text[i + 1];
      if (next === '[' || next === 'O') {
        // CSI (ESC [) or SS3 (ESC O): parameters, then a final byte in @..~.
        let j = i + 2;
        while (j < text.length && !/[@-~]/.test(text[j]!)) j++;
        if (j >= text.length) break;
        const body = text.slice(i + 2, j + 1);
        const name = CSI[body.replace(/^1;\d+(?=[A-DHF]$)/, '')];
        if (name) keys.push({ name } as Key);
        i = j + 1;
        continue;
      }
      keys.push({ name: 'escape' });
      // ESC followed by a character is Alt+character: the Escape, then the character as typed.
      i++;
      continue;
    }
    const control = CONTROL[c];
    if (control) keys.push({ name: control } as Key);
    else if (c >= ' ') {
      // One code point at a time: a surrogate pair is one character.
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      keys.push({ name: 'char', ch });
      i += ch.length;
      continue;
    }
    i++;
  }
  return keys;
}
