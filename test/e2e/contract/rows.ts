// The rows of the contract suite (row.ts says what a row holds): one an agent CLI, Claude Code's one a
// pinned version. A new CLI adds its file beside this one and its line here.
import { acpCopilotRow, acpGeminiRow, acpQwenRow } from './acp.js';
import { claudeRows } from './claude.js';
import { codexRow } from './codex.js';
import { copilotRow } from './copilot.js';
import { geminiRow } from './gemini.js';
import { opencodeRow } from './opencode.js';
import { qwenRow } from './qwen.js';
import type { Row } from './row.js';

export const ROWS: Row[] = [...claudeRows(), codexRow, copilotRow, geminiRow, opencodeRow, qwenRow, acpGeminiRow, acpQwenRow, acpCopilotRow];
