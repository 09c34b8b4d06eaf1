import { describe, expect, it } from 'vitest';
import { isStartingOrUp, parseTimespanMs, parseUnitState } from './show.js';

describe('parseUnitState', () => {
  it('reads the properties spectune decides on', () => {
    const s = parseUnitState(
      'Id=llm.service\nLoadState=loaded\nActiveState=activating\nSubState=auto-restart\nResult=exit-code\nMainPID=0\nNRestarts=3\nTimeoutStopUSec=1min 30s\nRestart=always\nExecMainStatus=1\nDropInPaths=/a.conf /b.conf\n',
    );
    expect(s).toMatchObject({
      loadState: 'loaded',
      activeState: 'activating',
      subState: 'auto-restart',
      mainPid: null,
      nRestarts: 3,
      timeoutStopMs: 90_000,
      restart: 'always',
      execMainStatus: 1,
      dropInPaths: ['/a.conf', '/b.conf'],
    });
    expect(isStartingOrUp(s)).toBe(false);
    expect(isStartingOrUp({ ...s, subState: 'start' })).toBe(true);
  });
});

describe('parseTimespanMs', () => {
  it.each([
    ['1min 30s', 90_000],
    ['5s', 5000],
    ['500ms', 500],
    ['90', 90_000],
    ['infinity', Infinity],
    ['2h', 7_200_000],
    ['1min 30xs', null],
    ['', null],
  ])('%j -> %j', (text, ms) => {
    expect(parseTimespanMs(text)).toBe(ms);
  });
});
