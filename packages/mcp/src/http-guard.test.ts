import { describe, expect, it } from 'vitest';
import { canonicalOrigin, hostName, originPolicy } from './http-guard.js';

describe('Origin policy', () => {
  it('allows no Origin and loopback origins on any port; refuses null and everything else', () => {
    const allowed = originPolicy();
    for (const ok of [
      undefined,
      'http://localhost',
      'http://localhost:5173',
      'https://127.0.0.1:8443',
      'http://[::1]:3000',
    ]) {
      expect(allowed(ok), String(ok)).toBe(true);
    }
    for (const bad of [
      'null',
      '',
      'https://attacker.example',
      'http://localhost.attacker.example',
      'http://127.0.0.1.nip.io',
      'ws://localhost:1234',
      'file://',
      'http://localhost:5173/path',
      'http://user@localhost',
      'not a url',
    ]) {
      expect(allowed(bad), bad).toBe(false);
    }
  });

  it('adds the configured origins, compared as serialised origins', () => {
    const allowed = originPolicy([
      canonicalOrigin('https://App.Example/'),
      canonicalOrigin('http://intranet:8080'),
    ]);
    expect(allowed('https://app.example')).toBe(true);
    expect(allowed('http://intranet:8080')).toBe(true);
    expect(allowed('http://app.example')).toBe(false);
    expect(allowed('https://app.example:444')).toBe(false);
    expect(allowed('http://intranet')).toBe(false);
    expect(() => canonicalOrigin('not an origin')).toThrow(TypeError);
    expect(() => canonicalOrigin('file:///x')).toThrow(TypeError);
  });

  it('reads the host name of a Host header', () => {
    expect(hostName('LocalHost:7337')).toBe('localhost');
    expect(hostName('[::1]:80')).toBe('[::1]');
    expect(hostName('127.0.0.1')).toBe('127.0.0.1');
    expect(hostName(undefined)).toBeUndefined();
    expect(hostName('bad host/x')).toBeUndefined();
  });
});
