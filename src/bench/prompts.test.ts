import { describe, expect, it } from 'vitest';
import { createListPromptSource, createShippedPromptSource, parsePromptFile } from './prompts.js';

const CORPUS = Array.from({ length: 50 }, (_v, i) => `word${i}`).join(' ');

describe('shipped prompts', () => {
  it('cuts prompts near the requested length, each unique at its start, wrapping around the corpus', () => {
    const next = createShippedPromptSource(CORPUS, 24 + 130, 3);
    const prompts = Array.from({ length: 20 }, next);
    for (const p of prompts) expect(p.text.split('\n')[1].split(' ')).toHaveLength(100);
    expect(new Set(prompts.map((p) => p.text.split('\n')[0])).size).toBe(20);
  });

  it('is reproducible for a seed', () => {
    expect(createShippedPromptSource(CORPUS, 64, 9)().text).toBe(createShippedPromptSource(CORPUS, 64, 9)().text);
  });
});

describe('parsePromptFile', () => {
  it('reads JSONL with prompt, text and chat messages (up to the last user turn)', () => {
    const text = [
      JSON.stringify({ prompt: 'a' }),
      '',
      JSON.stringify({ text: 'b' }),
      JSON.stringify({
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'u' },
          { role: 'assistant', content: 'x' },
        ],
      }),
    ].join('\n');
    const p = parsePromptFile(text, 'f.jsonl');
    expect(p.map((x) => x.text)).toEqual(['a', 'b', 's\nu']);
    expect(p[2].messages).toHaveLength(2);
  });

  it('reads a ShareGPT array (first human turn)', () => {
    const text = JSON.stringify([
      {
        conversations: [
          { from: 'human', value: 'hi' },
          { from: 'gpt', value: 'yo' },
        ],
      },
      { conversations: [] },
    ]);
    expect(parsePromptFile(text, 's.json')).toEqual([{ text: 'hi' }]);
  });

  it('names the file and line of bad input', () => {
    expect(() => parsePromptFile('{"prompt":"a"}\nnot json', 'f.jsonl')).toThrow(/f\.jsonl:2: not a JSON object/);
    expect(() => parsePromptFile('{"other":1}', 'f.jsonl')).toThrow(/no prompts found/);
  });

  it('cycles through a list', () => {
    const next = createListPromptSource([{ text: 'a' }, { text: 'b' }]);
    expect([next(), next(), next()].map((p) => p.text)).toEqual(['a', 'b', 'a']);
  });
});
