import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeReadError } from './local-files.js';
import { isToolError } from './errors.js';

// The error a real read of `path` throws.
function readErrorOf(path: string): unknown {
  try {
    readFileSync(path);
  } catch (e) {
    return e;
  }
  throw new Error(`${path} was readable`);
}

describe('describeReadError', () => {
  it('turns real read errors into one-line coded errors naming the file', () => {
    const missing = describeReadError(readErrorOf('/nonexistent/spectune-x'), 'x.log');
    expect(missing).toMatchObject({ code: 'E_FILE_NOT_FOUND', message: 'x.log: no such file' });
    expect(describeReadError(readErrorOf('/'), '/')).toMatchObject({
      code: 'E_INPUT_UNUSABLE',
      message: '/: is a directory',
      hint: 'pass a file',
    });
  });

  it('says permission denied (EACCES, EPERM), which a root test run cannot provoke for real', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, open 'x'"), { code: 'EACCES', errno: -13 });
    expect(describeReadError(denied, 'state.txt')).toMatchObject({
      code: 'E_NO_PERMISSION',
      message: 'state.txt: permission denied',
    });
    expect(describeReadError(Object.assign(new Error('x'), { code: 'EPERM' }), 'a')).toMatchObject({
      code: 'E_NO_PERMISSION',
    });
  });

  it('names an unlisted errno and leaves other errors alone', () => {
    const io = describeReadError(Object.assign(new Error('i/o'), { code: 'EIO' }), 'a.log');
    expect(io).toMatchObject({ code: 'E_INPUT_UNUSABLE', message: 'a.log: cannot read it (EIO)' });
    const bug = new TypeError('not a file-system error');
    expect(describeReadError(bug, 'a.log')).toBe(bug);
    expect(isToolError(describeReadError(bug, 'a.log'))).toBe(false);
  });
});
